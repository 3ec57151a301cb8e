package server

import (
	"testing"
	"time"
)

// startStreamd starts a fresh in-process streamd (startTestServer) and
// returns its address once it answers PING.
func startStreamd(t testing.TB) string {
	t.Helper()
	_, addr := startTestServer(t, nil)
	if err := waitPing(addr, nil, 10*time.Second); err != nil {
		t.Fatalf("streamd did not answer PING: %v", err)
	}
	return addr
}
