package server

import (
	"fmt"
	"testing"
	"time"
)

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
	st := newServerStats()
	st.called("xadd", 40*time.Microsecond, false)
	st.called("xadd", 2*time.Millisecond, true)
	st.called("xadd", time.Minute, false)
	st.rejected("xadd")
	cs := st.commandStats()
	if len(cs) != 1 || cs[0].calls != 3 || cs[0].failed != 1 || cs[0].rejected != 1 {
		t.Fatalf("commandStats = %+v", cs)
	}
	l := cs[0].latency
	if l.count != 3 || l.cumulative[0] != 1 || l.cumulative[4] != 1 || l.cumulative[5] != 2 ||
		l.cumulative[len(latencyBounds)-1] != 2 || l.sumNs != int64(time.Minute+2*time.Millisecond+40*time.Microsecond) {
		t.Errorf("latency = %+v", l)
	}
	st.reset()
	if cs := st.commandStats(); len(cs) != 0 {
		t.Errorf("after reset: %+v", cs)
	}
}

// TestCommandErrorsByPrefix checks the (command, error code) counts, the
// "other" code for a reply that does not start with one, and the cap, and
// that /metrics exports them.
func TestCommandErrorsByPrefix(t *testing.T) {
	srv, _ := startTestServer(t, nil)
	st := srv.stats
	st.commandError("xgroup|create", "BUSYGROUP Consumer Group name already exists")
	st.commandError("xgroup|create", "BUSYGROUP Consumer Group name already exists")
	st.commandError("xadd", "ERR wrong number of arguments for 'xadd' command")
	st.commandError("xadd", "not an error code")
	fams := scrape(t, srv.MetricsHandler())
	wantMetric(t, fams, 2, "streamd_command_errors_by_prefix_total", "cmd", "xgroup|create", "prefix", "BUSYGROUP")
	wantMetric(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xadd", "prefix", "ERR")
	wantMetric(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xadd", "prefix", "other")

	for i := 0; i < maxCommandErrorSeries+10; i++ {
		st.commandError(fmt.Sprintf("c%d", i), "ERR x")
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
	st.reset()
	if len(st.commandErrors()) != 0 {
		t.Error("reset kept the command errors")
	}
}

// BenchmarkStatsCalled measures recording one command (commandstats and the
// latency histogram) from parallel goroutines, as connections do.
func BenchmarkStatsCalled(b *testing.B) {
	st := newServerStats()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			st.called("xadd", 30*time.Microsecond, false)
		}
	})
}

// TestCommandErrorsByPrefixServed checks that errors answered to clients —
// a command's own error and a command refused before it ran — reach
// streamd_command_errors_by_prefix_total with their command and code.
func TestCommandErrorsByPrefixServed(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, args := range [][]string{
		{"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"},
		{"XGROUP", "CREATE", "s", "g", "$"},                      // BUSYGROUP
		{"XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">"}, // NOGROUP
		{"XADD", "s"}, // arity: rejected
	} {
		if _, err := c.Do(args...); err != nil {
			t.Fatal(err)
		}
	}
	fams := scrape(t, srv.MetricsHandler())
	wantMetric(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xgroup|create", "prefix", "BUSYGROUP")
	wantMetric(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xreadgroup", "prefix", "NOGROUP")
	wantMetric(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xadd", "prefix", "ERR")
}
