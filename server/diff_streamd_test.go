package server

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"streamd/replication"
)

// startStreamd starts a fresh in-process streamd on a free loopback port,
// data in a temporary directory, and returns its address; it is closed when
// the test ends.
func startStreamd(t testing.TB) string {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Bind = "127.0.0.1"
	cfg.Port = 0
	cfg.Dir = t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(cfg, replication.NewShard(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("streamd Serve did not return after Close")
		}
	})
	addr := ln.Addr().String()
	if err := waitPing(addr, nil, 10*time.Second); err != nil {
		t.Fatalf("streamd did not answer PING: %v", err)
	}
	return addr
}
