package info

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

var defaults = []string{"server", "clients", "memory", "persistence", "stats", "replication",
	"cpu", "modules", "errorstats", "cluster", "keyspace"}

var every = []string{"server", "clients", "memory", "persistence", "stats", "replication",
	"cpu", "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace"}

func TestSelect(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, defaults},
		{[]string{"default"}, defaults},
		{[]string{"DEFAULT"}, defaults},
		{[]string{"all"}, every},
		{[]string{"everything"}, every},
		{[]string{"commandstats"}, []string{"commandstats"}},
		{[]string{"keyspace", "Server"}, []string{"server", "keyspace"}},
		{[]string{"default", "commandstats", "latencystats"}, every},
		{[]string{"latencystats"}, []string{"latencystats"}},
		{[]string{"nosuch"}, nil},
		{[]string{""}, nil},
		{[]string{"nosuch", "cpu"}, []string{"cpu"}},
	} {
		if got := Select(tc.args); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Select(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestRenderHeadersAndOrder(t *testing.T) {
	got := Render([]string{"keyspace", "modules", "nosuch", "cpu"}, &Data{})
	want := "# CPU\r\n\r\n# Modules\r\n\r\n# Keyspace\r\n"
	if got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	if got := Render(nil, &Data{}); got != "" {
		t.Errorf("Render(nil) = %q", got)
	}
}

func TestRenderSections(t *testing.T) {
	d := &Data{
		Server: Server{Version: "7.2.4", GitSHA1: "0123abcd", GitDirty: "1", BuildID: "feedface00112233", StreamdVersion: "0.12.0",
			StreamdGitSHA1: "0123abcd0123abcd0123abcd0123abcd0123abcd", ClusterEnabled: true, OS: "Linux 6.1 x86_64", GoVersion: "go1.26",
			ProcessID: 42, RunID: "abc", TCPPort: 6379, ServerTimeUsec: 1700000000000001,
			Uptime: 3*24*time.Hour + 5*time.Second + 300*time.Millisecond, Executable: "/bin/streamd"},
		Clients: Clients{Connected: 3, MaxClients: 10000, BlockedClients: 1},
		Memory: Memory{Used: 1536, Overhead: 1024, Startup: 1000, Dataset: 512, ClientsNormal: 20, ClusterLinks: 4, RSS: 3 << 20,
			Peak: 2048, Allocated: 1 << 20, Active: 2 << 20, Resident: 2 << 20, TotalSystem: 5 << 30, MaxMemory: 100 << 20},
		Persistence: Persistence{ChangesSinceSave: 7, BgsaveInProgress: true, LastSaveTime: 1700000000, LastBgsaveOK: false, LastBgsaveTimeSec: -1, CurrentBgsaveTimeSec: 2, Saves: 4, LastWriteOK: true, AppendFsync: "everysec", AppliedIndex: 99, GroupCommitBatches: 5, GroupCommitCommands: 20, GroupCommitMaxBatch: 8},
		Stats: Stats{ConnectionsReceived: 1, CommandsProcessed: 2, OpsPerSec: 3, RejectedConnections: 4, ErrorReplies: 5,
			NetInput: 6, NetOutput: 7, InputKbps: 0.125, OutputKbps: 1.5, ExpiredKeys: 8, KeyspaceHits: 9, KeyspaceMisses: 10},
		Replication: Replication{Master: true, Offset: 99,
			Slaves: []Slave{{ID: "n2", Host: "10.0.0.2", Port: 6380, Online: true}, {ID: "n3", Port: 0}},
			Shards: []Field{{"shards", "1"}, {"shard0", "role=leader"}}},
		CPU:          CPU{OK: true, Sys: Timeval{1, 5}, User: Timeval{0, 123456}},
		CommandStats: []CommandStat{{Name: "xgroup|create", Calls: 3, Usec: 10, Rejected: 1, Failed: 2}, {Name: "ping"}},
		ErrorStats:   []ErrorStat{{Name: "ERR", Count: 2}},
		LatencyStats: []LatencyStat{{Name: "xadd", Percentiles: []string{"50", "99", "99.9"}, Usec: []float64{21.119, 35.071, 1000}}},
		Cluster:      Cluster{Enabled: true, Clustered: true, NodeID: "n1"},
		Keyspace:     []DB{{Keys: 2, Expires: 1}, {}, {Keys: 5}},
	}
	want := strings.Join([]string{
		"# Server",
		"redis_version:7.2.4", "redis_git_sha1:0123abcd", "redis_git_dirty:1", "redis_build_id:feedface00112233", "redis_mode:cluster",
		"streamd_version:0.12.0", "streamd_git_sha1:0123abcd0123abcd0123abcd0123abcd0123abcd",
		"os:Linux 6.1 x86_64", "arch_bits:" + strconv.Itoa(strconv.IntSize), "multiplexing_api:go-netpoll", "go_version:go1.26",
		"process_id:42", "process_supervised:no", "run_id:abc", "tcp_port:6379",
		"server_time_usec:1700000000000001", "uptime_in_seconds:259205", "uptime_in_days:3",
		"executable:/bin/streamd", "config_file:",
		"", "# Clients",
		"connected_clients:3", "cluster_connections:0", "maxclients:10000", "blocked_clients:1",
		"", "# Memory",
		"used_memory:1536", "used_memory_human:1.50K", "used_memory_rss:3145728", "used_memory_rss_human:3.00M",
		"used_memory_peak:2048", "used_memory_peak_human:2.00K", "used_memory_peak_perc:75.00%",
		"used_memory_overhead:1024", "used_memory_startup:1000", "used_memory_dataset:512", "used_memory_dataset_perc:95.52%",
		"allocator_allocated:1048576", "allocator_active:2097152", "allocator_resident:2097152",
		"total_system_memory:5368709120", "total_system_memory_human:5.00G", "maxmemory:104857600",
		"maxmemory_human:100.00M", "maxmemory_policy:noeviction",
		"allocator_frag_ratio:2.00", "allocator_frag_bytes:1048576", "allocator_rss_ratio:1.00", "allocator_rss_bytes:0",
		"rss_overhead_ratio:1.50", "rss_overhead_bytes:1048576", "mem_fragmentation_ratio:2048.00",
		"mem_fragmentation_bytes:3144192", "mem_not_counted_for_evict:0", "mem_replication_backlog:0",
		"mem_total_replication_buffers:0", "mem_clients_slaves:0", "mem_clients_normal:20", "mem_cluster_links:4",
		"mem_aof_buffer:0", "mem_allocator:go",
		"", "# Persistence",
		"loading:0", "async_loading:0", "rdb_changes_since_last_save:7", "rdb_bgsave_in_progress:1",
		"rdb_last_save_time:1700000000", "rdb_last_bgsave_status:err", "rdb_last_bgsave_time_sec:-1",
		"rdb_current_bgsave_time_sec:2", "rdb_saves:4", "aof_enabled:1", "aof_rewrite_in_progress:0",
		"aof_rewrite_scheduled:0", "aof_last_rewrite_time_sec:-1", "aof_current_rewrite_time_sec:-1",
		"aof_last_bgrewrite_status:ok", "aof_last_write_status:ok", "aof_fsync:everysec",
		"raft_applied_index:99", "group_commit_batches:5", "group_commit_commands:20", "group_commit_max_batch:8",
		"", "# Stats",
		"total_connections_received:1", "total_commands_processed:2", "instantaneous_ops_per_sec:3",
		"total_net_input_bytes:6", "total_net_output_bytes:7", "instantaneous_input_kbps:0.12",
		"instantaneous_output_kbps:1.50", "rejected_connections:4", "expired_keys:8", "evicted_keys:0",
		"keyspace_hits:9", "keyspace_misses:10", "total_error_replies:5",
		"", "# Replication",
		"role:master", "connected_slaves:2",
		"slave0:ip=10.0.0.2,port=6380,state=online,id=n2", "slave1:ip=,port=0,state=offline,id=n3",
		"master_failover_state:no-failover", "master_repl_offset:99", "second_repl_offset:-1",
		"repl_backlog_active:0", "shards:1", "shard0:role=leader",
		"", "# CPU",
		"used_cpu_sys:1.000005", "used_cpu_user:0.123456",
		"", "# Modules",
		"", "# Commandstats",
		"cmdstat_xgroup|create:calls=3,usec=10,usec_per_call=3.33,rejected_calls=1,failed_calls=2",
		"cmdstat_ping:calls=0,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=0",
		"", "# Errorstats",
		"errorstat_ERR:count=2",
		"", "# Latencystats",
		"latency_percentiles_usec_xadd:p50=21.119,p99=35.071,p99.9=1000.000",
		"", "# Cluster",
		"cluster_enabled:1", "raft_clustered:1", "raft_node_id:n1",
		"", "# Keyspace",
		"db0:keys=2,expires=1,avg_ttl=0", "db2:keys=5,expires=0,avg_ttl=0",
		"",
	}, "\r\n")
	if got := Render(Select([]string{"everything"}), d); got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
}

func TestRenderSlaveAndStandalone(t *testing.T) {
	d := &Data{
		Server:      Server{Version: "7.2.4"},
		Replication: Replication{MasterHost: "10.0.0.1", MasterPort: 6379, MasterLinkUp: true, MasterID: "n1", Offset: 12},
		Cluster:     Cluster{NodeID: "hidden"},
	}
	got := Render([]string{"replication", "cluster"}, d)
	want := "# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\nmaster_port:6379\r\nmaster_link_status:up\r\n" +
		"master_id:n1\r\nmaster_sync_in_progress:0\r\nslave_repl_offset:12\r\nslave_read_only:1\r\nconnected_slaves:0\r\n" +
		"master_failover_state:no-failover\r\nmaster_repl_offset:12\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\n" +
		"\r\n# Cluster\r\ncluster_enabled:0\r\n"
	if got != want {
		t.Errorf("Render:\n%q\nwant:\n%q", got, want)
	}
	if s := Render([]string{"server"}, d); !strings.Contains(s, "\r\nredis_mode:standalone\r\n") {
		t.Errorf("standalone server section: %q", s)
	}
	d.Replication.MasterLinkUp = false
	if s := Render([]string{"replication"}, d); !strings.Contains(s, "\r\nmaster_link_status:down\r\n") {
		t.Errorf("link down: %q", s)
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0B", 1023: "1023B", 1024: "1.00K", 1536: "1.50K", 1 << 20: "1.00M",
		3 << 30: "3.00G", 1 << 40: "1.00T", 5 << 40: "5.00T",
	} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestProcessFacts(t *testing.T) {
	if len(RunID) != 40 || strings.Trim(RunID, "0123456789abcdef") != "" {
		t.Errorf("RunID = %q", RunID)
	}
	if os := Uname(); os == "" || strings.ContainsAny(os, "\x00\r\n") {
		t.Errorf("Uname = %q", os)
	}
	if m := ReadMemory(); m.Allocated == 0 || m.Active < m.Allocated || m.Resident < m.Active {
		t.Errorf("ReadMemory = %+v", m)
	}
	if p := NotePeak(1 << 40); p != 1<<40 || NotePeak(1) != 1<<40 {
		t.Errorf("NotePeak keeps %d", p)
	}
	// used_memory_rss is the kernel's resident set size, as
	// /proc/self/status's VmRSS says (within what a read in between moves).
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		var vmRSS uint64
		for _, l := range strings.Split(string(st), "\n") {
			if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				kb, _ := strconv.ParseUint(strings.Fields(rest)[0], 10, 64)
				vmRSS = kb * 1024
			}
		}
		m := ReadMemory()
		if m.RSS == 0 || float64(m.RSS) < 0.8*float64(vmRSS) || float64(m.RSS) > 1.25*float64(vmRSS) {
			t.Errorf("used_memory_rss %d, VmRSS %d", m.RSS, vmRSS)
		}
		if m.TotalSystem == 0 {
			t.Error("total_system_memory is 0 with /proc")
		}
	}
	if c := ReadCPU(); !c.OK || c.Sys.Usec >= 1e6 || c.User.Usec >= 1e6 {
		t.Errorf("ReadCPU = %+v", c)
	}
}

func TestWriteHelpers(t *testing.T) {
	var b strings.Builder
	WriteLine(&b, "a", "x y")
	WriteInt(&b, "b", -3)
	WriteBool(&b, "c", true)
	WriteBool(&b, "d", false)
	if got, want := b.String(), "a:x y\r\nb:-3\r\nc:1\r\nd:0\r\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
