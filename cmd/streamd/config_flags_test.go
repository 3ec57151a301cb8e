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

	"streamd/internal/testutil"
	"streamd/server"
)

// envMap is a lookupEnv over a fixed set of variables.
func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// TestConfigPrecedence: a flag wins over STREAMD_<NAME>, which wins over
// the config file, which wins over the default; an empty variable counts;
// a bad variable is an error naming it; the file's path is kept.
func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "s.conf")
	if err := os.WriteFile(conf, []byte("port 7000\nmaxclients 5\nloglevel warning\nmetrics-max-streams 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := envMap(map[string]string{
		"STREAMD_PORT": "7001", "STREAMD_MAXCLIENTS": "6", "STREAMD_METRICS_ADDR": "",
		"STREAMD_SLOWLOG_LOG_SLOWER_THAN": "-1", "STREAMD_LOG_FORMAT": "JSON", "STREAMD_BALANCE_LEADERS": "no",
		"PORT": "1", // not ours
	})
	cfg, err := parseArgsEnv([]string{conf, "--port", "7002", "--slowlog-max-len=9"}, env)
	if err != nil {
		t.Fatal(err)
	}
	want := server.DefaultConfig()
	want.Port, want.MaxClients, want.LogLevel, want.MetricsMaxStreams = 7002, 6, "warning", 7
	want.MetricsAddr, want.SlowlogLogSlowerThan, want.SlowlogMaxLen, want.LogFormat = "", -1, 9, "json"
	want.BalanceLeaders, want.ConfigFile = false, conf
	if cfg != want {
		t.Fatalf("got  %+v\nwant %+v", cfg, want)
	}
	// Without the flag, the variable; without the variable, the file.
	if cfg, err := parseArgsEnv([]string{conf}, envMap(map[string]string{"STREAMD_PORT": "7001"})); err != nil || cfg.Port != 7001 || cfg.MaxClients != 5 {
		t.Fatalf("env over file: port %d maxclients %d, %v", cfg.Port, cfg.MaxClients, err)
	}
	// A relative config path is kept absolute (CONFIG REWRITE writes there).
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, conf)
	if err == nil && !strings.HasPrefix(rel, "-") {
		if cfg, err := parseArgsEnv([]string{rel}, envMap(nil)); err != nil || cfg.ConfigFile != conf {
			t.Fatalf("relative config file %q: ConfigFile %q, %v", rel, cfg.ConfigFile, err)
		}
	}
	for env, wantErr := range map[string]string{
		"STREAMD_PORT":       `STREAMD_PORT="x": argument couldn't be parsed into an integer`,
		"STREAMD_LOGLEVEL":   `STREAMD_LOGLEVEL="x": argument(s) must be one of the following: debug, verbose, notice, warning`,
		"STREAMD_LOG_FORMAT": `STREAMD_LOG_FORMAT="x": argument(s) must be one of the following: text, json`,
	} {
		if _, err := parseArgsEnv(nil, envMap(map[string]string{env: "x"})); err == nil || err.Error() != wantErr {
			t.Errorf("%s=x: %v, want %q", env, err, wantErr)
		}
	}
	// A bad flag value names the directive.
	if _, err := parseArgsEnv([]string{"--slowlog-log-slower-than", "-2"}, envMap(nil)); err == nil ||
		err.Error() != `slowlog-log-slower-than "-2": argument must be between -1 and 9223372036854775807 inclusive` {
		t.Fatalf("bad flag: %v", err)
	}
}

// TestEveryDirectiveIsAFlagAndAVariable: each directive of the table is
// accepted as --name value and as STREAMD_<NAME>, with its default value.
func TestEveryDirectiveIsAFlagAndAVariable(t *testing.T) {
	for _, d := range server.ConfigDocs() {
		v := d.Default
		switch {
		case v == `""`:
			v = ""
		case d.Name == "log-store":
			v = "wal"
		}
		if _, err := parseArgsEnv([]string{"--" + d.Name + "=" + v}, envMap(nil)); err != nil {
			t.Errorf("flag --%s=%q: %v", d.Name, v, err)
		}
		if _, err := parseArgsEnv(nil, envMap(map[string]string{server.EnvName(d.Name): v})); err != nil {
			t.Errorf("%s=%q: %v", server.EnvName(d.Name), v, err)
		}
		if d.Help == "" {
			t.Errorf("%s has no help text", d.Name)
		}
	}
	if got := server.EnvName("raft-heartbeat-timeout"); got != "STREAMD_RAFT_HEARTBEAT_TIMEOUT" {
		t.Fatalf("EnvName = %q", got)
	}
}

// TestHelp: -h and --help ask for help, which lists every directive with
// its default and text; the binary prints it to stdout and exits 0.
func TestHelp(t *testing.T) {
	for _, a := range []string{"-h", "--help", "-help"} {
		if _, err := parseArgsEnv([]string{a}, envMap(nil)); !errors.Is(err, flag.ErrHelp) {
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
	for _, d := range server.ConfigDocs() {
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
	docs := server.ConfigDocs()
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
		t.Fatalf("README's Configuration table does not match server.ConfigDocs; want these rows:\n%s", want.String())
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
