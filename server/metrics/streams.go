package metrics

import (
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"streamd/replication"
	"streamd/replication/state"
	"streamd/replication/wire"
)

// The figures below are read at scrape time: Raft's state from each local
// shard (Shard.Info), the fsync histogram the log store keeps
// (Shard.FsyncStats), and the keyspace's totals and longest streams from a
// local read of each shard (Shard.MetricsStats, under the shard's read lock:
// O(keys + groups) per scrape).
var (
	descRaftState = prometheus.NewDesc("streamd_raft_state",
		"1 for the shard's current Raft state on this node (leader, follower, candidate, shutdown), 0 for the others.",
		[]string{"shard", "state"}, nil)
	descRaftIsLeader = prometheus.NewDesc("streamd_raft_is_leader",
		"1 if this node leads the shard's Raft group.", shardLabel, nil)
	descRaftTerm = prometheus.NewDesc("streamd_raft_term",
		"The shard's current Raft term.", shardLabel, nil)
	descRaftCommitIndex = prometheus.NewDesc("streamd_raft_commit_index",
		"Highest Raft log index known committed, by shard.", shardLabel, nil)
	descRaftApplyLag = prometheus.NewDesc("streamd_raft_apply_lag",
		"Committed log entries not yet applied here (commit index - applied index), by shard.", shardLabel, nil)
	descRaftVoters = prometheus.NewDesc("streamd_raft_voters",
		"Voting members of the shard's Raft group.", shardLabel, nil)
	descFsyncDuration = prometheus.NewDesc("streamd_fsync_duration_seconds",
		"Time of each fsync of the shard's log (wal: a segment fsync; bolt: a committing transaction with its fsyncs, and each everysec sync).",
		shardLabel, nil)
	descXAddAck = prometheus.NewDesc("streamd_xadd_ack_duration_seconds",
		"Time from proposing an XADD to answering it, by shard and ack level: quorum (committed on a majority and applied) or leader (ACKLEVEL LEADER: durable in this leader's log); recorded once the shard uses ACKLEVEL LEADER.",
		[]string{"shard", "acklevel"}, nil)

	descStreams = prometheus.NewDesc("streamd_streams",
		"Stream keys over every database.", nil, nil)
	descEntries = prometheus.NewDesc("streamd_stream_entries",
		"Live entries in every stream.", nil, nil)
	descGroups = prometheus.NewDesc("streamd_consumer_groups",
		"Consumer groups over every stream.", nil, nil)
	descConsumers = prometheus.NewDesc("streamd_consumers",
		"Consumers over every consumer group.", nil, nil)
	descPending = prometheus.NewDesc("streamd_pending_entries",
		"Pending (delivered, unacknowledged) entries over every consumer group.", nil, nil)
	descMemory = prometheus.NewDesc("streamd_memory_estimated_bytes",
		"Bytes held by the keyspace's keys (the memory accounting of MEMORY USAGE and INFO used_memory_dataset, with the keys' table overhead): stream nodes, groups, consumers and pending entries. Go's heap is in go_memstats_*.",
		nil, nil)
	descStreamsOmitted = prometheus.NewDesc("streamd_streams_omitted",
		"Streams left out of the per-stream metrics by metrics-max-streams (the longest are kept).", nil, nil)
	descMaxStreams = prometheus.NewDesc("streamd_metrics_max_streams",
		"The metrics-max-streams cap in force.", nil, nil)

	streamLabels = []string{"db", "stream"}
	groupLabels  = []string{"db", "stream", "group"}

	descStreamLength = prometheus.NewDesc("streamd_stream_length",
		"Live entries in the stream (XLEN).", streamLabels, nil)
	descStreamAdded = prometheus.NewDesc("streamd_stream_entries_added_total",
		"Entries ever added to the stream (XINFO STREAM entries-added).", streamLabels, nil)
	descStreamGroups = prometheus.NewDesc("streamd_stream_groups",
		"Consumer groups of the stream.", streamLabels, nil)
	descGroupPending = prometheus.NewDesc("streamd_group_pending",
		"Pending entries of the consumer group (its PEL size).", groupLabels, nil)
	descGroupLag = prometheus.NewDesc("streamd_group_lag",
		"Entries not yet delivered to the consumer group (XINFO GROUPS lag; absent while Redis would reply null).", groupLabels, nil)
	descGroupConsumers = prometheus.NewDesc("streamd_group_consumers",
		"Consumers of the consumer group.", groupLabels, nil)
	descGroupOldestPending = prometheus.NewDesc("streamd_group_oldest_pending_age_seconds",
		"Time since the last delivery of the group's oldest pending entry (lowest ID); 0 when nothing is pending.", groupLabels, nil)
)

// raftStates are the values of streamd_raft_state's state label.
var raftStates = []string{"leader", "follower", "candidate", "shutdown"}

// describeExtra sends the descriptions of this file's metrics.
func describeExtra(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descRaftState, descRaftIsLeader, descRaftTerm, descRaftCommitIndex, descRaftApplyLag,
		descRaftVoters, descFsyncDuration, descXAddAck,
		descStreams, descEntries, descGroups, descConsumers, descPending, descMemory,
		descStreamsOmitted, descMaxStreams,
		descStreamLength, descStreamAdded, descStreamGroups,
		descGroupPending, descGroupLag, descGroupConsumers, descGroupOldestPending,
	} {
		ch <- d
	}
}

// latencyHistogram returns a command's latency histogram metric.
func latencyHistogram(cs CommandStat) prometheus.Metric {
	buckets := make(map[float64]uint64, len(latencyBounds))
	for i, b := range latencyBounds {
		buckets[b.Seconds()] = cs.latency.cumulative[i]
	}
	return prometheus.MustNewConstHistogram(descCommandDuration, cs.latency.count,
		float64(cs.latency.sumNs)/1e9, buckets, cs.Name)
}

// sendValue sends a gauge or counter sample unless building it fails (it
// cannot with valid label values: see labelValue), so that a scrape never
// panics.
func sendValue(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	if m, err := prometheus.NewConstMetric(d, t, v, labels...); err == nil {
		ch <- m
	}
}

// collectRaft sends shard sh's Raft figures and fsync histogram.
func collectRaft(ch chan<- prometheus.Metric, sh *replication.Shard, shard string) {
	info := sh.Info()
	for _, st := range raftStates {
		sendValue(ch, descRaftState, prometheus.GaugeValue, boolFloat(info.Role == st), shard, st)
	}
	sendValue(ch, descRaftIsLeader, prometheus.GaugeValue, boolFloat(info.Role == "leader"), shard)
	sendValue(ch, descRaftTerm, prometheus.GaugeValue, float64(info.Term), shard)
	sendValue(ch, descRaftCommitIndex, prometheus.GaugeValue, float64(info.CommitIndex), shard)
	var lag uint64
	if info.CommitIndex > info.AppliedIndex {
		lag = info.CommitIndex - info.AppliedIndex
	}
	sendValue(ch, descRaftApplyLag, prometheus.GaugeValue, float64(lag), shard)
	sendValue(ch, descRaftVoters, prometheus.GaugeValue, float64(info.Voters), shard)
	if fs, ok := sh.FsyncStats(); ok {
		buckets := make(map[float64]uint64, len(fs.Buckets))
		for i, b := range fs.Buckets {
			buckets[b.Seconds()] = fs.Counts[i]
		}
		if m, err := prometheus.NewConstHistogram(descFsyncDuration, fs.Count, fs.Sum.Seconds(), buckets, shard); err == nil {
			ch <- m
		}
	}
	quorum, leader := sh.XAddAckLatency()
	for _, h := range []struct {
		level string
		st    replication.AckLatency
	}{{"quorum", quorum}, {"leader", leader}} {
		buckets := make(map[float64]uint64, len(h.st.Buckets))
		for i, b := range h.st.Buckets {
			buckets[b.Seconds()] = h.st.Counts[i]
		}
		if m, err := prometheus.NewConstHistogram(descXAddAck, h.st.Count, h.st.Sum.Seconds(), buckets, shard, h.level); err == nil {
			ch <- m
		}
	}
}

// collectKeyspace sends the keyspace totals summed over the local shards
// and the per-stream and per-group figures of the longest streams among
// them (limit, metrics-max-streams, at most).
func collectKeyspace(ch chan<- prometheus.Metric, shards []*replication.Shard, limit int) {
	ms := keyspaceMetrics(shards, limit)
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		sendValue(ch, d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descStreams, float64(ms.Streams))
	gauge(descEntries, float64(ms.Entries))
	gauge(descGroups, float64(ms.Groups))
	gauge(descConsumers, float64(ms.Consumers))
	gauge(descPending, float64(ms.Pending))
	gauge(descMemory, float64(ms.MemoryBytes))
	gauge(descMaxStreams, float64(limit))

	omitted := ms.Omitted
	seen := make(map[[2]string]bool, len(ms.Top))
	for _, st := range ms.Top {
		db, key := strconv.Itoa(st.DB), labelValue(st.Key)
		if seen[[2]string{db, key}] {
			// Two names that differ only in invalid UTF-8 bytes: the
			// second would repeat the first's series and fail the scrape.
			omitted++
			continue
		}
		seen[[2]string{db, key}] = true
		gauge(descStreamLength, float64(st.Length), db, key)
		sendValue(ch, descStreamAdded, prometheus.CounterValue, float64(st.EntriesAdded), db, key)
		gauge(descStreamGroups, float64(len(st.Groups)), db, key)
		for _, g := range st.Groups {
			name := labelValue(g.Name)
			gauge(descGroupPending, float64(g.Pending), db, key, name)
			gauge(descGroupConsumers, float64(g.Consumers), db, key, name)
			gauge(descGroupOldestPending, float64(g.OldestPendingAgeMs)/1000, db, key, name)
			if g.LagKnown {
				gauge(descGroupLag, float64(g.Lag), db, key, name)
			}
		}
	}
	gauge(descStreamsOmitted, float64(omitted))
}

// keyspaceMetrics merges the local shards' MetricsStats: totals summed, the
// longest limit streams over all of them (each shard returns its own
// longest limit, so the merge keeps the global ones).
func keyspaceMetrics(shards []*replication.Shard, limit int) *state.MetricsStats {
	out := &state.MetricsStats{}
	for _, sh := range shards {
		ms := sh.MetricsStats(wire.MetricsQuery{MaxStreams: limit})
		out.Streams += ms.Streams
		out.Entries += ms.Entries
		out.Groups += ms.Groups
		out.Consumers += ms.Consumers
		out.Pending += ms.Pending
		out.MemoryBytes += ms.MemoryBytes
		out.Top = append(out.Top, ms.Top...)
	}
	sort.Slice(out.Top, func(i, j int) bool {
		a, b := out.Top[i], out.Top[j]
		if a.Length != b.Length {
			return a.Length > b.Length
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return a.DB < b.DB
	})
	if len(out.Top) > limit {
		out.Top = out.Top[:max(limit, 0)]
	}
	out.Omitted = out.Streams - int64(len(out.Top))
	return out
}

// labelValue makes a key or group name a valid Prometheus label value
// (UTF-8): invalid bytes become U+FFFD.
func labelValue(name string) string { return strings.ToValidUTF8(name, "\uFFFD") }
