// Package metrics owns streamd's Prometheus exposition: the registry, the
// collectors that read the server's and the shards' figures at scrape time,
// the operators' HTTP endpoints (/metrics, /healthz, /readyz; Handler), and
// the lock-free counters the command path records into (Stats: commandstats,
// errorstats, the per-command latency histogram, connection counts, ops/sec).
//
// It does not import package server: the server hands Handler its Stats and
// a Source, which answers what only the server knows.
package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"streamd/replication"
	"streamd/replication/state"
)

// Source is what the collectors and /readyz read from the server at scrape
// time, beyond its Stats.
type Source interface {
	// ConnectedClients returns the client connections open now.
	ConnectedClients() int
	// Shards returns this node's local shards in order (shard i at index
	// i), or nil when the server has no shard: then only the Stats and
	// client figures are exported.
	Shards() []*replication.Shard
	// Keyspace returns INFO keyspace's per-database counts (index = db).
	Keyspace() ([]state.DBInfo, error)
	// MaxStreams returns the metrics-max-streams cap in force.
	MaxStreams() int
	// Ready returns why the server is not ready to serve, or "" when it is
	// (the /readyz answer).
	Ready() string
}

// maxErrorPrefixes caps the distinct error-prefix label values
// streamd_errors_total exports (Redis caps errorstats at 128 the same way);
// the rest, and any prefix that does not look like an error code, are summed
// under "other".
const maxErrorPrefixes = 64

// Metric descriptions. Every figure is read at scrape time from the counters
// the server already keeps for INFO (Stats) and from the shards, so the
// command path pays nothing for metrics but its Stats.
var (
	descCommands = prometheus.NewDesc("streamd_commands_total",
		"Commands executed, by command (subcommands as \"xgroup|create\"; INFO commandstats calls).",
		[]string{"cmd"}, nil)
	descCommandErrors = prometheus.NewDesc("streamd_command_errors_total",
		"Commands that replied an error, by command and kind: \"failed\" ran and failed, \"rejected\" was refused before running (arity, NOAUTH, ...).",
		[]string{"cmd", "kind"}, nil)
	descCommandDuration = prometheus.NewDesc("streamd_command_duration_seconds",
		"Time spent executing commands, by command (a histogram, 50us to 10s; the count is INFO commandstats calls).",
		[]string{"cmd"}, nil)
	descCommandErrorsByPrefix = prometheus.NewDesc("streamd_command_errors_by_prefix_total",
		"Error replies by command and error prefix (the reply's first word); at most 256 pairs, later ones summed under cmd=\"other\", prefix=\"other\".",
		[]string{"cmd", "prefix"}, nil)
	descErrors = prometheus.NewDesc("streamd_errors_total",
		"Error replies by error prefix (the reply's first word, as INFO errorstats).",
		[]string{"prefix"}, nil)
	descConnectedClients = prometheus.NewDesc("streamd_connected_clients",
		"Client connections open now.", nil, nil)
	descBlockedClients = prometheus.NewDesc("streamd_blocked_clients",
		"Clients waiting in a blocking command (XREAD/XREADGROUP BLOCK).", nil, nil)
	descLoopClients = prometheus.NewDesc("streamd_event_loop_clients",
		"Clients the event loop serves now (event-loop; the rest have goroutines of their own).", nil, nil)
	descLoopHandoffs = prometheus.NewDesc("streamd_event_loop_handoffs_total",
		"Clients the event loop gave to goroutines of their own (a command it does not run, output the socket did not take, timeout set).", nil, nil)
	descLoopTurns = prometheus.NewDesc("streamd_event_loop_turns_total",
		"Event loop turns that read requests (their writes share one log write).", nil, nil)
	descConnectionsReceived = prometheus.NewDesc("streamd_connections_received_total",
		"Connections accepted.", nil, nil)
	descRejectedConnections = prometheus.NewDesc("streamd_rejected_connections_total",
		"Connections refused because maxclients was reached.", nil, nil)
	descTLSConnectionsReceived = prometheus.NewDesc("streamd_tls_connections_received_total",
		"Connections accepted on the TLS port (tls-port).", nil, nil)
	descTLSHandshakeFailures = prometheus.NewDesc("streamd_tls_handshake_failures_total",
		"TLS connections whose handshake failed (refused client certificate, timeout, not TLS).", nil, nil)
	descMaxMemory = prometheus.NewDesc("streamd_maxmemory_bytes",
		"The maxmemory limit in bytes (0: none); over it, commands that add data answer OOM.", nil, nil)
	descUsedMemory = prometheus.NewDesc("streamd_used_memory_bytes",
		"INFO used_memory (the memory accounting: keys, clients' queued output, the heap at start-up) as the maxmemory check last sampled it (every 100 ms).", nil, nil)
	descKeys = prometheus.NewDesc("streamd_keys",
		"Keys in each database.", []string{"db"}, nil)
	descExpiringKeys = prometheus.NewDesc("streamd_expiring_keys",
		"Keys with a deadline in each database.", []string{"db"}, nil)
	descPersistence = prometheus.NewDesc("streamd_persistence_info",
		"Always 1; the labels say how the shard persists: fsync policy (appendfsync), log store (\"\" in memory) and whether it is durable.",
		[]string{"shard", "fsync", "log_store", "durable"}, nil)
	descAppliedIndex = prometheus.NewDesc("streamd_raft_applied_index",
		"Highest Raft log index applied to the state machine, by shard.", shardLabel, nil)
	descLastLogIndex = prometheus.NewDesc("streamd_raft_last_log_index",
		"Highest Raft log index stored, by shard.", shardLabel, nil)
	descSnapshotIndex = prometheus.NewDesc("streamd_raft_last_snapshot_index",
		"Raft log index of the newest snapshot (0: none yet), by shard.", shardLabel, nil)
	descBatches = prometheus.NewDesc("streamd_raft_batches_total",
		"Log entries proposed (each a batch of commands), by shard.", shardLabel, nil)
	descProposals = prometheus.NewDesc("streamd_raft_proposals_total",
		"Commands proposed to the log (proposals / batches is the mean batch size), by shard.", shardLabel, nil)
	descLastSave = prometheus.NewDesc("streamd_last_save_timestamp_seconds",
		"When the last snapshot was written (unix time; the start time until the first), by shard.", shardLabel, nil)
	descLastSaveOK = prometheus.NewDesc("streamd_last_save_success",
		"1 if the last snapshot attempt succeeded, 0 if it failed, by shard.", shardLabel, nil)
	descSaves = prometheus.NewDesc("streamd_saves_total",
		"Snapshots written by this process, by shard.", shardLabel, nil)
	descSaveInProgress = prometheus.NewDesc("streamd_save_in_progress",
		"1 while a snapshot is being written, by shard.", shardLabel, nil)
	descChangesSinceSave = prometheus.NewDesc("streamd_changes_since_last_save",
		"Commands applied that the last snapshot does not hold, by shard.", shardLabel, nil)
	descLogWriteErrors = prometheus.NewDesc("streamd_log_write_errors_total",
		"Failed log writes or fsyncs, by shard.", shardLabel, nil)
	descLogWriteOK = prometheus.NewDesc("streamd_log_write_ok",
		"1 if the last log write succeeded (writes are accepted), 0 while they fail with MISCONF, by shard.", shardLabel, nil)
)

// shardLabel labels the per-shard figures with the shard's number.
var shardLabel = []string{"shard"}

// collector is a prometheus.Collector that reads the server's counters and
// the shards' figures at scrape time.
type collector struct {
	st  *Stats
	src Source
}

// Describe sends every metric's description.
func (sc collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descCommands, descCommandErrors, descCommandDuration, descCommandErrorsByPrefix, descErrors,
		descConnectedClients, descBlockedClients, descConnectionsReceived, descRejectedConnections,
		descLoopClients, descLoopHandoffs, descLoopTurns,
		descTLSConnectionsReceived, descTLSHandshakeFailures, descMaxMemory, descUsedMemory,
		descKeys, descExpiringKeys,
		descPersistence, descAppliedIndex, descLastLogIndex, descSnapshotIndex, descBatches, descProposals,
		descLastSave, descLastSaveOK, descSaves, descSaveInProgress, descChangesSinceSave,
		descLogWriteErrors, descLogWriteOK,
	} {
		ch <- d
	}
	describeExtra(ch)
	describeRetention(ch)
	describeDelivery(ch)
	describeTransferHold(ch)
}

// Collect reads the current figures.
func (sc collector) Collect(ch chan<- prometheus.Metric) {
	st, src := sc.st, sc.src
	collectRetention(ch, &st.Retention)
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}

	// Command names are the command table's (stats are only ever recorded
	// under a command's name), never client input; an unknown command is
	// not a command and shows only in streamd_errors_total{prefix="ERR"}.
	for _, cs := range st.CommandStats() {
		counter(descCommands, float64(cs.Calls), cs.Name)
		counter(descCommandErrors, float64(cs.Failed), cs.Name, "failed")
		counter(descCommandErrors, float64(cs.Rejected), cs.Name, "rejected")
		ch <- latencyHistogram(cs)
	}
	for _, e := range st.commandErrors() {
		counter(descCommandErrorsByPrefix, float64(e.count), e.cmd, e.prefix)
	}
	for _, e := range boundErrorPrefixes(st.ErrorStats()) {
		counter(descErrors, float64(e.Count), e.Name)
	}

	gauge(descConnectedClients, float64(src.ConnectedClients()))
	gauge(descBlockedClients, float64(st.BlockedClients.Load()))
	gauge(descLoopClients, float64(st.LoopClients.Load()))
	counter(descLoopHandoffs, float64(st.LoopHandoffs.Load()))
	counter(descLoopTurns, float64(st.LoopTurns.Load()))
	counter(descConnectionsReceived, float64(st.ConnectionsReceived.Load()))
	counter(descRejectedConnections, float64(st.RejectedConnections.Load()))
	counter(descTLSConnectionsReceived, float64(st.TLSConnectionsReceived.Load()))
	counter(descTLSHandshakeFailures, float64(st.TLSHandshakeFailures.Load()))
	gauge(descMaxMemory, float64(st.MaxMemory.Load()))
	gauge(descUsedMemory, float64(st.UsedMemory.Load()))
	collectDelivery(ch, &st.Delivery)
	collectTransferHold(ch, &st.TransferHold)

	shards := src.Shards()
	if shards == nil {
		return
	}
	if dbs, err := src.Keyspace(); err == nil {
		for i, d := range dbs {
			db := strconv.Itoa(i)
			gauge(descKeys, float64(d.Keys), db)
			gauge(descExpiringKeys, float64(d.Expires), db)
		}
	}
	for i, sh := range shards {
		shard := strconv.Itoa(i)
		st := sh.Stats()
		gauge(descPersistence, 1, shard, st.Fsync.String(), sh.LogStore(), strconv.FormatBool(st.Durable))
		gauge(descAppliedIndex, float64(st.AppliedIndex), shard)
		gauge(descLastLogIndex, float64(st.LastLogIndex), shard)
		gauge(descSnapshotIndex, float64(st.SnapshotIndex), shard)
		counter(descBatches, float64(st.Batches), shard)
		counter(descProposals, float64(st.Proposals), shard)
		gauge(descLastSave, float64(st.LastSaveUnix), shard)
		gauge(descLastSaveOK, boolFloat(st.LastSaveOK), shard)
		counter(descSaves, float64(st.Saves), shard)
		gauge(descSaveInProgress, boolFloat(st.SaveInProgress), shard)
		gauge(descChangesSinceSave, float64(st.ChangesSinceSave), shard)
		counter(descLogWriteErrors, float64(st.WriteErrors), shard)
		gauge(descLogWriteOK, boolFloat(st.LastWriteErr == ""), shard)
		collectRaft(ch, sh, shard)
	}
	collectKeyspace(ch, shards, src.MaxStreams())
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// boundErrorPrefixes keeps errorstats' label values bounded: a prefix is
// kept if it looks like an error code (1-32 characters of A-Z, 0-9, '_' or
// '-') and is among the first maxErrorPrefixes such codes in sorted order;
// everything else is summed under "other". stats is sorted by name.
func boundErrorPrefixes(stats []NamedCount) []NamedCount {
	out := make([]NamedCount, 0, len(stats))
	var other int64
	for _, e := range stats {
		if len(out) < maxErrorPrefixes && isErrorCode(e.Name) && e.Name != "other" {
			out = append(out, e)
		} else {
			other += e.Count
		}
	}
	if other > 0 {
		out = append(out, NamedCount{"other", other})
	}
	return out
}

// isErrorCode reports whether s looks like a Redis error code ("ERR",
// "WRONGTYPE", "NOGROUP").
func isErrorCode(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// newRegistry returns a registry of its own (not the global default, so
// several servers in one process do not collide) holding the collector of
// st and src and the Go runtime and process collectors.
func newRegistry(st *Stats, src Source) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collector{st, src},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// Handler returns the operators' HTTP endpoints, backed by a Prometheus
// registry owned by this handler (newRegistry):
//
//   - /metrics: Prometheus text format (streamd_* figures, go_*, process_*);
//   - /healthz: 200 "ok" while the process serves HTTP at all;
//   - /readyz: 200 "ok" when src.Ready() returns "", else 503 with the
//     reason.
func Handler(st *Stats, src Source) http.Handler {
	reg := newRegistry(st, src)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if why := src.Ready(); why != "" {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(why + "\n"))
			return
		}
		w.Write([]byte("ok\n"))
	})
	return mux
}
