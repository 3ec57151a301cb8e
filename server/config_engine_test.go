package server

import (
	"io"
	"log/slog"
	"testing"

	"streamd/config"
	"streamd/replication"
)

// TestEngineConfigFromStartup: stream-node-max-entries given at start-up
// (file, flag or variable: all end in Config) reaches the state machine,
// CONFIG GET reports what the state holds, and a value changed with CONFIG
// SET survives a start-up configuration that leaves the setting at its
// default.
func TestEngineConfigFromStartup(t *testing.T) {
	shard := replication.NewShard()
	cfg := config.Default()
	cfg.StreamNodeMaxEntries = 10
	srv := New(cfg, shard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if got := shard.NodeMaxEntries(); got != 10 {
		t.Fatalf("engine stream-node-max-entries = %d after start-up with 10", got)
	}
	c := &Client{srv: srv, onShard: -1}
	get := func() string {
		r := srv.cmdCONFIGGET(c, [][]byte{[]byte("CONFIG"), []byte("GET"), []byte("stream-node-max-entries")})
		m := r.(Map)
		return string(m[0].V.(Bulk))
	}
	if v := get(); v != "10" {
		t.Fatalf("CONFIG GET = %s, want 10", v)
	}
	if r := srv.cmdCONFIGSET(c, [][]byte{[]byte("CONFIG"), []byte("SET"), []byte("stream-node-max-entries"), []byte("7")}); r != OK {
		t.Fatalf("CONFIG SET = %v", r)
	}
	srv.Close()

	// A "restart" over the same state with the default configuration
	// keeps the state's 7.
	srv = New(config.Default(), shard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer srv.Close()
	c.srv = srv
	if v := get(); v != "7" || shard.NodeMaxEntries() != 7 {
		t.Fatalf("CONFIG GET = %s, engine %d; want 7", v, shard.NodeMaxEntries())
	}
}
