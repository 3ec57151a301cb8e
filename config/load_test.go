package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
	cfg, err := Load([]string{conf, "--port", "7002", "--slowlog-max-len=9"}, env)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Port, want.MaxClients, want.LogLevel, want.MetricsMaxStreams = 7002, 6, "warning", 7
	want.MetricsAddr, want.SlowlogLogSlowerThan, want.SlowlogMaxLen, want.LogFormat = "", -1, 9, "json"
	want.BalanceLeaders, want.ConfigFile = false, conf
	if want.Dir, err = filepath.Abs(want.Dir); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got  %+v\nwant %+v", cfg, want)
	}
	// Without the flag, the variable; without the variable, the file.
	if cfg, err := Load([]string{conf}, envMap(map[string]string{"STREAMD_PORT": "7001"})); err != nil || cfg.Port != 7001 || cfg.MaxClients != 5 {
		t.Fatalf("env over file: port %d maxclients %d, %v", cfg.Port, cfg.MaxClients, err)
	}
	// A relative config path is kept absolute (CONFIG REWRITE writes there).
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, conf)
	if err == nil && !strings.HasPrefix(rel, "-") {
		if cfg, err := Load([]string{rel}, envMap(nil)); err != nil || cfg.ConfigFile != conf {
			t.Fatalf("relative config file %q: ConfigFile %q, %v", rel, cfg.ConfigFile, err)
		}
	}
	for env, wantErr := range map[string]string{
		"STREAMD_PORT":       `STREAMD_PORT="x": argument couldn't be parsed into an integer`,
		"STREAMD_LOGLEVEL":   `STREAMD_LOGLEVEL="x": argument(s) must be one of the following: debug, verbose, notice, warning`,
		"STREAMD_LOG_FORMAT": `STREAMD_LOG_FORMAT="x": argument(s) must be one of the following: text, json`,
	} {
		if _, err := Load(nil, envMap(map[string]string{env: "x"})); err == nil || err.Error() != wantErr {
			t.Errorf("%s=x: %v, want %q", env, err, wantErr)
		}
	}
	// A bad flag value names the directive.
	if _, err := Load([]string{"--slowlog-log-slower-than", "-2"}, envMap(nil)); err == nil ||
		err.Error() != `slowlog-log-slower-than "-2": argument must be between -1 and 9223372036854775807 inclusive` {
		t.Fatalf("bad flag: %v", err)
	}
}

// TestEveryDirectiveIsAFlagAndAVariable: each directive of the table is
// accepted as --name value and as STREAMD_<NAME>, with its default value.
func TestEveryDirectiveIsAFlagAndAVariable(t *testing.T) {
	for _, d := range Docs() {
		v := d.Default
		switch {
		case v == `""`:
			v = ""
		case d.Name == "log-store":
			v = "wal"
		}
		if _, err := Load([]string{"--" + d.Name + "=" + v}, envMap(nil)); err != nil {
			t.Errorf("flag --%s=%q: %v", d.Name, v, err)
		}
		if _, err := Load(nil, envMap(map[string]string{EnvName(d.Name): v})); err != nil {
			t.Errorf("%s=%q: %v", EnvName(d.Name), v, err)
		}
		if d.Help == "" {
			t.Errorf("%s has no help text", d.Name)
		}
	}
	if got := EnvName("raft-heartbeat-timeout"); got != "STREAMD_RAFT_HEARTBEAT_TIMEOUT" {
		t.Fatalf("EnvName = %q", got)
	}
}

// TestLatencyTrackingDirectives: Redis 7's latency-tracking settings load
// from a file (the percentiles as several words), format as CONFIG GET
// does, and refuse what Redis refuses.
func TestLatencyTrackingDirectives(t *testing.T) {
	path := filepath.Join(t.TempDir(), "streamd.conf")
	if err := os.WriteFile(path, []byte("latency-tracking no\nlatency-tracking-info-percentiles 50 99.990 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Default()
	if err := LoadFile(path, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.LatencyTracking || cfg.LatencyTrackingInfoPercentiles != "50 99.99 100" {
		t.Errorf("loaded %v %q", cfg.LatencyTracking, cfg.LatencyTrackingInfoPercentiles)
	}
	if ps := cfg.LatencyPercentiles(); len(ps) != 3 || ps[1] != 99.99 {
		t.Errorf("LatencyPercentiles = %v", ps)
	}
	p := Lookup("latency-tracking-info-percentiles")
	for _, bad := range []string{"101", "-1", "50 x", "nan"} {
		if err := p.Set(&cfg, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := p.Set(&cfg, ""); err != nil || cfg.LatencyPercentiles() == nil || len(cfg.LatencyPercentiles()) != 0 {
		t.Errorf(`"" : %v %v`, err, cfg.LatencyPercentiles())
	}
}
