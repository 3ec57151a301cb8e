package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/metricstest"
	"streamd/internal/testutil"
)

func TestMetricsEndpoint(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	h := srv.MetricsHandler()

	c := dial(t, addr)
	for _, args := range [][]string{
		{"XADD", "s", "*", "f", "v"},
		{"XADD", "s", "*", "f", "v"},
		{"XADD", "s", "*", "f", "v"},
		{"SELECT", "3"},
		{"XADD", "t", "*", "f", "v"},
		{"XGROUP", "CREATE", "t", "g", "0"},
		{"XGROUP", "CREATE", "t", "g", "0"}, // BUSYGROUP: failed
		{"XADD", "t"},                       // arity: rejected
		{"NOSUCHCOMMAND", "x"},              // unknown: an ERR, no cmd label
	} {
		if _, err := c.Do(args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}

	fams := metricstest.Scrape(t, h)
	metricstest.Want(t, fams, 4, "streamd_commands_total", "cmd", "xadd")
	metricstest.Want(t, fams, 2, "streamd_commands_total", "cmd", "xgroup|create")
	metricstest.Want(t, fams, 1, "streamd_command_errors_total", "cmd", "xgroup|create", "kind", "failed")
	metricstest.Want(t, fams, 0, "streamd_command_errors_total", "cmd", "xgroup|create", "kind", "rejected")
	metricstest.Want(t, fams, 1, "streamd_command_errors_total", "cmd", "xadd", "kind", "rejected")
	metricstest.Want(t, fams, 4, "streamd_command_duration_seconds", "cmd", "xadd")
	metricstest.Want(t, fams, 1, "streamd_errors_total", "prefix", "BUSYGROUP")
	metricstest.Want(t, fams, 2, "streamd_errors_total", "prefix", "ERR")
	for _, m := range fams["streamd_commands_total"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if strings.Contains(strings.ToLower(lp.GetValue()), "nosuch") {
				t.Errorf("client input reached a label: %v", m)
			}
		}
	}
	metricstest.Want(t, fams, 1, "streamd_connected_clients")
	metricstest.Want(t, fams, 0, "streamd_blocked_clients")
	metricstest.Want(t, fams, 1, "streamd_keys", "db", "0")
	metricstest.Want(t, fams, 1, "streamd_keys", "db", "3")
	metricstest.Want(t, fams, 0, "streamd_keys", "db", "15")
	metricstest.Want(t, fams, 1, "streamd_persistence_info", "fsync", "always")
	// Writes that reached the log: 4 XADDs and the XGROUP CREATE that
	// succeeded (the BUSYGROUP one may or may not have been proposed).
	if v, ok := metricstest.Value(fams, "streamd_raft_proposals_total"); !ok || v < 5 {
		t.Errorf("streamd_raft_proposals_total = %v (present %v), want >= 5", v, ok)
	}
	if v, ok := metricstest.Value(fams, "streamd_raft_applied_index"); !ok || v < 1 {
		t.Errorf("streamd_raft_applied_index = %v (present %v), want >= 1", v, ok)
	}
	for _, name := range []string{"go_goroutines", "process_start_time_seconds", "streamd_last_save_timestamp_seconds"} {
		if fams[name] == nil {
			t.Errorf("%s missing", name)
		}
	}

	// A client parked in XREAD BLOCK shows as blocked.
	b := dial(t, addr)
	if err := b.Send("XREAD", "BLOCK", "0", "STREAMS", "nokey", "$"); err != nil {
		t.Fatal(err)
	}
	pollMetric(t, h, 1, "streamd_blocked_clients")
	metricstest.Want(t, metricstest.Scrape(t, h), 2, "streamd_connected_clients")
	// Unblock it (b's reply is left unread; its connection is closed at cleanup).
	if _, err := c.Do("SELECT", "0"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do("XADD", "nokey", "*", "f", "v"); err != nil {
		t.Fatal(err)
	}
	pollMetric(t, h, 0, "streamd_blocked_clients")

	// Health and readiness.
	if code, body := metricstest.Get(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := metricstest.Get(t, h, "/readyz"); code != 200 || body != "ok\n" {
		t.Errorf("/readyz = %d %q", code, body)
	}
	srv.Close()
	if code, body := metricstest.Get(t, h, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") {
		t.Errorf("/readyz after Close = %d %q", code, body)
	}
	if code, _ := metricstest.Get(t, h, "/healthz"); code != 200 {
		t.Errorf("/healthz after Close = %d", code)
	}
}

// pollMetric scrapes until the sample equals want (5s at most).
func pollMetric(t *testing.T, h http.Handler, want float64, name string, labels ...string) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		got, ok := metricstest.Value(metricstest.Scrape(t, h), name, labels...)
		if !ok || got != want {
			return fmt.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, want)
		}
		return nil
	})
}

func TestMetricsNotReadyBeforeServe(t *testing.T) {
	srv, _ := startTestServer(t, nil)
	// A second server over the same shard that was never served.
	idle := New(config.Default(), srv.Shard(), nil)
	if code, body := metricstest.Get(t, idle.MetricsHandler(), "/readyz"); code != http.StatusServiceUnavailable || body != "not serving yet\n" {
		t.Errorf("/readyz before Serve = %d %q", code, body)
	}
	// Two handlers (two registries) in one process do not collide.
	metricstest.Scrape(t, srv.MetricsHandler())
	metricstest.Scrape(t, idle.MetricsHandler())
}

func TestConfigGetMetricsAddr(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.MetricsAddr = "127.0.0.1:1234" })
	c := dial(t, addr)
	r, err := c.Do("CONFIG", "GET", "metrics-addr")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.String(); !strings.Contains(got, "127.0.0.1:1234") {
		t.Errorf("CONFIG GET metrics-addr = %s", got)
	}
	r, err = c.Do("CONFIG", "SET", "metrics-addr", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != '-' {
		t.Errorf("CONFIG SET metrics-addr = %s, want an error (immutable)", r.String())
	}
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
	fams := metricstest.Scrape(t, srv.MetricsHandler())
	metricstest.Want(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xgroup|create", "prefix", "BUSYGROUP")
	metricstest.Want(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xreadgroup", "prefix", "NOGROUP")
	metricstest.Want(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xadd", "prefix", "ERR")
}
