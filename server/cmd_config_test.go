package server

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"

	"streamd/config"
)

// TestConfigLiveParams: the SLOWLOG and metrics directives answer CONFIG
// GET with their defaults and change live on CONFIG SET, with Redis 7.0's
// range texts; CONFIG SET loglevel changes the logger's live level;
// log-format is read at start-up only.
func TestConfigLiveParams(t *testing.T) {
	level := new(slog.LevelVar)
	srv, addr := startTestServer(t, func(c *config.Config) { c.LogLevelVar = level })
	c := dial(t, addr)
	defer c.Close()
	if got := mustDo(t, c, "CONFIG", "GET", "slowlog*"); got != `["slowlog-log-slower-than", "10000", "slowlog-max-len", "128"]` {
		t.Fatalf("CONFIG GET slowlog* = %s", got)
	}
	if got := mustDo(t, c, "CONFIG", "GET", "metrics-max-streams"); got != `["metrics-max-streams", "100"]` {
		t.Fatalf("CONFIG GET metrics-max-streams = %s", got)
	}
	mustDo(t, c, "CONFIG", "SET", "slowlog-log-slower-than", "-1", "slowlog-max-len", "3", "metrics-max-streams", "0")
	if cfg := srv.config(); cfg.SlowlogLogSlowerThan != -1 || cfg.SlowlogMaxLen != 3 || cfg.MetricsMaxStreams != 0 {
		t.Fatalf("after CONFIG SET: %+v", cfg)
	}
	for _, tt := range []struct{ name, value, want string }{
		{"slowlog-log-slower-than", "-2", "ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument must be between -1 and 9223372036854775807 inclusive"},
		{"slowlog-max-len", "-1", "ERR CONFIG SET failed (possibly related to argument 'slowlog-max-len') - argument must be between 0 and 9223372036854775807 inclusive"},
		{"slowlog-max-len", "abc", "ERR CONFIG SET failed (possibly related to argument 'slowlog-max-len') - argument couldn't be parsed into an integer"},
		{"log-format", "json", "ERR CONFIG SET failed (possibly related to argument 'log-format') - can't set immutable config"},
	} {
		if v, err := c.Do("CONFIG", "SET", tt.name, tt.value); err != nil || v.String() != "(error) "+tt.want {
			t.Errorf("CONFIG SET %s %s = %v, %v; want %q", tt.name, tt.value, v, err, tt.want)
		}
	}
	for _, tt := range []struct {
		name string
		want slog.Level
	}{{"warning", slog.LevelWarn}, {"debug", slog.LevelDebug}, {"verbose", slog.LevelDebug}, {"notice", slog.LevelInfo}} {
		mustDo(t, c, "CONFIG", "SET", "loglevel", tt.name)
		if level.Level() != tt.want {
			t.Errorf("CONFIG SET loglevel %s: level %v, want %v", tt.name, level.Level(), tt.want)
		}
	}
}

// TestConfigRewriteCommand runs CONFIG REWRITE through go-redis: the file
// gets the CONFIG SET change; without a file, and with one that cannot be
// written, Redis's errors.
func TestConfigRewriteCommand(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "streamd.conf")
	if err := os.WriteFile(path, []byte("# streamd\nmaxclients 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, addr := startTestServer(t, func(c *config.Config) { c.ConfigFile = path; c.MaxClients = 100 })
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	must(t, "CONFIG SET", c.ConfigSet(ctx, "maxclients", "250").Err())
	must(t, "CONFIG REWRITE", c.ConfigRewrite(ctx).Err())
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	loaded := config.Default()
	if err := config.LoadFile(path, &loaded); err != nil || loaded.MaxClients != 250 {
		t.Fatalf("rewritten file (%v):\n%s", err, b)
	}
	if string(b[:len("# streamd\nmaxclients 250\n")]) != "# streamd\nmaxclients 250\n" {
		t.Errorf("not rewritten in place:\n%s", b)
	}

	_, addr2 := startTestServer(t, nil)
	c2 := redis.NewClient(&redis.Options{Addr: addr2})
	t.Cleanup(func() { c2.Close() })
	err = c2.ConfigRewrite(ctx).Err()
	wantEq(t, "no file", errString(err), "ERR The server is running without a config file")

	missing := filepath.Join(t.TempDir(), "no", "such", "dir.conf")
	_, addr3 := startTestServer(t, func(c *config.Config) { c.ConfigFile = missing })
	c3 := redis.NewClient(&redis.Options{Addr: addr3})
	t.Cleanup(func() { c3.Close() })
	err = c3.ConfigRewrite(ctx).Err()
	wantEq(t, "unwritable", errString(err), "ERR Rewriting config file: No such file or directory")

	help, err := c3.Do(ctx, "CONFIG", "HELP").StringSlice()
	must(t, "CONFIG HELP", err)
	wantEq(t, "CONFIG HELP REWRITE", help[7:9], []string{"REWRITE", "    Rewrite the configuration file."})
}

// errString is err's text ("" for nil).
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
