// Package testutil holds the helpers that tests in several packages share:
// polling instead of sleeping, free loopback ports, the rule for the
// external Redis tools (skip locally without them, fail in CI), and a
// listener out of file descriptors with the check that its accept errors
// are logged at most once a second, and unpacking a .tar.gz fixture.
package testutil

import (
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// Eventually calls f every tick until it returns nil or timeout passes, then
// fails the test with f's last error. It replaces sleeps that wait for state.
func Eventually(t testing.TB, timeout, tick time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %v", timeout, err)
		}
		time.Sleep(tick)
	}
}

// Ports FreePort hands out: below Linux's ephemeral range (32768–60999 by
// default), so that no outgoing connection, of this test process or
// another, takes one between FreePort and the child's bind (a Dapr cluster
// test once failed so: "raft-addr … is in use"); and apart from
// cmd/streamd's pickPort (17800–17899).
const (
	freePortBase = 20000
	freePortSpan = 10000
)

// freePortNext is the next port FreePort tries (an offset from
// freePortBase), starting at random so that test processes running at
// once seldom try the same ports, and advancing so that one process never
// hands out a port twice before its child binds it.
var freePortNext atomic.Int64

func init() { freePortNext.Store(rand.Int64N(freePortSpan)) }

// FreePort returns a loopback TCP port that is free now, so a child process
// (redis-server, the streamd binary) can bind it.
func FreePort(t testing.TB) int {
	t.Helper()
	for range freePortSpan {
		p := freePortBase + int(freePortNext.Add(1)%freePortSpan)
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatalf("free port: none in %d-%d", freePortBase, freePortBase+freePortSpan-1)
	return 0
}

// RequireTool returns the path of an external tool (redis-server, redis-cli,
// redis-benchmark). Without it the test is skipped, unless
// STREAMD_REQUIRE_REDIS is set (as .ci/run does), where it fails: CI
// installs the tools and must never skip silently.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("STREAMD_REQUIRE_REDIS") != "" {
		t.Fatalf("%s not on PATH and STREAMD_REQUIRE_REDIS is set", name)
	}
	t.Skipf("%s not on PATH (install redis-server to run this test; CI sets STREAMD_REQUIRE_REDIS=1)", name)
	return ""
}

// LiveHeap returns the live heap in bytes after two full collections (the
// second frees what the first's finalizers released), for benchmarks that
// report memory per item.
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
