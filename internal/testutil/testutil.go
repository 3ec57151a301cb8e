// Package testutil holds the helpers that tests in several packages share:
// polling instead of sleeping, free loopback ports, the rule for the
// external Redis tools (skip locally without them, fail in CI), and a
// listener out of file descriptors with the check that its accept errors
// are logged at most once a second, and unpacking a .tar.gz fixture.
package testutil

import (
	"net"
	"os"
	"os/exec"
	"runtime"
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

// FreePort asks the kernel for a free loopback TCP port and releases it, so
// a child process (redis-server, the streamd binary) can bind it.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
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
