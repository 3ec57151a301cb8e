package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamd/replication"
	"streamd/server"
)

// TestAppendfsyncArgs: appendfsync comes from the config file or the flag
// (the flag wins), defaults to always, and a bad value stops run before the
// data directory is touched.
func TestAppendfsyncArgs(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "s.conf")
	if err := os.WriteFile(conf, []byte("appendfsync everysec\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want replication.FsyncPolicy
	}{
		{nil, replication.FsyncAlways},
		{[]string{conf}, replication.FsyncEverySec},
		{[]string{conf, "--appendfsync", "always"}, replication.FsyncAlways},
		{[]string{"--appendfsync", "EVERYSEC"}, replication.FsyncEverySec},
	} {
		cfg, err := parseArgs(tt.args)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		got, err := server.FsyncPolicy(cfg.AppendFsync)
		if err != nil || got != tt.want {
			t.Errorf("%v: fsync %v %v, want %v", tt.args, got, err, tt.want)
		}
	}
	data := filepath.Join(dir, "data")
	err := run([]string{"--appendfsync", "no", "--dir", data, "--port", "0"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "appendfsync") {
		t.Fatalf("run with appendfsync no: %v", err)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("data dir created despite the bad config: %v", err)
	}
}
