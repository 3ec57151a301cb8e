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
	"slices"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
)

// TestHelp: -h and --help ask for help, which lists every directive with
// its default and text under its group, in 100 columns, with two examples;
// the binary prints it to stdout and exits 0.
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

// checkHelp requires, for every directive, a line "  --name (default D)"
// under its group's heading followed by its help text (wrapped: the
// indented lines up to the next directive, joined, are the text); every
// line within 100 columns; the groups in config.Groups' order; and an
// Examples section with two commands.
func checkHelp(t *testing.T, help string) {
	t.Helper()
	lines := strings.Split(help, "\n")
	type entry struct{ group, def, text string }
	got := map[string]*entry{}
	var groups []string
	group, examples := "", 0
	var cur *entry
	for i, l := range lines {
		if len(l) > 100 {
			t.Errorf("line %d is %d columns: %q", i+1, len(l), l)
		}
		switch {
		case strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") && l != "":
			group, cur = strings.ToLower(strings.TrimSuffix(l, ":")), nil
			groups = append(groups, group)
		case strings.HasPrefix(l, "  --") && group != "examples":
			name, def, ok := strings.Cut(strings.TrimPrefix(l, "  --"), " (default ")
			if !ok || !strings.HasSuffix(def, ")") {
				t.Errorf("line %q", l)
				continue
			}
			cur = &entry{group: group, def: strings.TrimSuffix(def, ")")}
			got[name] = cur
		case strings.HasPrefix(l, "      ") && cur != nil:
			cur.text = strings.TrimSpace(cur.text + " " + strings.TrimSpace(l))
		case group == "examples" && strings.HasPrefix(l, "  streamd "):
			examples++
		}
	}
	for _, d := range config.Docs() {
		e := got[d.Name]
		if e == nil || e.group != d.Group || e.def != d.Default || e.text != strings.Join(strings.Fields(d.Help), " ") {
			t.Errorf("--help for %s: %+v, want group %s, default %s, %q", d.Name, e, d.Group, d.Default, d.Help)
		}
	}
	if want := append(slices.Clone(config.Groups), "examples"); !slices.Equal(groups, want) {
		t.Errorf("--help's sections %q, want %q", groups, want)
	}
	if examples != 2 {
		t.Errorf("%d examples, want 2", examples)
	}
	if !strings.Contains(help, "STREAMD_") {
		t.Error("--help does not mention the environment variables")
	}
}

// TestREADMEConfigTable: the README's Configuration tables list exactly
// the directives of the config table, each under its group's label
// ("**Basics**"), with the same defaults and texts, so that the two cannot
// drift apart.
func TestREADMEConfigTable(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string][3]string{} // name -> group, default, help
	var order []string
	in, group := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "## ") {
			in = l == "## Configuration"
			continue
		}
		if in && strings.HasPrefix(l, "**") && strings.HasSuffix(l, "**") {
			group = strings.ToLower(strings.Trim(l, "*"))
		}
		if !in || !strings.HasPrefix(l, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("README row %q: want 3 cells", l)
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		rows[name] = [3]string{group, strings.Trim(strings.TrimSpace(cells[1]), "`"), strings.TrimSpace(cells[2])}
		order = append(order, name)
	}
	var want strings.Builder
	docs := config.Docs()
	for _, g := range config.Groups {
		want.WriteString("**" + strings.ToUpper(g[:1]) + g[1:] + "**\n\n| name | default | what it changes |\n|---|---|---|\n")
		for _, d := range docs {
			if d.Group == g {
				want.WriteString("| `" + d.Name + "` | `" + d.Default + "` | " + d.Help + " |\n")
			}
		}
		want.WriteString("\n")
	}
	bad := len(rows) != len(docs) || len(order) != len(docs)
	for _, d := range docs {
		if row, ok := rows[d.Name]; !ok || row != [3]string{d.Group, d.Default, d.Help} {
			t.Errorf("README: %s has %q (listed: %v), want group %s, default %q and %q", d.Name, row, ok, d.Group, d.Default, d.Help)
			bad = true
		}
	}
	if bad {
		t.Fatalf("README's Configuration tables do not match config.Docs; want these:\n%s", want.String())
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
