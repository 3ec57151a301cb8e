package metrics

import (
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"streamd/internal/metricstest"
	"streamd/replication"
	"streamd/replication/state"
)

// fakeSource is a Source without shards (the server's figures only).
type fakeSource struct {
	clients int
	ready   string
}

func (f fakeSource) ConnectedClients() int             { return f.clients }
func (f fakeSource) Shards() []*replication.Shard      { return nil }
func (f fakeSource) Keyspace() ([]state.DBInfo, error) { return nil, nil }
func (f fakeSource) MaxStreams() int                   { return 0 }
func (f fakeSource) Ready() string                     { return f.ready }

// TestHandlerWithoutShards checks the server-wide figures and the health
// endpoints over a Source without shards.
func TestHandlerWithoutShards(t *testing.T) {
	st := NewStats()
	st.Called("xadd", time.Millisecond, false)
	st.Rejected("xadd")
	st.ErrorReply("ERR wrong number of arguments")
	st.BlockedClients.Add(2)
	st.MaxMemory.Store(100 << 20)
	st.UsedMemory.Store(5 << 20)
	src := &fakeSource{clients: 3, ready: "not serving yet"}
	h := Handler(st, src)
	fams := metricstest.Scrape(t, h)
	metricstest.Want(t, fams, 1, "streamd_commands_total", "cmd", "xadd")
	metricstest.Want(t, fams, 1, "streamd_command_errors_total", "cmd", "xadd", "kind", "rejected")
	metricstest.Want(t, fams, 1, "streamd_command_duration_seconds", "cmd", "xadd")
	metricstest.Want(t, fams, 1, "streamd_errors_total", "prefix", "ERR")
	metricstest.Want(t, fams, 3, "streamd_connected_clients")
	metricstest.Want(t, fams, 2, "streamd_blocked_clients")
	metricstest.Want(t, fams, 100<<20, "streamd_maxmemory_bytes")
	metricstest.Want(t, fams, 5<<20, "streamd_used_memory_bytes")
	if fams["streamd_keys"] != nil || fams["streamd_streams"] != nil {
		t.Error("per-shard figures exported without shards")
	}
	if code, body := metricstest.Get(t, h, "/readyz"); code != http.StatusServiceUnavailable || body != "not serving yet\n" {
		t.Errorf("/readyz = %d %q", code, body)
	}
	src.ready = ""
	if code, body := metricstest.Get(t, h, "/readyz"); code != 200 || body != "ok\n" {
		t.Errorf("/readyz = %d %q", code, body)
	}
	if code, body := metricstest.Get(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
}

// TestLatencyBucket checks which bucket a duration falls in (bounds are
// inclusive upper bounds; the last bucket takes anything slower than 10s).
func TestLatencyBucket(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{
		{0, 0}, {50 * time.Microsecond, 0}, {51 * time.Microsecond, 1}, {time.Millisecond, 4},
		{10 * time.Second, len(latencyBounds) - 1}, {time.Hour, len(latencyBounds)},
	} {
		if got := latencyBucket(c.d); got != c.want {
			t.Errorf("latencyBucket(%v) = %d, want %d", c.d, got, c.want)
		}
	}
	st := NewStats()
	st.Called("xadd", 40*time.Microsecond, false)
	st.Called("xadd", 2*time.Millisecond, true)
	st.Called("xadd", time.Minute, false)
	st.Rejected("xadd")
	cs := st.CommandStats()
	if len(cs) != 1 || cs[0].Calls != 3 || cs[0].Failed != 1 || cs[0].Rejected != 1 {
		t.Fatalf("CommandStats = %+v", cs)
	}
	l := cs[0].latency
	if l.count != 3 || l.cumulative[0] != 1 || l.cumulative[4] != 1 || l.cumulative[5] != 2 ||
		l.cumulative[len(latencyBounds)-1] != 2 || l.sumNs != int64(time.Minute+2*time.Millisecond+40*time.Microsecond) {
		t.Errorf("latency = %+v", l)
	}
	st.Reset()
	if cs := st.CommandStats(); len(cs) != 0 {
		t.Errorf("after reset: %+v", cs)
	}
}

// TestCommandErrorsByPrefix checks the (command, error code) counts, the
// "other" code for a reply that does not start with one, and the cap, and
// that /metrics exports them.
func TestCommandErrorsByPrefix(t *testing.T) {
	st := NewStats()
	st.CommandError("xgroup|create", "BUSYGROUP Consumer Group name already exists")
	st.CommandError("xgroup|create", "BUSYGROUP Consumer Group name already exists")
	st.CommandError("xadd", "ERR wrong number of arguments for 'xadd' command")
	st.CommandError("xadd", "not an error code")
	fams := metricstest.Scrape(t, Handler(st, fakeSource{}))
	metricstest.Want(t, fams, 2, "streamd_command_errors_by_prefix_total", "cmd", "xgroup|create", "prefix", "BUSYGROUP")
	metricstest.Want(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xadd", "prefix", "ERR")
	metricstest.Want(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xadd", "prefix", "other")

	for i := 0; i < maxCommandErrorSeries+10; i++ {
		st.CommandError(fmt.Sprintf("c%d", i), "ERR x")
	}
	got := st.commandErrors()
	if len(got) != maxCommandErrorSeries+1 {
		t.Errorf("%d series, want %d (cap + other)", len(got), maxCommandErrorSeries+1)
	}
	var other int64
	for _, e := range got {
		if e.cmd == "other" && e.prefix == "other" {
			other = e.count
		}
	}
	// 3 pairs existed; cap-3 new ones fit; 13 spill into {other, other}.
	if other != 13 {
		t.Errorf("{other, other} = %d, want 13", other)
	}
	st.Reset()
	if len(st.commandErrors()) != 0 {
		t.Error("reset kept the command errors")
	}
}

func TestBoundErrorPrefixes(t *testing.T) {
	var in []NamedCount
	for i := 0; i < maxErrorPrefixes+5; i++ {
		in = append(in, NamedCount{fmt.Sprintf("E%03d", i), 1})
	}
	in = append(in, NamedCount{"bad prefix", 2}, NamedCount{"lower", 3})
	sort.Slice(in, func(i, j int) bool { return in[i].Name < in[j].Name })
	out := boundErrorPrefixes(in)
	if len(out) != maxErrorPrefixes+1 {
		t.Fatalf("got %d prefixes, want %d", len(out), maxErrorPrefixes+1)
	}
	last := out[len(out)-1]
	if last.Name != "other" || last.Count != 5+2+3 {
		t.Errorf("last = %+v, want other=10", last)
	}
	if out[0].Name != "E000" {
		t.Errorf("first = %+v", out[0])
	}
}

// BenchmarkStatsCalled measures recording one command (commandstats and the
// latency histogram) from parallel goroutines, as connections do.
func BenchmarkStatsCalled(b *testing.B) {
	st := NewStats()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			st.Called("xadd", 30*time.Microsecond, false)
		}
	})
}
