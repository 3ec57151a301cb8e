package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
)

// TestHelp: -h and --help ask for help, which lists every directive with
// its default and text; the binary prints it to stdout and exits 0.
func TestHelp(t *testing.T) {
	for _, a := range []string{"-h", "--help", "-help"} {
		if _, err := parseArgs([]string{a}); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("%s: %v, want flag.ErrHelp", a, err)
		}
	}
	var b bytes.Buffer
	if err := writeHelp(&b); err != nil {
		t.Fatal(err)
	}
	checkHelp(t, b.String())

	out, err := exec.Command(streamdBinary(t), "--help").Output()
	if err != nil {
		t.Fatalf("streamd --help: %v", err)
	}
	if string(out) != b.String() {
		t.Fatalf("streamd --help printed:\n%s\nwant:\n%s", out, b.String())
	}
}

// checkHelp requires a line "  name  default  help" for every directive.
func checkHelp(t *testing.T, help string) {
	t.Helper()
	lines := map[string][]string{}
	for _, l := range strings.Split(help, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = append(lines[f[0]], l)
		}
	}
	for _, d := range config.Docs() {
		found := false
		for _, l := range lines[d.Name] {
			rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), d.Name))
			if strings.HasPrefix(rest, d.Default+"  ") && strings.HasSuffix(rest, d.Help) {
				found = true
			}
		}
		if !found {
			t.Errorf("--help has no line for %s (default %s)", d.Name, d.Default)
		}
	}
	if !strings.Contains(help, "STREAMD_") {
		t.Error("--help does not mention the environment variables")
	}
}

// TestREADMEConfigTable: the README's Configuration table lists exactly
// the directives of the config table, with the same defaults and texts, so that the
// two cannot drift apart.
func TestREADMEConfigTable(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string][2]string{} // name -> default, help
	var order []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "## ") {
			in = l == "## Configuration"
			continue
		}
		if !in || !strings.HasPrefix(l, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("README row %q: want 3 cells", l)
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		rows[name] = [2]string{strings.Trim(strings.TrimSpace(cells[1]), "`"), strings.TrimSpace(cells[2])}
		order = append(order, name)
	}
	var want strings.Builder
	docs := config.Docs()
	for _, d := range docs {
		want.WriteString("| `" + d.Name + "` | `" + d.Default + "` | " + d.Help + " |\n")
	}
	bad := len(rows) != len(docs) || len(order) != len(docs)
	for _, d := range docs {
		if row, ok := rows[d.Name]; !ok || row != [2]string{d.Default, d.Help} {
			t.Errorf("README: %s has %q (listed: %v), want default %q and %q", d.Name, row, ok, d.Default, d.Help)
			bad = true
		}
	}
	if bad {
		t.Fatalf("README's Configuration table does not match config.Docs; want these rows:\n%s", want.String())
	}
}

// TestJSONLogs: with --log-format json every line on stderr is a JSON
// object with time, level and msg; start-up says where the data lives, what
// is bound and this node's role; commands log nothing at the notice level.
func TestJSONLogs(t *testing.T) {
	port := pickPort(t)
	dir := t.TempDir()
	s := startReady(t, port, dir, "--log-format", "json")
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if !strings.Contains(s.stderr.String(), "Single node ready") {
			return errors.New("no role line yet")
		}
		return nil
	})
	before := s.stderr.String()
	c := newClient(t, port, 0)
	for i := 0; i < 20; i++ {
		do(t, c, "XADD", "s", "*", "f", "v")
		do(t, c, "XRANGE", "s", "-", "+")
	}
	do(t, c, "CONFIG", "SET", "slowlog-max-len", "5")
	c.Close()
	if after := s.stderr.String(); after != before {
		t.Fatalf("commands were logged:\n%s", strings.TrimPrefix(after, before))
	}
	s.terminate()

	var msgs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("log line %q has no %q", l, k)
			}
		}
		msgs = append(msgs, m)
	}
	abs, _ := filepath.Abs(dir)
	for msg, want := range map[string]map[string]any{
		"streamd starting":             {"log-format": "json", "loglevel": "notice"},
		"Opening the data directory":   {"dir": abs, "appendfsync": "always", "shards": float64(1)},
		"DB loaded from disk":          {"log-store": "wal"},
		"Shard data":                   {"dir": dir, "log": filepath.Join(dir, "wal")},
		"Ready to accept connections":  {"addr": s.addr()},
		"Metrics endpoint off":         {},
		"Single node ready":            {"node-id": "streamd", "roles": "shard0=leader"},
		"streamd is now ready to exit": {},
	} {
		var m map[string]any
		for _, l := range msgs {
			if s, _ := l["msg"].(string); strings.HasPrefix(s, msg) {
				m = l
			}
		}
		if m == nil {
			t.Errorf("no %q line", msg)
			continue
		}
		for k, v := range want {
			if m[k] != v {
				t.Errorf("%q: %s = %v, want %v", msg, k, m[k], v)
			}
		}
	}
}
