package main

// Helpers for the durability tests on the real binary (durable_e2e_test.go,
// crash_test.go, corrupt_test.go): build the binary once per test run, start
// and stop it on a data directory, go-redis clients, and generic reply
// access. Waiting is always polling with a deadline (eventually / waitExit),
// never a bare sleep.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// TestMain removes the binary built by streamdBinary after all tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
	buildOut  []byte
)

// streamdBinary builds ./cmd/streamd once per test-binary run and returns
// the path of the executable.
func streamdBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "streamd-durable-bin-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "streamd")
		buildOut, buildErr = exec.Command("go", "build", "-o", buildBin, ".").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return buildBin
}

// Ports: this package's durability tests use 17800-17899 (the range given
// to them), handed out round-robin from a random start so that a port is
// not reused while the previous user may still hold it.
var (
	portMu   sync.Mutex
	portNext = -1
)

// pickPort returns a port in 17800-17899 that is free at the moment.
func pickPort(t *testing.T) int {
	t.Helper()
	portMu.Lock()
	defer portMu.Unlock()
	if portNext < 0 {
		portNext = rand.Intn(100)
	}
	for range 100 {
		p := 17800 + portNext%100
		portNext++
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("no free port in 17800-17899")
	return 0
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is one run of the streamd binary on a data directory.
type proc struct {
	t      *testing.T
	port   int
	dir    string
	cmd    *exec.Cmd
	stdout syncBuffer
	stderr syncBuffer
	pass   string        // --requirepass, sent (AUTH) before the readiness PING
	done   chan struct{} // closed when the process has exited
	state  *os.ProcessState
	err    error // from Wait
}

// addr is the server's host:port.
func (s *proc) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// logs returns what the process printed (stderr, then stdout).
func (s *proc) logs() string { return s.stderr.String() + s.stdout.String() }

// exited reports whether the process has exited.
func (s *proc) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// startServer starts the binary with --port port --dir dir (metrics off) and the extra
// arguments (a config file goes first, as the binary expects). It does not
// wait for readiness; see waitReady. The process is killed at test cleanup
// if still running, and its output is logged when the test failed.
func startServer(t *testing.T, port int, dir string, extra ...string) *proc {
	t.Helper()
	return startServerVia(t, nil, port, dir, extra...)
}

// startServerVia is startServer with the binary run by a wrapper command
// (prlimit, setpriv) that execs it.
func startServerVia(t *testing.T, wrapper []string, port int, dir string, extra ...string) *proc {
	t.Helper()
	bin := streamdBinary(t)
	args := append([]string(nil), wrapper[min(1, len(wrapper)):]...)
	if len(wrapper) > 0 {
		args = append(args, bin)
		bin = wrapper[0]
	}
	if len(extra) > 0 && !strings.HasPrefix(extra[0], "-") {
		args = append(args, extra[0])
		extra = extra[1:]
	}
	// Metrics are off unless extra turns them on: tests start many
	// binaries at once, which must not collide on the default 9121.
	args = append(args, "--port", strconv.Itoa(port), "--dir", dir, "--metrics-addr", "")
	return launch(t, bin, append(args, extra...), port, dir)
}

// launch runs bin with exactly args (the server at port, on dir); see
// startServer.
func launch(t *testing.T, bin string, args []string, port int, dir string) *proc {
	t.Helper()
	s := &proc{t: t, port: port, dir: dir, done: make(chan struct{})}
	for i, a := range args {
		if a == "--requirepass" && i+1 < len(args) {
			s.pass = args[i+1]
		}
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	// The child dies with the test binary (a timed-out test leaks nothing).
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start streamd: %v", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		s.state = s.cmd.ProcessState
		close(s.done)
	}()
	t.Cleanup(func() {
		if !s.exited() {
			s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("streamd (port %d, pid %d) output:\n%s", s.port, s.cmd.Process.Pid, s.logs())
		}
	})
	return s
}

// waitReady polls PING until the server answers; it fails the test if the
// process exits first or timeout passes.
func (s *proc) waitReady(timeout time.Duration) {
	s.t.Helper()
	testutil.Eventually(s.t, timeout, 10*time.Millisecond, func() error {
		if s.exited() {
			s.t.Fatalf("streamd exited before answering PING: %v\n%s", s.err, s.logs())
		}
		return pingAuth(s.addr(), s.pass)
	})
}

// waitExit waits up to timeout for the process to exit and reports whether
// it did.
func (s *proc) waitExit(timeout time.Duration) bool {
	select {
	case <-s.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// exitCode is the process's exit status (-1 if it was killed by a signal).
func (s *proc) exitCode() int { return s.state.ExitCode() }

// terminate sends SIGTERM and requires a clean exit (status 0) within 30s.
func (s *proc) terminate() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatalf("SIGTERM: %v", err)
	}
	if !s.waitExit(30 * time.Second) {
		s.t.Fatalf("streamd did not exit within 30s of SIGTERM")
	}
	if s.err != nil {
		s.t.Fatalf("streamd exit after SIGTERM: %v\n%s", s.err, s.logs())
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *proc) kill() {
	s.t.Helper()
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.t.Fatalf("SIGKILL: %v", err)
	}
	if !s.waitExit(30 * time.Second) {
		s.t.Fatalf("streamd still running 30s after SIGKILL")
	}
}

// startReady starts the server and waits until it answers PING.
func startReady(t *testing.T, port int, dir string, extra ...string) *proc {
	t.Helper()
	s := startServer(t, port, dir, extra...)
	s.waitReady(60 * time.Second)
	return s
}

// newClient returns a go-redis client for db on port. Retries are off: a
// command whose reply was lost must not be sent again (it would be applied
// twice), and the tests decide what an unanswered command means.
func newClient(t *testing.T, port, db int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:            net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		DB:              db,
		Protocol:        2,
		DisableIdentity: true,
		MaxRetries:      -1,
		DialTimeout:     2 * time.Second,
		ReadTimeout:     20 * time.Second,
		WriteTimeout:    20 * time.Second,
		PoolSize:        4,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// ctxT is a context that ends with the test (bounded, so no call hangs).
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// do runs one command and fails the test on an error reply.
func do(t *testing.T, c *redis.Client, args ...any) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := c.Do(ctx, args...).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// asList returns v as a reply array ([]any), failing the test otherwise.
func asList(t *testing.T, what string, v any) []any {
	t.Helper()
	if v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: want an array, got %T %v", what, v, v)
	}
	return l
}

// asStr returns v as a string (bulk or status reply).
func asStr(t *testing.T, what string, v any) string {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s: want a string, got %T %v", what, v, v)
	}
	return s
}

// asInt returns v as an integer reply.
func asInt(t *testing.T, what string, v any) int64 {
	t.Helper()
	n, ok := v.(int64)
	if !ok {
		t.Fatalf("%s: want an integer, got %T %v", what, v, v)
	}
	return n
}

// field returns the value after name in a flat RESP2 map reply.
func field(t *testing.T, what string, kv []any, name string) any {
	t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok && k == name {
			return kv[i+1]
		}
	}
	t.Fatalf("%s: no field %q in %v", what, name, kv)
	return nil
}

// dropFields returns a copy of a flat RESP2 map reply without the named
// fields (relative times that change between two reads).
func dropFields(kv []any, names ...string) []any {
	out := make([]any, 0, len(kv))
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		skip := false
		for _, n := range names {
			if k == n {
				skip = true
			}
		}
		if !skip {
			out = append(out, kv[i], kv[i+1])
		}
	}
	return out
}

// parseID splits a stream ID "ms-seq".
func parseID(id string) (ms, seq uint64, err error) {
	a, b, ok := strings.Cut(id, "-")
	if !ok {
		return 0, 0, fmt.Errorf("bad stream ID %q", id)
	}
	if ms, err = strconv.ParseUint(a, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("bad stream ID %q", id)
	}
	if seq, err = strconv.ParseUint(b, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("bad stream ID %q", id)
	}
	return ms, seq, nil
}

// cmpID compares two stream IDs (-1, 0, 1); malformed IDs compare as 0-0.
func cmpID(a, b string) int {
	am, as, _ := parseID(a)
	bm, bs, _ := parseID(b)
	switch {
	case am < bm || (am == bm && as < bs):
		return -1
	case am == bm && as == bs:
		return 0
	}
	return 1
}
