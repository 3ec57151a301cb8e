package testutil

import (
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// FailingListener is a net.Listener whose Accept fails with "too many open
// files" (EMFILE) Fails times, then waits until the listener is closed.
type FailingListener struct {
	// Fails counts the failures still to come; it is -1 once Accept is
	// waiting after the last one.
	Fails  atomic.Int32
	closed chan struct{}
	once   sync.Once
}

// NewFailingListener returns a listener whose Accept fails n times.
func NewFailingListener(n int) *FailingListener {
	l := &FailingListener{closed: make(chan struct{})}
	l.Fails.Store(int32(n))
	return l
}

// Accept fails with EMFILE while failures remain, then blocks until Close.
func (l *FailingListener) Accept() (net.Conn, error) {
	if l.Fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	<-l.closed
	return nil, net.ErrClosed
}

// Close ends a waiting Accept.
func (l *FailingListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is a loopback address.
func (l *FailingListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// LineCounter is an io.Writer for a logger that counts the lines holding
// Text and keeps the last of them.
type LineCounter struct {
	Text string
	mu   sync.Mutex
	n    int
	last string
}

// Write counts the lines of p that hold Text.
func (w *LineCounter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if strings.Contains(l, w.Text) {
			w.n++
			w.last = l
		}
	}
	return len(p), nil
}

// Count returns how many lines held Text, and the last one.
func (w *LineCounter) Count() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n, w.last
}

// RequireLoggedOncePerSecond waits until ln has failed every time it was
// told to, then checks that w counted at least one line and no more than
// one a second since start, the last saying why (too many open files)
// and, if not the first, how many were left out ("suppressed=").
func RequireLoggedOncePerSecond(t testing.TB, ln *FailingListener, w *LineCounter, start time.Time) {
	t.Helper()
	Eventually(t, 30*time.Second, 10*time.Millisecond, func() error {
		if ln.Fails.Load() >= 0 {
			return errors.New("accept still failing")
		}
		return nil
	})
	elapsed := time.Since(start)
	n, last := w.Count()
	if most := int(elapsed/time.Second) + 1; n < 1 || n > most {
		t.Fatalf("accept failures over %v logged %d lines, want 1 to %d", elapsed, n, most)
	}
	if n > 1 && !strings.Contains(last, "suppressed=") {
		t.Errorf("later line does not count the failures left out: %s", last)
	}
	if !strings.Contains(last, "too many open files") {
		t.Errorf("line does not say why: %s", last)
	}
}
