package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// httpGet fetches url and returns its status and body.
func httpGet(url string) (int, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// sample returns the value of the exposition line "name{labels} value"
// (labels exactly as printed, "" for none).
func sample(t *testing.T, body, name, labels string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name+labels) + ` (\S+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no sample %s%s in /metrics:\n%s", name, labels, body)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s%s: %v", name, labels, err)
	}
	return v
}

// TestBinaryMetrics starts the binary with --metrics-addr on a free port and
// scrapes /metrics, /healthz and /readyz after a few writes.
func TestBinaryMetrics(t *testing.T) {
	port := pickPort(t)
	mport := testutil.FreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", mport)
	s := startReady(t, port, filepath.Join(t.TempDir(), "data"),
		"--metrics-addr", fmt.Sprintf("127.0.0.1:%d", mport), "--appendfsync", "everysec", "--log-store", "wal")
	// The process's output reaches s.logs() a little after it is written,
	// possibly after PING answered: poll the log.
	waitLog(t, s, fmt.Sprintf(`msg="Serving metrics" addr=127.0.0.1:%d`, mport), false)

	c := newClient(t, port, 0)
	for i := 0; i < 3; i++ {
		do(t, c, "XADD", "s", "*", "n", strconv.Itoa(i))
	}
	c2 := newClient(t, port, 2)
	do(t, c2, "XADD", "other", "*", "f", "v")

	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		code, body, err := httpGet(base + "/readyz")
		if err != nil {
			return err
		}
		if code != 200 || body != "ok\n" {
			return fmt.Errorf("/readyz = %d %q", code, body)
		}
		return nil
	})
	code, body, err := httpGet(base + "/healthz")
	if err != nil || code != 200 || body != "ok\n" {
		t.Fatalf("/healthz = %d %q %v", code, body, err)
	}
	code, body, err = httpGet(base + "/metrics")
	if err != nil || code != 200 {
		t.Fatalf("/metrics = %d %v", code, err)
	}
	if got := sample(t, body, "streamd_commands_total", `{cmd="xadd"}`); got != 4 {
		t.Errorf(`streamd_commands_total{cmd="xadd"} = %v, want 4`, got)
	}
	if got := sample(t, body, "streamd_keys", `{db="0"}`); got != 1 {
		t.Errorf(`streamd_keys{db="0"} = %v, want 1`, got)
	}
	if got := sample(t, body, "streamd_keys", `{db="2"}`); got != 1 {
		t.Errorf(`streamd_keys{db="2"} = %v, want 1`, got)
	}
	if got := sample(t, body, "streamd_persistence_info", `{durable="true",fsync="everysec",log_store="wal",shard="0"}`); got != 1 {
		t.Errorf("streamd_persistence_info = %v, want 1", got)
	}
	if got := sample(t, body, "streamd_raft_proposals_total", `{shard="0"}`); got < 4 {
		t.Errorf("streamd_raft_proposals_total = %v, want >= 4", got)
	}
	if got := sample(t, body, "streamd_connected_clients", ""); got < 2 {
		t.Errorf("streamd_connected_clients = %v, want >= 2", got)
	}
	sample(t, body, "process_start_time_seconds", "")
	sample(t, body, "go_goroutines", "")

	if v := asList(t, "CONFIG GET", do(t, c, "CONFIG", "GET", "metrics-addr")); len(v) != 2 || v[1] != fmt.Sprintf("127.0.0.1:%d", mport) {
		t.Errorf("CONFIG GET metrics-addr = %v", v)
	}

	s.terminate()
	if _, _, err := httpGet(base + "/healthz"); err == nil {
		t.Errorf("metrics endpoint still answers after exit")
	}
}

func TestParseArgsMetricsAddr(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "s.conf")
	if err := os.WriteFile(conf, []byte("metrics-addr 127.0.0.1:9999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "127.0.0.1:9121"},
		{[]string{"--metrics-addr", ""}, ""},
		{[]string{"--metrics-addr", "0.0.0.0:1"}, "0.0.0.0:1"},
		{[]string{conf}, "127.0.0.1:9999"},
		{[]string{conf, "--metrics-addr", ""}, ""},
	} {
		cfg, err := parseArgs(tt.args)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if cfg.MetricsAddr != tt.want {
			t.Errorf("%v: metrics-addr %q, want %q", tt.args, cfg.MetricsAddr, tt.want)
		}
	}
}

// TestMetricsAddrBusy: a metrics address that cannot be bound fails the
// start-up with an error naming the setting.
func TestMetricsAddrBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = run([]string{"--dir", filepath.Join(t.TempDir(), "data"), "--port", "0", "--metrics-addr", ln.Addr().String()}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "metrics-addr") {
		t.Fatalf("run with a busy metrics address: %v", err)
	}
}
