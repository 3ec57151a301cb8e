package main

import (
	"strconv"
	"strings"
	"testing"

	"streamd/config"
	"streamd/replication"
	"streamd/server"
)

// TestConfigMatchesReplication: config keeps the values that become
// replication types as plain text and numbers without importing
// replication, so its checks must accept exactly what replication and
// server take: log-store as replication.ParseLogStore ("" is the default
// store), shards up to replication.SlotCount, appendfsync as
// server.FsyncPolicy.
func TestConfigMatchesReplication(t *testing.T) {
	for _, v := range []string{"", "wal", "bolt", "WAL", "Bolt", "raft", "wal "} {
		cfg := config.Default()
		err := cfg.Set("log-store", v)
		want, werr := replication.ParseLogStore(strings.ToLower(v))
		if (err == nil) != (werr == nil) || (err == nil && cfg.LogStore != want) {
			t.Errorf("log-store %q: config %q, %v; replication %q, %v", v, cfg.LogStore, err, want, werr)
		}
	}
	for _, n := range []int{1, replication.SlotCount, replication.SlotCount + 1} {
		cfg := config.Default()
		err := cfg.Set("shards", strconv.Itoa(n))
		if (err == nil) != (n <= replication.SlotCount) {
			t.Errorf("shards %d: %v (slot count %d)", n, err, replication.SlotCount)
		}
	}
	for _, v := range []string{"", "always", "everysec", "EverySec", "no", "yes"} {
		cfg := config.Default()
		err := cfg.Set("appendfsync", v)
		_, perr := server.FsyncPolicy(v)
		if (err == nil) != (perr == nil) {
			t.Errorf("appendfsync %q: config %v, server.FsyncPolicy %v", v, err, perr)
		}
	}
}
