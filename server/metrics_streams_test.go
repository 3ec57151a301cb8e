package server

import (
	"io"
	"log/slog"
	"math"
	"net"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"streamd/config"
	"streamd/internal/metricstest"
	"streamd/replication"
)

// startDurableServer serves a durable shard (wal log, appendfsync always)
// in a temp directory on 127.0.0.1 and returns the server and its address;
// everything stops at cleanup.
func startDurableServer(t *testing.T, mod func(*config.Config)) (*Server, string) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sh, err := replication.Open(replication.Options{Dir: t.TempDir(), Fsync: replication.FsyncAlways, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		sh.Close(false)
		t.Fatal(err)
	}
	cfg := config.Default()
	if mod != nil {
		mod(&cfg)
	}
	srv := New(cfg, sh, log)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		sh.Close(false)
	})
	return srv, ln.Addr().String()
}

// metricsDo sends each command on c and fails the test on an error reply
// unless the command is listed as expected to fail.
func metricsDo(t *testing.T, c *respConn, cmds ...[]string) {
	t.Helper()
	for _, args := range cmds {
		r, err := c.Do(args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if r.Kind == '-' {
			t.Fatalf("%v: %s", args, r.String())
		}
	}
}

// histogram returns the histogram sample of family name whose labels
// include labels.
func histogram(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Histogram {
	t.Helper()
	m := metricstest.Find(fams, name, labels...)
	if m == nil {
		t.Fatalf("%s%v missing", name, labels)
	}
	if m.Histogram == nil {
		t.Fatalf("%s%v is not a histogram", name, labels)
	}
	return m.Histogram
}

// checkHistogram checks a histogram's shape as parsed from the text
// format: bounds from 50us to 10s then +Inf, cumulative counts, +Inf equal
// to the sample count.
func checkHistogram(t *testing.T, name string, h *dto.Histogram) {
	t.Helper()
	bs := h.GetBucket()
	if len(bs) != 18 || bs[0].GetUpperBound() != 50e-6 || bs[16].GetUpperBound() != 10 || !math.IsInf(bs[17].GetUpperBound(), 1) {
		t.Fatalf("%s: %d buckets from %v to %v", name, len(bs), bs[0].GetUpperBound(), bs[len(bs)-1].GetUpperBound())
	}
	for i := 1; i < len(bs); i++ {
		if bs[i].GetCumulativeCount() < bs[i-1].GetCumulativeCount() {
			t.Errorf("%s: bucket %v below the previous one", name, bs[i].GetUpperBound())
		}
	}
	if inf := bs[17].GetCumulativeCount(); inf != h.GetSampleCount() {
		t.Errorf("%s: +Inf holds %d, count %d", name, inf, h.GetSampleCount())
	}
}

// TestMetricsStreamsAndGroups runs a known workload and checks the
// per-stream and per-group figures, the totals, the command latency
// histogram, Raft's per-shard figures and the fsync histogram.
func TestMetricsStreamsAndGroups(t *testing.T) {
	srv, addr := startDurableServer(t, nil)
	h := srv.MetricsHandler()
	c := dial(t, addr)
	metricsDo(t, c,
		[]string{"XADD", "orders", "1-1", "f", "v"},
		[]string{"XADD", "orders", "2-1", "f", "v"},
		[]string{"XADD", "orders", "3-1", "f", "v"},
		[]string{"XADD", "orders", "4-1", "f", "v"},
		[]string{"XGROUP", "CREATE", "orders", "billing", "0"},
		[]string{"XGROUP", "CREATE", "orders", "idle", "$"},
	)
	readAt := time.Now()
	metricsDo(t, c,
		[]string{"XREADGROUP", "GROUP", "billing", "alice", "COUNT", "2", "STREAMS", "orders", ">"},
		[]string{"XREADGROUP", "GROUP", "billing", "bob", "COUNT", "1", "STREAMS", "orders", ">"},
		[]string{"XACK", "orders", "billing", "2-1"},
		[]string{"SELECT", "5"},
		[]string{"XADD", "events", "1-1", "a", "b"},
	)

	fams := metricstest.Scrape(t, h)
	scraped := time.Now()
	metricstest.Want(t, fams, 4, "streamd_stream_length", "db", "0", "stream", "orders")
	metricstest.Want(t, fams, 4, "streamd_stream_entries_added_total", "db", "0", "stream", "orders")
	metricstest.Want(t, fams, 2, "streamd_stream_groups", "db", "0", "stream", "orders")
	metricstest.Want(t, fams, 1, "streamd_stream_length", "db", "5", "stream", "events")
	metricstest.Want(t, fams, 0, "streamd_stream_groups", "db", "5", "stream", "events")
	metricstest.Want(t, fams, 2, "streamd_group_pending", "db", "0", "stream", "orders", "group", "billing")
	metricstest.Want(t, fams, 2, "streamd_group_consumers", "db", "0", "stream", "orders", "group", "billing")
	metricstest.Want(t, fams, 1, "streamd_group_lag", "db", "0", "stream", "orders", "group", "billing")
	metricstest.Want(t, fams, 0, "streamd_group_lag", "db", "0", "stream", "orders", "group", "idle")
	metricstest.Want(t, fams, 0, "streamd_group_pending", "db", "0", "stream", "orders", "group", "idle")
	metricstest.Want(t, fams, 0, "streamd_group_oldest_pending_age_seconds", "db", "0", "stream", "orders", "group", "idle")
	// The oldest pending entry (1-1) was delivered between readAt and the
	// scrape.
	age, ok := metricstest.Value(fams, "streamd_group_oldest_pending_age_seconds", "db", "0", "stream", "orders", "group", "billing")
	if !ok || age < 0 || age > scraped.Sub(readAt).Seconds()+0.001 {
		t.Errorf("oldest pending age = %v (present %v), want within [0, %v]", age, ok, scraped.Sub(readAt).Seconds())
	}
	metricstest.Want(t, fams, 2, "streamd_streams")
	metricstest.Want(t, fams, 5, "streamd_stream_entries")
	metricstest.Want(t, fams, 2, "streamd_consumer_groups")
	metricstest.Want(t, fams, 2, "streamd_consumers")
	metricstest.Want(t, fams, 2, "streamd_pending_entries")
	metricstest.Want(t, fams, 0, "streamd_streams_omitted")
	metricstest.Want(t, fams, 100, "streamd_metrics_max_streams")
	if v, ok := metricstest.Value(fams, "streamd_memory_estimated_bytes"); !ok || v < 5*2*(24+1) {
		t.Errorf("streamd_memory_estimated_bytes = %v (present %v)", v, ok)
	}

	// Latency histogram: one sample per call.
	xadd := histogram(t, fams, "streamd_command_duration_seconds", "cmd", "xadd")
	if xadd.GetSampleCount() != 5 || xadd.GetSampleSum() <= 0 {
		t.Errorf("xadd latency: count %d sum %v, want 5 and > 0", xadd.GetSampleCount(), xadd.GetSampleSum())
	}
	checkHistogram(t, "xadd", xadd)
	metricsDo(t, c, []string{"XADD", "events", "*", "a", "b"})
	if n := histogram(t, metricstest.Scrape(t, h), "streamd_command_duration_seconds", "cmd", "xadd").GetSampleCount(); n != 6 {
		t.Errorf("xadd latency count after one more = %d, want 6", n)
	}

	// Raft: a single node leads its one shard.
	metricstest.Want(t, fams, 1, "streamd_raft_state", "shard", "0", "state", "leader")
	metricstest.Want(t, fams, 0, "streamd_raft_state", "shard", "0", "state", "follower")
	metricstest.Want(t, fams, 1, "streamd_raft_is_leader", "shard", "0")
	metricstest.Want(t, fams, 1, "streamd_raft_voters", "shard", "0")
	if v, _ := metricstest.Value(fams, "streamd_raft_term", "shard", "0"); v < 1 {
		t.Errorf("streamd_raft_term = %v, want >= 1", v)
	}
	commit, _ := metricstest.Value(fams, "streamd_raft_commit_index", "shard", "0")
	applied, _ := metricstest.Value(fams, "streamd_raft_applied_index", "shard", "0")
	if commit < 8 || applied < 8 {
		t.Errorf("commit %v applied %v, want >= 8 (8 writes)", commit, applied)
	}
	pollMetric(t, h, 0, "streamd_raft_apply_lag", "shard", "0")

	// fsync: appendfsync always fsyncs every write.
	fs := histogram(t, fams, "streamd_fsync_duration_seconds", "shard", "0")
	if fs.GetSampleCount() < 8 {
		t.Errorf("fsyncs = %d, want >= 8", fs.GetSampleCount())
	}
	checkHistogram(t, "fsync", fs)
}

// TestMetricsMaxStreamsCap checks the cap: the longest streams are kept
// (ties by name), the rest counted as omitted, and CONFIG SET changes the
// cap live.
func TestMetricsMaxStreamsCap(t *testing.T) {
	srv, addr := startTestServer(t, func(c *config.Config) { c.MetricsMaxStreams = 2 })
	h := srv.MetricsHandler()
	c := dial(t, addr)
	for key, n := range map[string]int{"s1": 1, "s3": 3, "tieA": 2, "tieB": 2} {
		for i := 0; i < n; i++ {
			metricsDo(t, c, []string{"XADD", key, "*", "f", "v"})
		}
	}
	metricsDo(t, c, []string{"XGROUP", "CREATE", "s1", "g", "0"})
	fams := metricstest.Scrape(t, h)
	metricstest.Want(t, fams, 3, "streamd_stream_length", "stream", "s3")
	metricstest.Want(t, fams, 2, "streamd_stream_length", "stream", "tieA")
	for _, gone := range []string{"tieB", "s1"} {
		if _, ok := metricstest.Value(fams, "streamd_stream_length", "stream", gone); ok {
			t.Errorf("stream %s exported past the cap", gone)
		}
	}
	if _, ok := metricstest.Value(fams, "streamd_group_pending", "stream", "s1"); ok {
		t.Error("group of an omitted stream exported")
	}
	if n := len(fams["streamd_stream_length"].GetMetric()); n != 2 {
		t.Errorf("%d streams exported, want 2", n)
	}
	metricstest.Want(t, fams, 2, "streamd_streams_omitted")
	metricstest.Want(t, fams, 4, "streamd_streams")
	metricstest.Want(t, fams, 1, "streamd_consumer_groups") // totals cover every stream

	metricsDo(t, c, []string{"CONFIG", "SET", "metrics-max-streams", "0"})
	fams = metricstest.Scrape(t, h)
	if f := fams["streamd_stream_length"]; f != nil && len(f.GetMetric()) != 0 {
		t.Errorf("cap 0: %d streams exported", len(f.GetMetric()))
	}
	metricstest.Want(t, fams, 4, "streamd_streams_omitted")
	metricstest.Want(t, fams, 0, "streamd_metrics_max_streams")
}

// TestMetricsInvalidUTF8Names checks that key and group names that are not
// UTF-8 (two that differ only in invalid bytes) do not break the scrape.
func TestMetricsInvalidUTF8Names(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	h := srv.MetricsHandler()
	c := dial(t, addr)
	metricsDo(t, c,
		[]string{"XADD", "k\xff", "*", "f", "v"},
		[]string{"XADD", "k\xfe", "*", "f", "v"},
		[]string{"XGROUP", "CREATE", "k\xfe", "g\xff", "0"},
	)
	// Both keys become "k\uFFFD": the first by name ("k\xfe") is kept.
	fams := metricstest.Scrape(t, h)
	metricstest.Want(t, fams, 1, "streamd_stream_length", "stream", "k\uFFFD")
	metricstest.Want(t, fams, 1, "streamd_stream_groups", "stream", "k\uFFFD")
	metricstest.Want(t, fams, 1, "streamd_streams_omitted")
	metricstest.Want(t, fams, 0, "streamd_group_pending", "group", "g\uFFFD")
}
