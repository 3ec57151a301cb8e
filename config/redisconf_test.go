package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDebianRedisConf: the redis.conf Debian installs (the checked-in copy
// of its directives, and the machine's own /etc/redis/redis.conf when
// readable, copied first) loads: what streamd knows is honoured (bind,
// port, dir, appendfsync, slowlog), every Redis directive it does not use
// is one warning line naming it, and a fixed directive's other value
// (appendonly no) a warning too.
func TestDebianRedisConf(t *testing.T) {
	files := map[string]string{"testdata": filepath.Join("testdata", "redis-debian.conf")}
	if b, err := os.ReadFile("/etc/redis/redis.conf"); err == nil {
		cp := filepath.Join(t.TempDir(), "redis.conf")
		if err := os.WriteFile(cp, b, 0o600); err != nil {
			t.Fatal(err)
		}
		files["/etc/redis/redis.conf"] = cp
	} else {
		t.Logf("only the checked-in copy: %v", err)
	}
	for what, path := range files {
		t.Run(what, func(t *testing.T) {
			cfg, err := Load([]string{path}, envMap(nil))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.Bind != "127.0.0.1 -::1" || cfg.Port != 6379 || cfg.Dir != "/var/lib/redis" || cfg.AppendFsync != "everysec" ||
				cfg.SlowlogMaxLen != 128 || cfg.Timeout != 0 || cfg.TCPKeepAlive != 300 || !cfg.ProtectedMode {
				t.Fatalf("known directives not honoured: %+v", cfg)
			}
			seen := map[string]int{}
			for _, w := range cfg.Warnings {
				if !strings.HasPrefix(w, path+":") {
					t.Errorf("warning %q does not name the file and line", w)
				}
				if _, rest, ok := strings.Cut(w, "ignoring Redis directive '"); ok {
					name, _, _ := strings.Cut(rest, "'")
					seen[name]++
					if !strings.HasSuffix(w, "' (streamd does not use it)") {
						t.Errorf("warning %q", w)
					}
				}
			}
			for _, name := range []string{"tcp-backlog", "daemonize", "pidfile", "logfile", "rdbcompression",
				"lazyfree-lazy-eviction", "client-output-buffer-limit", "dynamic-hz", "jemalloc-bg-thread"} {
				if seen[name] != 1 {
					t.Errorf("%d warnings for %s, want 1", seen[name], name)
				}
			}
			for name, n := range seen {
				if n != 1 || Lookup(name) != nil {
					t.Errorf("%s: %d warnings (a streamd directive: %v)", name, n, Lookup(name) != nil)
				}
			}
			if !slicesContainSuffix(cfg.Warnings, ": ignoring 'appendonly no': streamd supports only 'yes' (the Raft log is always on)") {
				t.Errorf("no appendonly warning in %q", cfg.Warnings)
			}
		})
	}
}

func slicesContainSuffix(ss []string, suffix string) bool {
	for _, s := range ss {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}

// TestRedisDirectivesOnTheCommandLine: as Redis's command line, a Redis
// directive is a flag too (accepted with the same warning); a refused one
// and a word that is no directive at all are errors, the latter with the
// nearest name.
func TestRedisDirectivesOnTheCommandLine(t *testing.T) {
	cfg, err := Load([]string{"--tcp-backlog", "511", "--maxmemory", "1gb", "--maxmemory-policy=noeviction", "--port", "7000"}, envMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ignoring Redis directive 'tcp-backlog' (streamd does not use it)"}
	if cfg.Port != 7000 || cfg.MaxMemory != 1<<30 || !reflect.DeepEqual(cfg.Warnings, want) {
		t.Fatalf("port %d, maxmemory %d, warnings %q, want %q", cfg.Port, cfg.MaxMemory, cfg.Warnings, want)
	}
	for args, wantErr := range map[string]string{
		"--prot 7000":                  "unknown flag --prot (did you mean --port?); see streamd --help",
		"--requirepas x":               "unknown flag --requirepas (did you mean --requirepass?); see streamd --help",
		"--metrics-adr :1":             "unknown flag --metrics-adr (did you mean --metrics-addr?); see streamd --help",
		"--versoin":                    "unknown flag --versoin (did you mean --version?); see streamd --help",
		"--frobnicate 1":               "unknown flag --frobnicate; see streamd --help",
		"--port":                       "flag --port needs a value; see streamd --help",
		"--rename-command x":           "Redis directive 'rename-command' is not supported: streamd cannot rename or hide commands",
		"--port 1 extra":               `unexpected argument "extra" (the config file comes first); see streamd --help`,
		"--notify-keyspace-events KEA": "", // a warning
	} {
		_, err := Load(strings.Fields(args), envMap(nil))
		if wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", args, err)
			}
			continue
		}
		if err == nil || err.Error() != wantErr {
			t.Errorf("%s: %v, want %q", args, err, wantErr)
		}
	}
	for _, a := range []string{"-v", "--version", "-version"} {
		if _, err := Load([]string{a}, envMap(nil)); err != ErrVersion {
			t.Errorf("%s: %v, want ErrVersion", a, err)
		}
	}
}

// TestSuggest: the nearest name within a third of the word's length.
func TestSuggest(t *testing.T) {
	for word, want := range map[string]string{
		"prot": "port", "PORT": "port", "bnid": "bind", "dri": "dir", "appendfsnyc": "appendfsync",
		"tls-prot": "tls-port", "raft-address": "raft-addr", "xyz": "", "maxmemroy": "maxmemory",
	} {
		if got := Suggest(word, false); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", word, got, want)
		}
	}
	if got := Suggest("tcp-backlgo", true); got != "tcp-backlog" {
		t.Errorf("with Redis's names: %q", got)
	}
	if got := Suggest("tcp-backlgo", false); got != "" {
		t.Errorf("without Redis's names: %q", got)
	}
	if d := editDistance("prot", "port"); d != 1 {
		t.Errorf("swap = %d", d)
	}
}

// TestFixedDirectives: CONFIG GET's values, the same value accepted and
// another refused with the reason (CONFIG SET's text), a file's other value
// a warning; the Redis directives list is sorted and holds the fixed ones.
func TestFixedDirectives(t *testing.T) {
	cfg := Default()
	for name, value := range map[string]string{"maxmemory": "0", "maxmemory-policy": "noeviction", "hz": "10",
		"notify-keyspace-events": "", "save": "", "appendonly": "yes", "databases": "16"} {
		p := Lookup(name)
		if p == nil {
			t.Fatalf("no directive %s", name)
		}
		if got := p.Get(&cfg); got != value {
			t.Errorf("%s = %q, want %q", name, got, value)
		}
		if err := p.Set(&cfg, value); err != nil {
			t.Errorf("%s %q: %v", name, value, err)
		}
		if !IsRedisDirective(name) {
			t.Errorf("%s is not in Redis's list", name)
		}
	}
	if err := Lookup("maxmemory").Set(&cfg, "0mb"); err != nil {
		t.Errorf("maxmemory 0mb: %v", err)
	}
	if err := Lookup("maxmemory").Set(&cfg, "-1"); err == nil || err.Error() != "argument must be a memory value" {
		t.Errorf("maxmemory -1: %v", err)
	}
	err := Lookup("maxmemory-policy").Set(&cfg, "allkeys-lru")
	if err == nil || err.Error() != "streamd supports only 'noeviction' (streamd never evicts keys)" {
		t.Fatalf("maxmemory-policy allkeys-lru: %v", err)
	}
	if !Lookup("databases").Immutable() || Lookup("maxmemory").Immutable() || Lookup("appendonly").Immutable() {
		t.Error("databases must be immutable, maxmemory and appendonly CONFIG SET-able")
	}
	for i := 1; i < len(redisDirectives); i++ {
		if redisDirectives[i-1] >= redisDirectives[i] {
			t.Fatalf("redisDirectives not sorted at %q", redisDirectives[i])
		}
	}
	for name := range refusedRedisDirectives {
		if !IsRedisDirective(name) {
			t.Errorf("refused %s is not a Redis directive", name)
		}
	}
}

// TestDirAbsolute: Load makes dir absolute against the working directory.
func TestDirAbsolute(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{"": filepath.Join(wd, "data"), "d1": filepath.Join(wd, "d1"), "/x/../y": "/y"} {
		args := []string{}
		if arg != "" {
			args = []string{"--dir", arg}
		}
		cfg, err := Load(args, envMap(nil))
		if err != nil || cfg.Dir != want {
			t.Errorf("dir %q: %q %v, want %q", arg, cfg.Dir, err, want)
		}
	}
}

// TestRewriteKeepsRedisDirectives: CONFIG REWRITE keeps the Redis
// directives it accepted and ignores as they are, comments out unknown
// words, and writes a fixed directive's true value.
func TestRewriteKeepsRedisDirectives(t *testing.T) {
	out := string(Rewrite([]byte("tcp-backlog 511\nfoo bar\nappendonly no\n"), Default()))
	for _, want := range []string{"tcp-backlog 511\n", "# ??? foo bar\n", "appendonly yes\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, out)
		}
	}
}
