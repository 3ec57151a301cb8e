// Package info renders the INFO command's text from plain data: the
// section table in Redis's order, the selection rules (no argument or
// "default", "all", "everything", any list of section names), the
// "# Section" headers and "field:value" CRLF lines, and each section's
// fields from a Data snapshot.
//
// The server gathers the Data (it owns the clients, shards and
// configuration), filling only the sections Select returns, and hands it to
// Render; process-wide facts (uname, memory, CPU time, the run ID) are read
// here. info imports no streamd package.
package info

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Data is one INFO snapshot: a value per section. Only the sections being
// rendered need to be filled.
type Data struct {
	Server       Server
	Clients      Clients
	Memory       Memory
	Persistence  Persistence
	Stats        Stats
	Replication  Replication
	CPU          CPU
	CommandStats []CommandStat
	ErrorStats   []ErrorStat
	LatencyStats []LatencyStat
	Cluster      Cluster
	// Keyspace is one entry per database, indexed by number; databases
	// without keys are not listed.
	Keyspace []DB
}

// Server is INFO server.
type Server struct {
	Version string // redis_version
	// GitSHA1 is redis_git_sha1: the first 8 hex digits of the streamd
	// commit built ("" = unknown: Redis's 00000000).
	GitSHA1 string
	// GitDirty is redis_git_dirty: "1" if built from a modified tree.
	GitDirty string
	// BuildID is redis_build_id: what identifies this build.
	BuildID string
	// StreamdVersion is streamd_version: streamd's own release.
	StreamdVersion string
	// StreamdGitSHA1 is streamd_git_sha1: the full commit ("" = unknown).
	StreamdGitSHA1 string
	ClusterEnabled bool   // redis_mode: cluster, else standalone
	OS             string // "Linux 6.1.0 x86_64" (Uname)
	GoVersion      string
	ProcessID      int
	RunID          string
	TCPPort        int
	ServerTimeUsec int64         // wall clock, unix microseconds
	Uptime         time.Duration // since the server started
	Executable     string
}

// Clients is INFO clients.
type Clients struct {
	Connected int // clients, other nodes' connections excluded
	// ClusterConnections is cluster_connections: other nodes' internal
	// RESP connections (forwarded commands).
	ClusterConnections int
	MaxClients         int
	BlockedClients     int64
}

// Memory is INFO memory. The server fills the accounting (Used, Overhead,
// Startup, Dataset, the clients' buffers: its memory accounting of what the
// keyspace and the clients hold) and Peak (NotePeak); ReadMemory fills the
// process's figures (RSS, the Go allocator's, the machine's).
type Memory struct {
	Used          uint64 // used_memory: the accounting's total (overhead + dataset)
	Overhead      uint64 // used_memory_overhead: startup, clients, key tables
	Startup       uint64 // used_memory_startup: the Go heap in use when the server started
	Dataset       uint64 // used_memory_dataset: what the keys hold beyond their tables
	ClientsNormal uint64 // mem_clients_normal: output queued for clients
	ClusterLinks  uint64 // mem_cluster_links: output queued for other nodes' connections
	Peak          uint64 // used_memory_peak: the greatest used_memory seen (NotePeak)
	RSS           uint64 // used_memory_rss: resident set size (/proc/self/statm); 0 if unknown
	// Allocated, Active and Resident are the Go heap's bytes in objects,
	// in spans in use, and held from the OS (Redis's allocator_* figures).
	Allocated, Active, Resident uint64
	TotalSystem                 uint64 // total_system_memory (/proc/meminfo MemTotal); 0 if unknown
	MaxMemory                   uint64 // maxmemory (0: no limit); the server fills it in
}

// Persistence is INFO persistence: the shards' snapshots (rdb_*) and logs
// (aof_*), plus streamd's log index and group commit figures.
type Persistence struct {
	ChangesSinceSave     int64
	BgsaveInProgress     bool
	LastSaveTime         int64 // unix seconds
	LastBgsaveOK         bool
	LastBgsaveTimeSec    int64
	CurrentBgsaveTimeSec int64
	Saves                int64
	LastWriteOK          bool
	AppendFsync          string
	AppliedIndex         int64
	GroupCommitBatches   int64
	GroupCommitCommands  int64
	GroupCommitMaxBatch  int64
}

// Stats is INFO stats.
type Stats struct {
	ConnectionsReceived int64
	CommandsProcessed   int64
	OpsPerSec           int64
	NetInput, NetOutput int64   // total_net_input_bytes, total_net_output_bytes
	InputKbps           float64 // instantaneous_input_kbps
	OutputKbps          float64 // instantaneous_output_kbps
	RejectedConnections int64
	ExpiredKeys         int64
	KeyspaceHits        int64
	KeyspaceMisses      int64
	ErrorReplies        int64
}

// LatencyStat is one latency_percentiles_usec_<name> line: percentile
// names ("50", "99.9") and their values in microseconds.
type LatencyStat struct {
	Name        string
	Percentiles []string
	Usec        []float64
}

// Replication is INFO replication: a master lists its Slaves, a slave
// names its master; Offset is master_repl_offset (and slave_repl_offset);
// Shards are streamd's "shards" and "shard<i>" lines, written last.
type Replication struct {
	Master       bool
	Slaves       []Slave
	MasterHost   string
	MasterPort   int
	MasterLinkUp bool
	MasterID     string
	Offset       int64
	Shards       []Field
}

// Slave is one "slave<i>" line of a master.
type Slave struct {
	ID, Host string
	Port     int
	Online   bool
}

// Field is one "name:value" line.
type Field struct {
	Name, Value string
}

// CPU is INFO cpu (ReadCPU); when OK is false the section is empty.
type CPU struct {
	OK        bool
	Sys, User Timeval
}

// Timeval is a CPU time as rusage gives it.
type Timeval struct {
	Sec, Usec int64
}

// CommandStat is one cmdstat_<name> line; Name keeps Redis 7's "|" for
// subcommands ("xgroup|create").
type CommandStat struct {
	Name                          string
	Calls, Usec, Rejected, Failed int64
}

// ErrorStat is one errorstat_<code> line.
type ErrorStat struct {
	Name  string
	Count int64
}

// Cluster is INFO cluster.
type Cluster struct {
	Enabled   bool   // cluster_enabled
	Clustered bool   // raft_clustered and raft_node_id shown
	NodeID    string // raft_node_id
}

// DB is one database's key counts.
type DB struct {
	Keys, Expires int64
}

// sections are INFO's sections in Redis's order; dflt marks those INFO
// without arguments (and "default") shows, "all" adds commandstats.
var sections = []struct {
	name, title string
	dflt        bool
	write       func(b *strings.Builder, d *Data)
}{
	{"server", "Server", true, writeServer},
	{"clients", "Clients", true, writeClients},
	{"memory", "Memory", true, writeMemory},
	{"persistence", "Persistence", true, writePersistence},
	{"stats", "Stats", true, writeStats},
	{"replication", "Replication", true, writeReplication},
	{"cpu", "CPU", true, writeCPU},
	{"modules", "Modules", true, func(*strings.Builder, *Data) {}},
	{"commandstats", "Commandstats", false, writeCommandStats},
	{"errorstats", "Errorstats", true, writeErrorStats},
	{"latencystats", "Latencystats", false, writeLatencyStats},
	{"cluster", "Cluster", true, writeCluster},
	{"keyspace", "Keyspace", true, writeKeyspace},
}

// Select returns the sections INFO shows for its arguments, by name in
// Redis's order: no argument is "default" (every section but
// commandstats and latencystats), "all" and "everything" are every section, names are
// case-insensitive and an unknown one is simply absent.
func Select(args []string) []string {
	want := map[string]bool{}
	if len(args) == 0 {
		want["default"] = true
	}
	for _, a := range args {
		want[strings.ToLower(a)] = true
	}
	every := want["all"] || want["everything"]
	var out []string
	for _, sec := range sections {
		if every || want[sec.name] || (want["default"] && sec.dflt) {
			out = append(out, sec.name)
		}
	}
	return out
}

// Render writes the named sections of d in Redis's order, each as a
// "# Title" header and its lines, separated by a blank line; every line
// ends in CRLF. Names not in INFO's table are ignored.
func Render(names []string, d *Data) string {
	var b strings.Builder
	for _, sec := range sections {
		if !slices.Contains(names, sec.name) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + sec.title + "\r\n")
		sec.write(&b, d)
	}
	return b.String()
}

// WriteLine writes one INFO line, "k:v\r\n".
func WriteLine(b *strings.Builder, k, v string) {
	b.WriteString(k)
	b.WriteByte(':')
	b.WriteString(v)
	b.WriteString("\r\n")
}

// WriteInt writes an integer INFO line.
func WriteInt(b *strings.Builder, k string, v int64) { WriteLine(b, k, strconv.FormatInt(v, 10)) }

// WriteBool writes a flag as INFO's 0 or 1.
func WriteBool(b *strings.Builder, k string, v bool) { WriteInt(b, k, boolInt(v)) }

// boolInt is INFO's 0/1.
func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}
