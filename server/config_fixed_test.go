package server

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"streamd/config"
	"streamd/internal/version"
)

// TestConfigFixedDirectives: the directives tools ask about answer CONFIG
// GET with what is true for streamd; CONFIG SET takes that value and
// refuses another with the reason; dir is absolute.
func TestConfigFixedDirectives(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.Dir = "relative/data" })
	c := dial(t, addr)
	defer c.Close()
	for name, want := range map[string]string{
		"maxmemory": "0", "maxmemory-policy": "noeviction", "hz": "10", "notify-keyspace-events": "",
		"save": "", "appendonly": "yes", "databases": "16",
	} {
		if got := mustDo(t, c, "CONFIG", "GET", name); got != `["`+name+`", "`+want+`"]` {
			t.Errorf("CONFIG GET %s = %s, want %q", name, got, want)
		}
		if got := mustDo(t, c, "CONFIG", "SET", name, want); name != "databases" && got != "+OK" {
			t.Errorf("CONFIG SET %s %q = %s", name, want, got)
		}
	}
	for _, tt := range []struct{ name, value, why string }{
		{"maxmemory-policy", "allkeys-lru", "'noeviction' (streamd never evicts keys)"},
		{"hz", "100", "'10' (the background tasks (the expiry sweep) run 10 times a second)"},
		{"notify-keyspace-events", "Kg$xe", "'' (streamd sends no keyspace notifications)"},
		{"appendonly", "no", "'yes' (the Raft log is always on)"},
		{"save", "3600 1", "'' (snapshots are taken by log size, not save points)"},
	} {
		want := "(error) ERR CONFIG SET failed (possibly related to argument '" + tt.name + "') - streamd supports only " + tt.why
		if got := mustDo(t, c, "CONFIG", "SET", tt.name, tt.value); got != want {
			t.Errorf("CONFIG SET %s %s = %s\nwant %s", tt.name, tt.value, got, want)
		}
	}
	abs, _ := filepath.Abs("relative/data")
	if got := mustDo(t, c, "CONFIG", "GET", "dir"); got != `["dir", "`+abs+`"]` {
		t.Errorf("CONFIG GET dir = %s, want %s", got, abs)
	}
	// A Redis directive streamd does not use is unknown to CONFIG SET and
	// absent from CONFIG GET, as an unknown name in Redis.
	if got := mustDo(t, c, "CONFIG", "GET", "tcp-backlog"); got != "[]" {
		t.Errorf("CONFIG GET tcp-backlog = %s", got)
	}
}

// TestInfoServerVersion: INFO server and HELLO name the Redis release
// streamd follows (version.Redis, also in `streamd --version`), INFO
// server streamd's own release and the build's git fields in Redis's shapes.
func TestInfoServerVersion(t *testing.T) {
	if serverVersion != version.Redis {
		t.Fatalf("serverVersion %s, version.Redis %s", serverVersion, version.Redis)
	}
	// Issue #14: the reported release stays 7.x (rueidis keys CLUSTER
	// SHARDS off a major version >= 8; go-redis gates nothing on it).
	if !strings.HasPrefix(version.Redis, "7.") {
		t.Errorf("version.Redis %s, want a 7.x release", version.Redis)
	}
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	defer c.Close()
	// HELLO reports the same release (RESP2 and RESP3 maps alike).
	for _, proto := range []string{"2", "3"} {
		h, err := c.Do("HELLO", proto)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for i := 0; i+1 < len(h.Elems); i += 2 {
			if h.Elems[i].Str == "version" {
				got = h.Elems[i+1].Str
			}
		}
		if got != version.Redis {
			t.Errorf("HELLO %s version %q, want %q", proto, got, version.Redis)
		}
	}
	v, err := c.Do("INFO", "server")
	if err != nil {
		t.Fatal(err)
	}
	bi := version.Get()
	for _, want := range []string{"redis_version:" + version.Redis + "\r\n", "redis_git_sha1:" + bi.SHA1() + "\r\n",
		"redis_git_dirty:" + bi.DirtyFlag() + "\r\n", "redis_build_id:" + bi.BuildID + "\r\n",
		"streamd_version:" + version.Release + "\r\n", "streamd_git_sha1:" + bi.Commit + "\r\n"} {
		if !strings.Contains(v.Str, want) {
			t.Errorf("INFO server lacks %q:\n%s", want, v.Str)
		}
	}
}

// TestConfigGetVsRedis compares CONFIG GET for the names monitoring tools
// and clients ask about (redis_exporter, RedisInsight, BullMQ, redis-cli)
// with redis-server's: the same reply shape (a name, value pair each, in
// RESP2 and RESP3), the same values where streamd's truth is Redis's
// default, and the same answer to one CONFIG GET of several names.
func TestConfigGetVsRedis(t *testing.T) {
	p := newDiffPair(t)
	same := []string{"maxmemory", "maxmemory-policy", "hz", "notify-keyspace-events", "databases", "save",
		"latency-tracking", "slowlog-log-slower-than", "slowlog-max-len", "timeout", "tcp-keepalive",
		"cluster-enabled", "stream-node-max-entries", "stream-node-max-bytes", "proto-max-bulk-len", "protected-mode",
		"requirepass", "bind", "loglevel", "tls-port"}
	for _, name := range same {
		p.do("CONFIG", "GET", name)
	}
	// Several names: the same pairs (Redis's order is its dict's, ours the
	// names' sorted order; no client relies on it).
	samePairs := func(args ...string) Value {
		t.Helper()
		var got [2]map[string]string
		var ours Value
		for i, c := range []*respConn{p.redis, p.ours} {
			v, err := c.Do(args...)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = map[string]string{"kind": string(v.Kind)}
			for j := 0; j+1 < len(v.Elems); j += 2 {
				got[i][v.Elems[j].Str] = v.Elems[j+1].Str
			}
			ours = v
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%q: streamd %v, redis %v", args, got[1], got[0])
		}
		return ours
	}
	samePairs("CONFIG", "GET", "maxmemory", "maxmemory-policy", "hz", "MAXMEMORY")
	p.do("CONFIG", "SET", "maxmemory", "0")
	p.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	p.do("CONFIG", "SET", "notify-keyspace-events", "")
	p.do("CONFIG", "GET", "no-such-directive")
	// Values that differ by design (Redis's appendonly is off in the test
	// server; ports, dirs and limits are each server's own): same shape.
	for _, name := range []string{"appendonly", "appendfsync", "dir", "port", "maxclients"} {
		var got [2]Value
		for i, c := range []*respConn{p.redis, p.ours} {
			v, err := c.Do("CONFIG", "GET", name)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = v
		}
		if len(got[0].Elems) != 2 || len(got[1].Elems) != 2 || got[1].Elems[0].Str != name || got[1].Elems[1].Kind != got[0].Elems[1].Kind {
			t.Errorf("CONFIG GET %s: streamd %s, redis %s", name, got[1], got[0])
		}
		if name == "dir" && !filepath.IsAbs(got[1].Elems[1].Str) {
			t.Errorf("CONFIG GET dir = %s, not absolute", got[1])
		}
	}
	for _, c := range []*respConn{p.redis, p.ours} {
		if _, err := c.Do("HELLO", "3"); err != nil {
			t.Fatal(err)
		}
	}
	if v := samePairs("CONFIG", "GET", "maxmemory", "hz"); v.Kind != '%' {
		t.Errorf("RESP3 CONFIG GET = %s, want a map", v)
	}
}
