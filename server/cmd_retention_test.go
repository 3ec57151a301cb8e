package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"streamd/internal/metricstest"
	"streamd/internal/testutil"
)

// Tests of issue #15's retention and GROUP-IDLE-EXPIRE through a real
// in-process server.

// xinfoRet returns XINFO STREAM's retention fields as "name=value ...".
func xinfoRet(t *testing.T, c *respConn, key string) string {
	t.Helper()
	v := do(t, c, "XINFO", "STREAM", key)
	var out []string
	for i := 0; i+1 < len(v.Elems); i += 2 {
		switch k := v.Elems[i].Str; k {
		case "retention-maxlen", "retention-maxage", "retention-held", "group-idle-expire", "groups-expired":
			out = append(out, fmt.Sprintf("%s=%d", k, v.Elems[i+1].Int))
		case "retention-policy":
			out = append(out, k+"="+v.Elems[i+1].Str)
		}
	}
	return strings.Join(out, " ")
}

// TestXCFGSETRetentionErrors: the options' error texts (README "Delivery
// guarantees"), the key looked up first as for the IDMP options.
func TestXCFGSETRetentionErrors(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	do(t, c, "XADD", "s", "*", "f", "v")
	runSteps(t, c, []step{
		{[]string{"XCFGSET", "nokey", "MAXLEN", "-1"}, "(error) ERR no such key"},
		{[]string{"XCFGSET", "s", "MAXLEN", "-1"}, "(error) ERR MAXLEN must be >= 0"},
		{[]string{"XCFGSET", "s", "MAXLEN", "x"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"XCFGSET", "s", "MAXLEN"}, "(error) ERR syntax error"},
		{[]string{"XCFGSET", "s", "MAXAGE", "0"}, "(error) ERR MAXAGE must be > 0 milliseconds"},
		{[]string{"XCFGSET", "s", "MAXLEN", "1", "MAXLEN", "2"}, "(error) ERR MAXLEN specified multiple times"},
		{[]string{"XCFGSET", "s", "MAXAGE", "1", "MAXAGE", "2"}, "(error) ERR MAXAGE specified multiple times"},
		{[]string{"XCFGSET", "s", "NONE", "MAXLEN", "2"}, "(error) ERR NONE cannot be combined with MAXLEN or MAXAGE"},
		{[]string{"XCFGSET", "s", "MAXAGE", "5", "NONE"}, "(error) ERR NONE cannot be combined with MAXLEN or MAXAGE"},
		{[]string{"XCFGSET", "s", "NONE", "none"}, "(error) ERR NONE specified multiple times"},
		{[]string{"XCFGSET", "s", "RETENTION-POLICY", "DELREF"}, "(error) ERR RETENTION-POLICY must be KEEPREF or ACKED"},
		{[]string{"XCFGSET", "s", "RETENTION-POLICY", "ACKED", "RETENTION-POLICY", "ACKED"},
			"(error) ERR RETENTION-POLICY specified multiple times"},
		{[]string{"XCFGSET", "s", "GROUP-IDLE-EXPIRE", "0"}, "(error) ERR GROUP-IDLE-EXPIRE must be > 0 milliseconds or NONE"},
		{[]string{"XCFGSET", "s", "GROUP-IDLE-EXPIRE", "soon"}, "(error) ERR GROUP-IDLE-EXPIRE must be > 0 milliseconds or NONE"},
		{[]string{"XCFGSET", "s", "GROUP-IDLE-EXPIRE", "1", "GROUP-IDLE-EXPIRE", "NONE"},
			"(error) ERR GROUP-IDLE-EXPIRE specified multiple times"},
		{[]string{"XCFGSET", "s", "BOGUS", "1"}, "(error) ERR syntax error"},
	})
	// Nothing was set: XINFO shows no retention field.
	if got := xinfoRet(t, c, "s"); got != "" {
		t.Fatalf("XINFO after refused XCFGSETs: %s", got)
	}
	runSteps(t, c, []step{
		{[]string{"XCFGSET", "s", "maxlen", "10", "maxage", "60000", "retention-policy", "keepref",
			"group-idle-expire", "3600000", "IDMP-MAXSIZE", "5"}, "+OK"},
	})
	if got, want := xinfoRet(t, c, "s"), "retention-maxlen=10 retention-maxage=60000 retention-policy=keepref "+
		"retention-held=0 group-idle-expire=3600000 groups-expired=0"; got != want {
		t.Fatalf("XINFO %s, want %s", got, want)
	}
	runSteps(t, c, []step{
		{[]string{"XCFGSET", "s", "NONE", "RETENTION-POLICY", "ACKED", "GROUP-IDLE-EXPIRE", "NONE"}, "+OK"},
	})
	if got := xinfoRet(t, c, "s"); got != "" {
		t.Fatalf("XINFO after NONE: %s", got)
	}
}

// TestRetentionOnXADD: MAXLEN applies on every XADD, never removing an
// entry a group still needs (ACKED), and XINFO counts the held entries.
func TestRetentionOnXADD(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	for i := 1; i <= 5; i++ {
		do(t, c, "XADD", "s", fmt.Sprintf("%d-1", i), "f", "v")
	}
	runSteps(t, c, []step{
		{[]string{"XGROUP", "CREATE", "s", "g", "0"}, "+OK"},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"},
			`[["s", [["1-1", ["f", "v"]], ["2-1", ["f", "v"]]]]]`},
		{[]string{"XACK", "s", "g", "1-1"}, "(integer) 1"},
		{[]string{"XCFGSET", "s", "MAXLEN", "2"}, "+OK"},
		{[]string{"XADD", "s", "6-1", "f", "v"}, `"6-1"`},
		// 1-1 acked: gone; 2-1 pending, 3-1 … 6-1 undelivered: kept.
		{[]string{"XLEN", "s"}, "(integer) 5"},
	})
	if got, want := xinfoRet(t, c, "s"), "retention-maxlen=2 retention-maxage=-1 retention-policy=acked "+
		"retention-held=3 group-idle-expire=-1 groups-expired=0"; got != want {
		t.Fatalf("XINFO %s, want %s", got, want)
	}
	runSteps(t, c, []step{
		{[]string{"XCFGSET", "s", "RETENTION-POLICY", "KEEPREF"}, "+OK"},
		{[]string{"XADD", "s", "7-1", "f", "v"}, `"7-1"`},
		{[]string{"XRANGE", "s", "-", "+"}, `[["6-1", ["f", "v"]], ["7-1", ["f", "v"]]]`},
		// The dangling reference stays pending, as KEEPREF trimming leaves it.
		{[]string{"XPENDING", "s", "g"}, `[(integer) 1, "2-1", "2-1", [["c", "1"]]]`},
	})
}

// TestRetentionSweepAndGroupExpiry: a stream no XADD touches is trimmed by
// the leader's sweep (MAXAGE), an idle group is destroyed, its blocked
// XREADGROUP client gets XGROUP DESTROY's error, and the metrics count.
func TestRetentionSweepAndGroupExpiry(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	c, r := dial(t, addr), dial(t, addr)
	old := time.Now().UnixMilli() - 60_000
	for i := range 3 {
		do(t, c, "XADD", "s", fmt.Sprintf("%d-1", old+int64(i)), "f", "v")
	}
	do(t, c, "XADD", "s", "*", "f", "new")
	runSteps(t, c, []step{
		{[]string{"XGROUP", "CREATE", "s", "idle", "$"}, "+OK"},
		{[]string{"XGROUP", "CREATE", "s", "lagging", "0"}, "+OK"},
		{[]string{"XCFGSET", "s", "MAXAGE", "30000", "GROUP-IDLE-EXPIRE", "400"}, "+OK"},
	})
	// "lagging" has read nothing: the old entries are held.
	if got := xinfoRet(t, c, "s"); !strings.Contains(got, "retention-held=3 ") {
		t.Fatalf("XINFO %s", got)
	}
	if err := r.Send("XREADGROUP", "GROUP", "idle", "c", "BLOCK", "0", "STREAMS", "s", ">"); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, r); got != "(error) NOGROUP the consumer group this client was blocked on no longer exists" {
		t.Fatalf("blocked reader got %s", got)
	}
	// Both groups idle: both expire; then the sweep trims the old entries.
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		got := xinfoRet(t, c, "s")
		if !strings.Contains(got, "groups-expired=2") || !strings.Contains(got, "retention-held=0 ") {
			return fmt.Errorf("XINFO %s", got)
		}
		if v := do(t, c, "XLEN", "s"); v.Int != 1 {
			return fmt.Errorf("XLEN %d", v.Int)
		}
		return nil
	})
	runSteps(t, c, []step{{[]string{"XINFO", "GROUPS", "s"}, "[]"}})
	fams := metricstest.Scrape(t, srv.MetricsHandler())
	metricstest.Want(t, fams, 2, "streamd_groups_expired_total")
	if v, ok := metricstest.Value(fams, "streamd_retention_held_entries"); !ok || v != 0 {
		t.Fatalf("streamd_retention_held_entries %v %v", v, ok)
	}
}

// TestRetentionHeldMetric: the gauge sums retention-held over the streams.
func TestRetentionHeldMetric(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	c := dial(t, addr)
	for _, k := range []string{"a", "b"} {
		for i := 1; i <= 4; i++ {
			do(t, c, "XADD", k, fmt.Sprintf("%d-1", i), "f", "v")
		}
		runSteps(t, c, []step{
			{[]string{"XGROUP", "CREATE", k, "g", "0"}, "+OK"},
			{[]string{"XCFGSET", k, "MAXLEN", "1"}, "+OK"},
		})
	}
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		fams := metricstest.Scrape(t, srv.MetricsHandler())
		if v, _ := metricstest.Value(fams, "streamd_retention_held_entries"); v != 6 {
			return fmt.Errorf("streamd_retention_held_entries %v, want 6", v)
		}
		return nil
	})
}
