package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"streamd/replication"
	"streamd/replication/state"
	"streamd/server/router"
)

// infoSections are INFO's sections in Redis's order; "default" marks those
// INFO without arguments (and "default") shows, "all" adds commandstats.
var infoSections = []struct {
	name    string
	title   string
	dflt    bool
	produce func(s *Server, b *strings.Builder)
}{
	{"server", "Server", true, (*Server).infoServer},
	{"clients", "Clients", true, (*Server).infoClients},
	{"memory", "Memory", true, (*Server).infoMemory},
	{"persistence", "Persistence", true, (*Server).infoPersistence},
	{"stats", "Stats", true, (*Server).infoStats},
	{"replication", "Replication", true, (*Server).infoReplication},
	{"cpu", "CPU", true, (*Server).infoCPU},
	{"modules", "Modules", true, func(*Server, *strings.Builder) {}},
	{"commandstats", "Commandstats", false, (*Server).infoCommandStats},
	{"errorstats", "Errorstats", true, (*Server).infoErrorStats},
	{"cluster", "Cluster", true, (*Server).infoCluster},
	{"keyspace", "Keyspace", true, (*Server).infoKeyspace},
}

// runID is INFO's run_id: 40 random hex characters per process, as Redis.
var runID = func() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// cmdINFO is INFO [section ...]: a bulk string in RESP2, a verbatim string
// in RESP3, sections in Redis's order separated by a blank line; an unknown
// section is simply absent.
func (s *Server) cmdINFO(c *Client, args [][]byte) Reply {
	want := map[string]bool{}
	all, everything := false, false
	if len(args) == 1 {
		want["default"] = true
	}
	for _, a := range args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all = want["all"]
	everything = want["everything"]
	var b strings.Builder
	for _, sec := range infoSections {
		if !(everything || all || want[sec.name] || (want["default"] && sec.dflt)) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + sec.title + "\r\n")
		sec.produce(s, &b)
	}
	return Verbatim(b.String())
}

func infoLine(b *strings.Builder, k, v string) {
	b.WriteString(k)
	b.WriteByte(':')
	b.WriteString(v)
	b.WriteString("\r\n")
}

func infoInt(b *strings.Builder, k string, v int64) { infoLine(b, k, strconv.FormatInt(v, 10)) }

func (s *Server) infoServer(b *strings.Builder) {
	cfg := s.config()
	var uts syscall.Utsname
	osName := runtime.GOOS
	if syscall.Uname(&uts) == nil {
		osName = utsString(uts.Sysname[:]) + " " + utsString(uts.Release[:]) + " " + utsString(uts.Machine[:])
	}
	uptime := time.Since(s.startTime)
	exe, _ := os.Executable()
	infoLine(b, "redis_version", serverVersion)
	infoLine(b, "redis_git_sha1", "00000000")
	infoLine(b, "redis_git_dirty", "0")
	mode := "standalone"
	if cfg.ClusterEnabled {
		mode = "cluster"
	}
	infoLine(b, "redis_mode", mode)
	infoLine(b, "os", osName)
	infoInt(b, "arch_bits", int64(strconv.IntSize))
	infoLine(b, "multiplexing_api", "go-netpoll")
	infoLine(b, "go_version", runtime.Version())
	infoInt(b, "process_id", int64(os.Getpid()))
	infoLine(b, "process_supervised", "no")
	infoLine(b, "run_id", runID)
	infoInt(b, "tcp_port", int64(cfg.Port))
	infoInt(b, "server_time_usec", time.Now().UnixMicro())
	infoInt(b, "uptime_in_seconds", int64(uptime/time.Second))
	infoInt(b, "uptime_in_days", int64(uptime/(24*time.Hour)))
	infoLine(b, "executable", exe)
	infoLine(b, "config_file", "")
}

// utsString converts a NUL-terminated utsname field.
func utsString[T int8 | uint8](f []T) string {
	var sb strings.Builder
	for _, ch := range f {
		if ch == 0 {
			break
		}
		sb.WriteByte(byte(ch))
	}
	return sb.String()
}

func (s *Server) infoClients(b *strings.Builder) {
	s.mu.Lock()
	n := len(s.clients)
	s.mu.Unlock()
	infoInt(b, "connected_clients", int64(n))
	infoInt(b, "cluster_connections", 0)
	infoInt(b, "maxclients", int64(s.config().MaxClients))
	infoInt(b, "blocked_clients", s.stats.BlockedClients.Load())
}

func (s *Server) infoMemory(b *strings.Builder) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	infoInt(b, "used_memory", int64(m.HeapAlloc))
	infoLine(b, "used_memory_human", humanBytes(m.HeapAlloc))
	infoInt(b, "used_memory_rss", int64(m.Sys))
	infoLine(b, "used_memory_rss_human", humanBytes(m.Sys))
	infoInt(b, "used_memory_peak", int64(m.HeapSys))
	infoLine(b, "used_memory_peak_human", humanBytes(m.HeapSys))
	infoInt(b, "total_system_memory", 0)
	infoInt(b, "maxmemory", 0)
	infoLine(b, "maxmemory_human", "0B")
	infoLine(b, "maxmemory_policy", "noeviction")
	infoLine(b, "mem_allocator", "go")
}

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

// localStats sums the persistence state over this node's shards: counts
// add up, a save in progress or a failure anywhere shows, the last save
// time is the oldest shard's (every shard has saved since then), and the
// single-valued indexes are shard 0's (per-shard figures are in INFO
// replication's shard<i> lines).
func (s *Server) localStats() replication.Stats {
	st := s.node.Shard(0).Stats()
	for i := 1; i < s.node.NumShards(); i++ {
		o := s.node.Shard(i).Stats()
		st.ChangesSinceSave += o.ChangesSinceSave
		st.Saves += o.Saves
		st.SaveInProgress = st.SaveInProgress || o.SaveInProgress
		st.LastSaveOK = st.LastSaveOK && o.LastSaveOK
		if st.LastSaveErr == "" {
			st.LastSaveErr = o.LastSaveErr
		}
		if st.LastWriteErr == "" {
			st.LastWriteErr = o.LastWriteErr
		}
		st.WriteErrors += o.WriteErrors
		st.LastSaveUnix = min(st.LastSaveUnix, o.LastSaveUnix)
		st.Batches += o.Batches
		st.Proposals += o.Proposals
	}
	return st
}

// infoPersistence reports the shards' snapshots ("rdb_*": streamd's RDB is
// the Raft snapshot) and logs ("aof_*": the Raft log, always on), with
// Redis's field names so tools that read them keep working, plus streamd's
// own figures (log index, fsync policy, group commit) at the end. With
// several shards the figures are summed over this node's shards (see
// localStats).
func (s *Server) infoPersistence(b *strings.Builder) {
	st := s.localStats()
	bgRunning, bgCurrent, bgOK, bgLast := s.persist.bgsaveInfo()
	lastSave := st.LastSaveUnix
	if lastSave <= 0 {
		lastSave = s.startTime.Unix()
	}
	status := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "err"
	}
	infoInt(b, "loading", 0)
	infoInt(b, "async_loading", 0)
	infoInt(b, "rdb_changes_since_last_save", int64(st.ChangesSinceSave))
	infoInt(b, "rdb_bgsave_in_progress", boolInt(bgRunning || st.SaveInProgress))
	infoInt(b, "rdb_last_save_time", lastSave)
	infoLine(b, "rdb_last_bgsave_status", status(bgOK && st.LastSaveOK))
	infoInt(b, "rdb_last_bgsave_time_sec", bgLast)
	infoInt(b, "rdb_current_bgsave_time_sec", bgCurrent)
	infoInt(b, "rdb_saves", st.Saves)
	infoInt(b, "aof_enabled", 1)
	infoInt(b, "aof_rewrite_in_progress", 0)
	infoInt(b, "aof_rewrite_scheduled", 0)
	infoInt(b, "aof_last_rewrite_time_sec", -1)
	infoInt(b, "aof_current_rewrite_time_sec", -1)
	infoLine(b, "aof_last_bgrewrite_status", "ok")
	infoLine(b, "aof_last_write_status", status(st.LastWriteErr == ""))
	infoLine(b, "aof_fsync", s.config().AppendFsync)
	infoInt(b, "raft_applied_index", int64(st.AppliedIndex))
	infoInt(b, "group_commit_batches", s.persist.batches.Load())
	infoInt(b, "group_commit_commands", s.persist.batchedCmd.Load())
	infoInt(b, "group_commit_max_batch", s.persist.maxBatch.Load())
}

// boolInt is INFO's 0/1.
func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

func (s *Server) infoStats(b *strings.Builder) {
	st := s.stats
	infoInt(b, "total_connections_received", st.ConnectionsReceived.Load())
	infoInt(b, "total_commands_processed", st.CommandsProcessed.Load())
	infoInt(b, "instantaneous_ops_per_sec", st.OpsPerSec())
	infoInt(b, "rejected_connections", st.RejectedConnections.Load())
	infoInt(b, "total_error_replies", st.ErrorReplies.Load())
}

// infoReplication maps the shards' Raft roles onto Redis's fields. The node
// is "master" when it leads shard 0 (with one shard: when it leads); its
// other voters are its
// "slaves" (state online when they answer, offline otherwise). Otherwise it
// is a "slave" of shard 0's leader (master_host/master_port: that node's
// client address; master_link_status up while a leader is known and
// reachable). master_repl_offset is shard 0's applied index here. streamd
// adds "shards" and one shard<i> line per shard (role, term, leader, slot
// range, commit/applied/last log/last snapshot index, voters).
func (s *Server) infoReplication(b *strings.Builder) {
	applied := int64(s.node.Shard(0).Info().AppliedIndex)
	if s.node.Shard(0).IsLeader() {
		infoLine(b, "role", "master")
		var slaves []router.Member
		if ms, err := s.node.Shard(0).Members(); err == nil {
			for _, m := range ms {
				if m.Voter && m.ID != s.nodeID() {
					slaves = append(slaves, s.member(nil, m.ID, m.RaftAddr))
				}
			}
		}
		infoInt(b, "connected_slaves", int64(len(slaves)))
		for i, m := range slaves {
			state := "online"
			if !m.OK {
				state = "offline"
			}
			infoLine(b, "slave"+strconv.Itoa(i), "ip="+m.Host+",port="+strconv.Itoa(m.Port)+",state="+state+",id="+m.ID)
		}
	} else {
		infoLine(b, "role", "slave")
		id, addr := s.node.Leader(0)
		var m router.Member
		if id != "" {
			m = s.member(nil, id, addr)
		}
		link := "up"
		if !m.OK {
			link = "down"
		}
		infoLine(b, "master_host", m.Host)
		infoInt(b, "master_port", int64(m.Port))
		infoLine(b, "master_link_status", link)
		infoLine(b, "master_id", id)
		infoInt(b, "master_sync_in_progress", 0)
		infoInt(b, "slave_repl_offset", applied)
		infoInt(b, "slave_read_only", 1)
		infoInt(b, "connected_slaves", 0)
	}
	infoLine(b, "master_failover_state", "no-failover")
	infoInt(b, "master_repl_offset", applied)
	infoInt(b, "second_repl_offset", -1)
	infoInt(b, "repl_backlog_active", 0)
	s.shardLines(b)
}

// infoCluster is INFO cluster: cluster_enabled 1 in cluster mode (Redis's
// field), then whether this node is a Raft cluster member and its ID.
func (s *Server) infoCluster(b *strings.Builder) {
	infoInt(b, "cluster_enabled", boolInt(s.config().ClusterEnabled))
	if s.node.Clustered() {
		infoInt(b, "raft_clustered", 1)
		infoLine(b, "raft_node_id", s.nodeID())
	}
}

func (s *Server) infoCPU(b *strings.Builder) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return
	}
	tv := func(t syscall.Timeval) string {
		return fmt.Sprintf("%d.%06d", int64(t.Sec), int64(t.Usec))
	}
	infoLine(b, "used_cpu_sys", tv(ru.Stime))
	infoLine(b, "used_cpu_user", tv(ru.Utime))
}

// infoCommandStats: cmdstat_<name> with "|" kept, as Redis 7 names
// subcommands ("cmdstat_xgroup|create").
func (s *Server) infoCommandStats(b *strings.Builder) {
	for _, cs := range s.stats.CommandStats() {
		perCall := 0.0
		if cs.Calls > 0 {
			perCall = float64(cs.Usec) / float64(cs.Calls)
		}
		infoLine(b, "cmdstat_"+cs.Name, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
			cs.Calls, cs.Usec, perCall, cs.Rejected, cs.Failed))
	}
}

func (s *Server) infoErrorStats(b *strings.Builder) {
	for _, e := range s.stats.ErrorStats() {
		infoLine(b, "errorstat_"+e.Name, "count="+strconv.FormatInt(e.Count, 10))
	}
}

// infoKeyspace lists databases that hold keys, as "db0:keys=1,expires=0,avg_ttl=0".
// streamd does not track average TTLs, so avg_ttl is 0.
func (s *Server) infoKeyspace(b *strings.Builder) {
	res, err := s.keyspaceInfo()
	if err != nil {
		return
	}
	dbs, _ := res.([]state.DBInfo)
	for i, d := range dbs {
		if d.Keys == 0 {
			continue
		}
		infoLine(b, "db"+strconv.Itoa(i), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", d.Keys, d.Expires))
	}
}
