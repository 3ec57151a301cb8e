package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/replication"
)

func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "s.conf")
	if err := os.WriteFile(conf, []byte("port 7000\nrequirepass filepass\nmaxclients 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		args            []string
		port            int
		bind, dir, pass string
		maxClients      int
		wantErr         bool
	}{
		{"defaults", nil, 6379, "127.0.0.1", "./data", "", 10000, false},
		{"flags", []string{"--port", "7001", "--bind", "0.0.0.0", "--dir", "/tmp/d", "--requirepass", "p"}, 7001, "0.0.0.0", "/tmp/d", "p", 10000, false},
		{"file", []string{conf}, 7000, "127.0.0.1", "./data", "filepass", 5, false},
		{"flags override file", []string{conf, "--port", "7002", "--requirepass", "flagpass"}, 7002, "127.0.0.1", "./data", "flagpass", 5, false},
		{"missing file", []string{filepath.Join(dir, "nope.conf")}, 0, "", "", "", 0, true},
		{"unknown flag", []string{"--nope"}, 0, "", "", "", 0, true},
		{"extra argument", []string{conf, "--port", "1", "extra"}, 0, "", "", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseArgs(tt.args)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %+v", cfg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// dir comes out absolute (against the working directory).
			if wantDir, _ := filepath.Abs(tt.dir); cfg.Port != tt.port || cfg.Bind != tt.bind || cfg.Dir != wantDir || cfg.RequirePass != tt.pass || cfg.MaxClients != tt.maxClients {
				t.Fatalf("got %+v", cfg)
			}
		})
	}
}

// TestClusterArgs: the cluster flags (bare and Redis-style "yes"/"no"
// booleans, durations) reach the configuration, and inconsistent ones are
// refused before anything starts.
func TestClusterArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"--node-id", "n1", "--raft-addr", "127.0.0.1:7001", "--bootstrap",
		"--cluster-enabled", "yes", "--shards", "3", "--raft-election-timeout", "250ms", "--quorum-timeout", "2s",
		"--balance-leaders", "no", "--port", "7000"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NodeID != "n1" || cfg.RaftAddr != "127.0.0.1:7001" || !cfg.Bootstrap || !cfg.ClusterEnabled || cfg.Shards != 3 ||
		cfg.RaftElectionTimeout != 250*time.Millisecond || cfg.QuorumTimeout != 2*time.Second || cfg.BalanceLeaders || cfg.Port != 7000 {
		t.Fatalf("got %+v", cfg)
	}
	o, err := nodeOptions(cfg, replication.FsyncAlways, nil)
	if err != nil || o.NodeID != "n1" || o.ClientAddr != "127.0.0.1:7000" || !o.Bootstrap || o.Shards != 3 ||
		o.Timing.Election != 250*time.Millisecond || o.Timing.Heartbeat != time.Second || o.QuorumTimeout != 2*time.Second || o.Balance {
		t.Fatalf("nodeOptions = %+v, %v", o, err)
	}
	cfg, err = parseArgs([]string{"--node-id", "n2", "--raft-addr", "10.0.0.2:7001", "--bind", "0.0.0.0",
		"--peers", "n1=10.0.0.1:7001,n2=10.0.0.2:7001", "--cluster-enabled"})
	if err != nil || !cfg.ClusterEnabled {
		t.Fatalf("peers: %+v, %v", cfg, err)
	}
	o, err = nodeOptions(cfg, replication.FsyncAlways, nil)
	if err != nil || o.ClientAddr != "10.0.0.2:6379" || len(o.Peers) != 2 || o.Peers[1] != (replication.Member{ID: "n2", RaftAddr: "10.0.0.2:7001", Voter: true}) {
		t.Fatalf("nodeOptions = %+v, %v", o, err)
	}
	if o, err := nodeOptions(config.Default(), replication.FsyncAlways, nil); err != nil || o.NodeID != "" || o.Shards != 1 {
		t.Fatalf("single node options = %+v, %v", o, err)
	}
	for _, args := range [][]string{
		{"--raft-addr", "127.0.0.1:1"},
		{"--node-id", "n1"},
		{"--node-id", "n1", "--raft-addr", "127.0.0.1:1", "--bootstrap", "--join", "127.0.0.1:2"},
		{"--shards", "0"},
		{"--cluster-enabled", "maybe"},
		{"--quorum-timeout", "soon"},
	} {
		if cfg, err := parseArgs(args); err == nil {
			t.Errorf("%q: want an error, got %+v", args, cfg)
		}
	}
	if err := run([]string{"--node-id", "n1", "--raft-addr", "127.0.0.1:1", "--port", "0", "--dir", t.TempDir()}, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "fixed port") {
		t.Fatalf("cluster node on port 0: %v", err)
	}
}
