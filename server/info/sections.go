package info

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

func writeServer(b *strings.Builder, d *Data) {
	s := d.Server
	WriteLine(b, "redis_version", s.Version)
	WriteLine(b, "redis_git_sha1", orDefault(s.GitSHA1, "00000000"))
	WriteLine(b, "redis_git_dirty", orDefault(s.GitDirty, "0"))
	WriteLine(b, "redis_build_id", s.BuildID)
	mode := "standalone"
	if s.ClusterEnabled {
		mode = "cluster"
	}
	WriteLine(b, "redis_mode", mode)
	WriteLine(b, "streamd_version", s.StreamdVersion)
	WriteLine(b, "streamd_git_sha1", s.StreamdGitSHA1)
	WriteLine(b, "os", s.OS)
	WriteInt(b, "arch_bits", int64(strconv.IntSize))
	WriteLine(b, "multiplexing_api", "go-netpoll")
	WriteLine(b, "go_version", s.GoVersion)
	WriteInt(b, "process_id", int64(s.ProcessID))
	WriteLine(b, "process_supervised", "no")
	WriteLine(b, "run_id", s.RunID)
	WriteInt(b, "tcp_port", int64(s.TCPPort))
	WriteInt(b, "server_time_usec", s.ServerTimeUsec)
	WriteInt(b, "uptime_in_seconds", int64(s.Uptime/time.Second))
	WriteInt(b, "uptime_in_days", int64(s.Uptime/(24*time.Hour)))
	WriteLine(b, "executable", s.Executable)
	WriteLine(b, "config_file", "")
}

func writeClients(b *strings.Builder, d *Data) {
	c := d.Clients
	WriteInt(b, "connected_clients", int64(c.Connected))
	WriteInt(b, "cluster_connections", int64(c.ClusterConnections))
	WriteInt(b, "maxclients", int64(c.MaxClients))
	WriteInt(b, "blocked_clients", c.BlockedClients)
}

func writeMemory(b *strings.Builder, d *Data) {
	m := d.Memory
	peak := max(m.Peak, m.Used)
	WriteInt(b, "used_memory", int64(m.Used))
	WriteLine(b, "used_memory_human", humanBytes(m.Used))
	WriteInt(b, "used_memory_rss", int64(m.RSS))
	WriteLine(b, "used_memory_rss_human", humanBytes(m.RSS))
	WriteInt(b, "used_memory_peak", int64(peak))
	WriteLine(b, "used_memory_peak_human", humanBytes(peak))
	WriteLine(b, "used_memory_peak_perc", fmt.Sprintf("%.2f%%", pct(m.Used, peak)))
	WriteInt(b, "used_memory_overhead", int64(m.Overhead))
	WriteInt(b, "used_memory_startup", int64(m.Startup))
	WriteInt(b, "used_memory_dataset", int64(m.Dataset))
	// Redis's dataset share: of what the server holds beyond start-up.
	WriteLine(b, "used_memory_dataset_perc", fmt.Sprintf("%.2f%%", pct(m.Dataset, m.Used-min(m.Used, m.Startup))))
	WriteInt(b, "allocator_allocated", int64(m.Allocated))
	WriteInt(b, "allocator_active", int64(m.Active))
	WriteInt(b, "allocator_resident", int64(m.Resident))
	WriteInt(b, "total_system_memory", int64(m.TotalSystem))
	WriteLine(b, "total_system_memory_human", humanBytes(m.TotalSystem))
	WriteInt(b, "maxmemory", int64(m.MaxMemory))
	WriteLine(b, "maxmemory_human", humanBytes(m.MaxMemory))
	WriteLine(b, "maxmemory_policy", "noeviction")
	WriteLine(b, "allocator_frag_ratio", fmt.Sprintf("%.2f", ratio(m.Active, m.Allocated)))
	WriteInt(b, "allocator_frag_bytes", int64(m.Active)-int64(m.Allocated))
	WriteLine(b, "allocator_rss_ratio", fmt.Sprintf("%.2f", ratio(m.Resident, m.Active)))
	WriteInt(b, "allocator_rss_bytes", int64(m.Resident)-int64(m.Active))
	WriteLine(b, "rss_overhead_ratio", fmt.Sprintf("%.2f", ratio(m.RSS, m.Resident)))
	WriteInt(b, "rss_overhead_bytes", int64(m.RSS)-int64(m.Resident))
	// Redis's mem_fragmentation_ratio: RSS over used_memory.
	WriteLine(b, "mem_fragmentation_ratio", fmt.Sprintf("%.2f", ratio(m.RSS, m.Used)))
	WriteInt(b, "mem_fragmentation_bytes", int64(m.RSS)-int64(m.Used))
	// streamd has no replication backlog, replica buffers or AOF buffer
	// (the Raft log, on disk or in a memory log store, is not counted):
	// nothing is left out of the maxmemory check.
	WriteInt(b, "mem_not_counted_for_evict", 0)
	WriteInt(b, "mem_replication_backlog", 0)
	WriteInt(b, "mem_total_replication_buffers", 0)
	WriteInt(b, "mem_clients_slaves", 0)
	WriteInt(b, "mem_clients_normal", int64(m.ClientsNormal))
	WriteInt(b, "mem_cluster_links", int64(m.ClusterLinks))
	WriteInt(b, "mem_aof_buffer", 0)
	WriteLine(b, "mem_allocator", "go")
}

// ratio is a/b (0 when b is 0).
func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// pct is a/b in percent (0 when b is 0).
func pct(a, b uint64) float64 { return 100 * ratio(a, b) }

// humanBytes is Redis's bytesToHuman ("1.50M").
func humanBytes(n uint64) string {
	f := float64(n)
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", f/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", f/(1<<20))
	case n < 1<<40:
		return fmt.Sprintf("%.2fG", f/(1<<30))
	default:
		return fmt.Sprintf("%.2fT", f/(1<<40))
	}
}

// writePersistence reports the shards' snapshots ("rdb_*": streamd's RDB is
// the Raft snapshot) and logs ("aof_*": the Raft log, always on), with
// Redis's field names so tools that read them keep working, plus streamd's
// own figures (log index, fsync policy, group commit) at the end.
func writePersistence(b *strings.Builder, d *Data) {
	p := d.Persistence
	status := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "err"
	}
	WriteInt(b, "loading", 0)
	WriteInt(b, "async_loading", 0)
	WriteInt(b, "rdb_changes_since_last_save", p.ChangesSinceSave)
	WriteBool(b, "rdb_bgsave_in_progress", p.BgsaveInProgress)
	WriteInt(b, "rdb_last_save_time", p.LastSaveTime)
	WriteLine(b, "rdb_last_bgsave_status", status(p.LastBgsaveOK))
	WriteInt(b, "rdb_last_bgsave_time_sec", p.LastBgsaveTimeSec)
	WriteInt(b, "rdb_current_bgsave_time_sec", p.CurrentBgsaveTimeSec)
	WriteInt(b, "rdb_saves", p.Saves)
	WriteInt(b, "aof_enabled", 1)
	WriteInt(b, "aof_rewrite_in_progress", 0)
	WriteInt(b, "aof_rewrite_scheduled", 0)
	WriteInt(b, "aof_last_rewrite_time_sec", -1)
	WriteInt(b, "aof_current_rewrite_time_sec", -1)
	WriteLine(b, "aof_last_bgrewrite_status", "ok")
	WriteLine(b, "aof_last_write_status", status(p.LastWriteOK))
	WriteLine(b, "aof_fsync", p.AppendFsync)
	WriteInt(b, "raft_applied_index", p.AppliedIndex)
	WriteInt(b, "group_commit_batches", p.GroupCommitBatches)
	WriteInt(b, "group_commit_commands", p.GroupCommitCommands)
	WriteInt(b, "group_commit_max_batch", p.GroupCommitMaxBatch)
}

func writeStats(b *strings.Builder, d *Data) {
	s := d.Stats
	WriteInt(b, "total_connections_received", s.ConnectionsReceived)
	WriteInt(b, "total_commands_processed", s.CommandsProcessed)
	WriteInt(b, "instantaneous_ops_per_sec", s.OpsPerSec)
	WriteInt(b, "total_net_input_bytes", s.NetInput)
	WriteInt(b, "total_net_output_bytes", s.NetOutput)
	WriteLine(b, "instantaneous_input_kbps", fmt.Sprintf("%.2f", s.InputKbps))
	WriteLine(b, "instantaneous_output_kbps", fmt.Sprintf("%.2f", s.OutputKbps))
	WriteInt(b, "rejected_connections", s.RejectedConnections)
	WriteInt(b, "expired_keys", s.ExpiredKeys)
	WriteInt(b, "evicted_keys", 0) // no maxmemory, no eviction
	WriteInt(b, "keyspace_hits", s.KeyspaceHits)
	WriteInt(b, "keyspace_misses", s.KeyspaceMisses)
	WriteInt(b, "total_error_replies", s.ErrorReplies)
}

// writeReplication: a master lists its slaves (state online or offline), a
// slave names its master (master_link_status up while it is known and
// reachable); then the offsets and streamd's shard lines.
func writeReplication(b *strings.Builder, d *Data) {
	r := d.Replication
	if r.Master {
		WriteLine(b, "role", "master")
		WriteInt(b, "connected_slaves", int64(len(r.Slaves)))
		for i, m := range r.Slaves {
			state := "online"
			if !m.Online {
				state = "offline"
			}
			WriteLine(b, "slave"+strconv.Itoa(i), "ip="+m.Host+",port="+strconv.Itoa(m.Port)+",state="+state+",id="+m.ID)
		}
	} else {
		WriteLine(b, "role", "slave")
		link := "up"
		if !r.MasterLinkUp {
			link = "down"
		}
		WriteLine(b, "master_host", r.MasterHost)
		WriteInt(b, "master_port", int64(r.MasterPort))
		WriteLine(b, "master_link_status", link)
		WriteLine(b, "master_id", r.MasterID)
		WriteInt(b, "master_sync_in_progress", 0)
		WriteInt(b, "slave_repl_offset", r.Offset)
		WriteInt(b, "slave_read_only", 1)
		WriteInt(b, "connected_slaves", 0)
	}
	WriteLine(b, "master_failover_state", "no-failover")
	WriteInt(b, "master_repl_offset", r.Offset)
	WriteInt(b, "second_repl_offset", -1)
	WriteInt(b, "repl_backlog_active", 0)
	for _, f := range r.Shards {
		WriteLine(b, f.Name, f.Value)
	}
}

// writeCluster: cluster_enabled 1 in cluster mode (Redis's field), then
// whether this node is a Raft cluster member and its ID.
func writeCluster(b *strings.Builder, d *Data) {
	c := d.Cluster
	WriteBool(b, "cluster_enabled", c.Enabled)
	if c.Clustered {
		WriteInt(b, "raft_clustered", 1)
		WriteLine(b, "raft_node_id", c.NodeID)
	}
}

func writeCPU(b *strings.Builder, d *Data) {
	c := d.CPU
	if !c.OK {
		return
	}
	tv := func(t Timeval) string { return fmt.Sprintf("%d.%06d", t.Sec, t.Usec) }
	WriteLine(b, "used_cpu_sys", tv(c.Sys))
	WriteLine(b, "used_cpu_user", tv(c.User))
}

// writeCommandStats: cmdstat_<name> with "|" kept, as Redis 7 names
// subcommands ("cmdstat_xgroup|create").
func writeCommandStats(b *strings.Builder, d *Data) {
	for _, cs := range d.CommandStats {
		perCall := 0.0
		if cs.Calls > 0 {
			perCall = float64(cs.Usec) / float64(cs.Calls)
		}
		WriteLine(b, "cmdstat_"+cs.Name, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
			cs.Calls, cs.Usec, perCall, cs.Rejected, cs.Failed))
	}
}

// writeLatencyStats: latency_percentiles_usec_<name> with each percentile
// as Redis prints it ("p%s=%.3f", the name without trailing zeros).
func writeLatencyStats(b *strings.Builder, d *Data) {
	for _, l := range d.LatencyStats {
		var sb strings.Builder
		for i, p := range l.Percentiles {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "p%s=%.3f", p, l.Usec[i])
		}
		WriteLine(b, "latency_percentiles_usec_"+l.Name, sb.String())
	}
}

func writeErrorStats(b *strings.Builder, d *Data) {
	for _, e := range d.ErrorStats {
		WriteLine(b, "errorstat_"+e.Name, "count="+strconv.FormatInt(e.Count, 10))
	}
}

// writeKeyspace lists databases that hold keys, as
// "db0:keys=1,expires=0,avg_ttl=0". streamd does not track average TTLs,
// so avg_ttl is 0.
func writeKeyspace(b *strings.Builder, d *Data) {
	for i, db := range d.Keyspace {
		if db.Keys == 0 {
			continue
		}
		WriteLine(b, "db"+strconv.Itoa(i), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", db.Keys, db.Expires))
	}
}

// orDefault is v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
