package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadFile(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		check   func(Config) bool
		wantErr string
	}{
		{"defaults kept", "# nothing\n\n", func(c Config) bool { return reflect.DeepEqual(c, Default()) }, ""},
		{"port and bind", "port 7000\nbind 127.0.0.1 -::1\n",
			func(c Config) bool { return c.Port == 7000 && c.Bind == "127.0.0.1 -::1" }, ""},
		{"quoted password", `requirepass "p a\x41ss"` + "\n", func(c Config) bool { return c.RequirePass == "p aAss" }, ""},
		{"single quotes", "dir '/tmp/x y'\n", func(c Config) bool { return c.Dir == "/tmp/x y" }, ""},
		{"memory units", "proto-max-bulk-len 1gb\nstream-node-max-bytes 4kb\n",
			func(c Config) bool { return c.ProtoMaxBulkLen == 1<<30 && c.StreamNodeMaxBytes == 4096 }, ""},
		{"names case-insensitive", "MAXCLIENTS 50\nStream-Node-Max-Entries 7\n",
			func(c Config) bool { return c.MaxClients == 50 && c.StreamNodeMaxEntries == 7 }, ""},
		{"inert directives at their only value", "save \"\"\nappendonly yes\ndatabases 16\n",
			func(c Config) bool { return true }, ""},
		{"unknown directive", "foo bar\n", nil, "Bad directive"},
		{"wrong arg count", "port 1 2\n", nil, "Bad directive"},
		{"bad integer", "maxclients many\n", nil, "couldn't be parsed into an integer"},
		{"out of range", "proto-max-bulk-len 10\n", nil, "between 1048576"},
		{"unbalanced quotes", "dir \"abc\n", nil, "unbalanced quotes"},
		{"unsupported value: a warning", "appendonly no\n", func(c Config) bool {
			return c.AppendFsync == "always" && len(c.Warnings) == 1 && strings.HasSuffix(c.Warnings[0],
				":1: ignoring 'appendonly no': streamd supports only 'yes' (the Raft log is always on)")
		}, ""},
		{"a misspelt directive", "prot 7000\n", nil, `"prot 7000": Bad directive or wrong number of arguments (did you mean 'port'?)`},
		{"a refused Redis directive", "rename-command CONFIG \"\"\n", nil, "Redis directive 'rename-command' is not supported: streamd cannot rename or hide commands"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "streamd.conf")
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := Default()
			err := LoadFile(path, &cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), ":1:") {
					t.Fatalf("err %v does not name line 1", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(cfg) {
				t.Fatalf("unexpected config %+v", cfg)
			}
		})
	}
}

func TestParseMemory(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"100", 100, true}, {"1k", 1000, true}, {"1KB", 1024, true}, {"2m", 2e6, true},
		{"2mb", 2 << 20, true}, {"1g", 1e9, true}, {"512mb", 512 << 20, true}, {"7b", 7, true},
		{"x", 0, false}, {"-1", 0, false}, {"99999999999gb", 0, false},
	}
	for _, tt := range tests {
		got, err := parseMemory(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseMemory(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestClusterConfig covers the cluster directives: parsing from a file,
// CheckCluster's consistency rules, and ParsePeers.
func TestClusterConfig(t *testing.T) {
	load := func(t *testing.T, text string) (Config, error) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "streamd.conf")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := Default()
		return cfg, LoadFile(path, &cfg)
	}
	d := Default()
	if d.Shards != 1 || d.ClusterEnabled || !d.BalanceLeaders || d.QuorumTimeout != 5*time.Second ||
		d.RaftHeartbeatTimeout != time.Second || d.RaftElectionTimeout != time.Second ||
		d.RaftLeaseTimeout != 500*time.Millisecond {
		t.Fatalf("defaults %+v", d)
	}
	if err := d.CheckCluster(); err != nil {
		t.Fatalf("single node defaults: %v", err)
	}
	cfg, err := load(t, "node-id n1\nraft-addr 127.0.0.1:7001\nbootstrap yes\nshards 4\ncluster-enabled yes\n"+
		"raft-heartbeat-timeout 200ms\nraft-election-timeout 300\nraft-lease-timeout 0.1s\nquorum-timeout 2s\nbalance-leaders no\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NodeID != "n1" || cfg.RaftAddr != "127.0.0.1:7001" || !cfg.Bootstrap || cfg.Shards != 4 || !cfg.ClusterEnabled ||
		cfg.RaftHeartbeatTimeout != 200*time.Millisecond || cfg.RaftElectionTimeout != 300*time.Millisecond ||
		cfg.RaftLeaseTimeout != 100*time.Millisecond || cfg.QuorumTimeout != 2*time.Second || cfg.BalanceLeaders {
		t.Fatalf("parsed %+v", cfg)
	}
	if err := cfg.CheckCluster(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ text, want string }{
		{"shards 0\n", "between 1 and 16384"},
		{"bootstrap maybe\n", "'yes' or 'no'"},
		{"raft-addr nohost\n", "not a host:port"},
		{"join 127.0.0.1:x\n", "no valid port"},
		{"quorum-timeout -1s\n", "positive duration"},
		{"raft-election-timeout soon\n", "duration such as"},
		{"node-id \"a b\"\n", "cannot contain"},
		{"peers n1=127.0.0.1:1,n2=127.0.0.1:1\n", "listed twice"},
		{"peers n1\n", "not id=host:port"},
	} {
		if _, err := load(t, tt.text); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.text, err, tt.want)
		}
	}
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{RaftAddr: "127.0.0.1:1"}, "need node-id"},
		{Config{NodeID: "n1"}, "needs raft-addr"},
		{Config{NodeID: "n1", RaftAddr: "127.0.0.1:1", Bootstrap: true, Join: "127.0.0.1:2"}, "only one of"},
		{Config{NodeID: "n1", RaftAddr: "127.0.0.1:1", Peers: "n2=127.0.0.1:2"}, "must include this node"},
		{Config{NodeID: "n1", RaftAddr: "127.0.0.1:1", Peers: "n1=127.0.0.1:3,n2=127.0.0.1:2"}, "but raft-addr is"},
		{Config{NodeID: "n1", RaftAddr: "127.0.0.1:1", Peers: "n1=127.0.0.1:1, n2=127.0.0.1:2"}, ""},
		{Config{NodeID: "n1", RaftAddr: "127.0.0.1:1", Join: "127.0.0.1:2"}, ""},
		{Config{NodeID: "n1", RaftAddr: "127.0.0.1:1"}, ""}, // restart of a member: no bootstrap/join needed
	} {
		err := tt.cfg.CheckCluster()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckCluster(%+v) = %v, want %q", tt.cfg, err, tt.want)
		}
	}
	peers, err := ParsePeers("n1=127.0.0.1:7001, n2=127.0.0.1:7002 n3=[::1]:7003")
	if err != nil || len(peers) != 3 || peers[2] != (Peer{ID: "n3", RaftAddr: "[::1]:7003"}) {
		t.Fatalf("ParsePeers = %v, %v", peers, err)
	}
	if p, err := ParsePeers(""); p != nil || err != nil {
		t.Fatalf("empty peers = %v, %v", p, err)
	}
}

// TestLoadEnv: STREAMD_<NAME> variables set their directives as file
// lines do; a bad one is an error naming it; Docs covers every
// directive with a help text.
func TestLoadEnv(t *testing.T) {
	env := map[string]string{"STREAMD_PORT": "7001", "STREAMD_STREAM_NODE_MAX_BYTES": "1kb", "STREAMD_CLUSTER_ENABLED": "yes",
		"STREAMD_REQUIREPASS": "", "STREAMD_QUORUM_TIMEOUT": "250"}
	cfg := Default()
	cfg.RequirePass = "old"
	if err := LoadEnv(&cfg, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 7001 || cfg.StreamNodeMaxBytes != 1024 || !cfg.ClusterEnabled || cfg.RequirePass != "" || cfg.QuorumTimeout != 250*time.Millisecond {
		t.Fatalf("got %+v", cfg)
	}
	err := LoadEnv(&cfg, func(k string) (string, bool) { return "maybe", k == "STREAMD_BOOTSTRAP" })
	if err == nil || err.Error() != `STREAMD_BOOTSTRAP="maybe": argument must be 'yes' or 'no'` {
		t.Fatalf("bad variable: %v", err)
	}
	docs := Docs()
	if len(docs) != len(directives) {
		t.Fatalf("%d docs for %d directives", len(docs), len(directives))
	}
	for _, d := range docs {
		if d.Help == "" || d.Default == "" {
			t.Errorf("%+v: no help or default text", d)
		}
	}
}

// TestMaxMemoryDirective: maxmemory takes Redis's memory values (units,
// 0 = no limit), refuses others with Redis's reason, and CONFIG GET and
// CONFIG REWRITE report it in bytes and with units.
func TestMaxMemoryDirective(t *testing.T) {
	p := Lookup("maxmemory")
	cfg := Default()
	for in, want := range map[string]int64{"0": 0, "100": 100, "1gb": 1 << 30, "100MB": 100 << 20, "2k": 2000, "5kb": 5 << 10} {
		if err := p.Set(&cfg, in); err != nil || cfg.MaxMemory != want {
			t.Errorf("maxmemory %q: %d, %v; want %d", in, cfg.MaxMemory, err, want)
		}
	}
	cfg.MaxMemory = 100 << 20
	if got := p.Get(&cfg); got != "104857600" {
		t.Errorf("CONFIG GET maxmemory = %q", got)
	}
	for _, bad := range []string{"-1", "1.5mb", "abc", "", "1tb"} {
		if err := p.Set(&cfg, bad); err == nil || err.Error() != "argument must be a memory value" {
			t.Errorf("maxmemory %q: %v", bad, err)
		}
	}
	if p.Immutable() || p.Replicated() {
		t.Error("maxmemory must be CONFIG SET-able and per node")
	}
}

// TestTransferHoldTimeout: transfer-hold-timeout defaults to 2s, takes a
// duration or 0 (no hold), refuses a negative or malformed value, and is
// settable at run time (CONFIG SET).
func TestTransferHoldTimeout(t *testing.T) {
	if d := Default().TransferHoldTimeout; d != 2*time.Second {
		t.Fatalf("default %v, want 2s", d)
	}
	p := Lookup("transfer-hold-timeout")
	if p == nil || p.Immutable() {
		t.Fatalf("transfer-hold-timeout: %v, want a settable directive", p)
	}
	cfg := Default()
	for _, tt := range []struct {
		v    string
		want time.Duration
	}{{"0", 0}, {"500ms", 500 * time.Millisecond}, {"250", 250 * time.Millisecond}, {"3s", 3 * time.Second}} {
		if err := p.Set(&cfg, tt.v); err != nil || cfg.TransferHoldTimeout != tt.want {
			t.Errorf("set %q: %v, %v; want %v", tt.v, err, cfg.TransferHoldTimeout, tt.want)
		}
	}
	for _, v := range []string{"-1s", "soon", "-5"} {
		if err := p.Set(&cfg, v); err == nil || !strings.Contains(err.Error(), "0 = no hold") {
			t.Errorf("set %q: err = %v, want the duration error", v, err)
		}
	}
}
