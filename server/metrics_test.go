package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"streamd/config"
	"streamd/internal/testutil"
)

// scrape GETs /metrics from h and parses the text exposition.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: status %d: %s", rec.Code, rec.Body.String())
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// metricValue returns the value of the sample of family name whose labels
// include all of labels (name=value pairs); ok is false if there is none.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Summary != nil:
			return float64(m.Summary.GetSampleCount()), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// wantMetric fails the test unless the sample exists with value want.
func wantMetric(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	got, ok := metricValue(fams, name, labels...)
	if !ok {
		t.Errorf("%s%v: missing", name, labels)
	} else if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

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

	fams := scrape(t, h)
	wantMetric(t, fams, 4, "streamd_commands_total", "cmd", "xadd")
	wantMetric(t, fams, 2, "streamd_commands_total", "cmd", "xgroup|create")
	wantMetric(t, fams, 1, "streamd_command_errors_total", "cmd", "xgroup|create", "kind", "failed")
	wantMetric(t, fams, 0, "streamd_command_errors_total", "cmd", "xgroup|create", "kind", "rejected")
	wantMetric(t, fams, 1, "streamd_command_errors_total", "cmd", "xadd", "kind", "rejected")
	wantMetric(t, fams, 4, "streamd_command_duration_seconds", "cmd", "xadd")
	wantMetric(t, fams, 1, "streamd_errors_total", "prefix", "BUSYGROUP")
	wantMetric(t, fams, 2, "streamd_errors_total", "prefix", "ERR")
	for _, m := range fams["streamd_commands_total"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if strings.Contains(strings.ToLower(lp.GetValue()), "nosuch") {
				t.Errorf("client input reached a label: %v", m)
			}
		}
	}
	wantMetric(t, fams, 1, "streamd_connected_clients")
	wantMetric(t, fams, 0, "streamd_blocked_clients")
	wantMetric(t, fams, 1, "streamd_keys", "db", "0")
	wantMetric(t, fams, 1, "streamd_keys", "db", "3")
	wantMetric(t, fams, 0, "streamd_keys", "db", "15")
	wantMetric(t, fams, 1, "streamd_persistence_info", "fsync", "always")
	// Writes that reached the log: 4 XADDs and the XGROUP CREATE that
	// succeeded (the BUSYGROUP one may or may not have been proposed).
	if v, ok := metricValue(fams, "streamd_raft_proposals_total"); !ok || v < 5 {
		t.Errorf("streamd_raft_proposals_total = %v (present %v), want >= 5", v, ok)
	}
	if v, ok := metricValue(fams, "streamd_raft_applied_index"); !ok || v < 1 {
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
	wantMetric(t, scrape(t, h), 2, "streamd_connected_clients")
	// Unblock it (b's reply is left unread; its connection is closed at cleanup).
	if _, err := c.Do("SELECT", "0"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do("XADD", "nokey", "*", "f", "v"); err != nil {
		t.Fatal(err)
	}
	pollMetric(t, h, 0, "streamd_blocked_clients")

	// Health and readiness.
	if code, body := get(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, h, "/readyz"); code != 200 || body != "ok\n" {
		t.Errorf("/readyz = %d %q", code, body)
	}
	srv.Close()
	if code, body := get(t, h, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") {
		t.Errorf("/readyz after Close = %d %q", code, body)
	}
	if code, _ := get(t, h, "/healthz"); code != 200 {
		t.Errorf("/healthz after Close = %d", code)
	}
}

// pollMetric scrapes until the sample equals want (5s at most).
func pollMetric(t *testing.T, h http.Handler, want float64, name string, labels ...string) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		got, ok := metricValue(scrape(t, h), name, labels...)
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
	if code, body := get(t, idle.MetricsHandler(), "/readyz"); code != http.StatusServiceUnavailable || body != "not serving yet\n" {
		t.Errorf("/readyz before Serve = %d %q", code, body)
	}
	// Two handlers (two registries) in one process do not collide.
	scrape(t, srv.MetricsHandler())
	scrape(t, idle.MetricsHandler())
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
	fams := scrape(t, srv.MetricsHandler())
	wantMetric(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xgroup|create", "prefix", "BUSYGROUP")
	wantMetric(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xreadgroup", "prefix", "NOGROUP")
	wantMetric(t, fams, 1, "streamd_command_errors_by_prefix_total", "cmd", "xadd", "prefix", "ERR")
}
