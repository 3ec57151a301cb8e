package server

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
	"streamd/replication"
)

// TestTransientAccept: out of descriptors, buffers or memory and aborted
// connections are waited out; a closed listener or any other error ends
// the accept loop.
func TestTransientAccept(t *testing.T) {
	op := func(e error) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", e)}
	}
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if !transientAccept(op(e)) {
			t.Errorf("%v: not transient", e)
		}
	}
	for _, err := range []error{net.ErrClosed, op(syscall.EINVAL), errors.New("other")} {
		if transientAccept(err) {
			t.Errorf("%v: transient", err)
		}
	}
}

// failingListener fails Accept with EMFILE a number of times, then waits
// until closed.
type failingListener struct {
	fails  atomic.Int32
	closed chan struct{}
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	<-l.closed
	return nil, net.ErrClosed
}

func (l *failingListener) Close() error {
	select {
	case <-l.closed:
	default:
		close(l.closed)
	}
	return nil
}

func (l *failingListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// lineCounter counts log lines containing a text and keeps the last.
type lineCounter struct {
	mu    sync.Mutex
	text  string
	n     int
	last  string
	total int
}

func (w *lineCounter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if strings.Contains(l, w.text) {
			w.n++
			w.last = l
		}
	}
	return len(p), nil
}

func (w *lineCounter) count() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n, w.last
}

// TestAcceptErrorLogRateLimited: a burst of EMFILE from accept is logged
// at most once a second (the later line counting the ones left out), and
// the server keeps serving through it.
func TestAcceptErrorLogRateLimited(t *testing.T) {
	const fails = 9 // backoffs 5ms..1s: about 2.5s in all
	w := &lineCounter{text: "accept failed"}
	cfg := config.Default()
	cfg.Dir = t.TempDir()
	shard := replication.NewShard()
	defer shard.Close(false)
	srv := New(cfg, shard, slog.New(slog.NewTextHandler(w, nil)))
	ln := &failingListener{closed: make(chan struct{})}
	ln.fails.Store(fails)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	testutil.Eventually(t, 30*time.Second, 10*time.Millisecond, func() error {
		if ln.fails.Load() >= 0 {
			return errors.New("still failing")
		}
		return nil
	})
	elapsed := time.Since(start)
	srv.Close()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	n, last := w.count()
	if n < 1 || n > int(elapsed/time.Second)+1 {
		t.Fatalf("%d accept failures over %v logged %d lines, want 1 to %d", fails, elapsed, n, int(elapsed/time.Second)+1)
	}
	if n > 1 && !strings.Contains(last, "suppressed=") {
		t.Errorf("later line does not count the failures left out: %s", last)
	}
	if !strings.Contains(last, "too many open files") {
		t.Errorf("line does not say why: %s", last)
	}
	t.Logf("%d failures in %v: %d lines, last %s", fails, elapsed, n, last)
}
