package server

import (
	"errors"
	"log/slog"
	"net"
	"os"
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

// TestAcceptErrorLogRateLimited: a burst of EMFILE from accept is logged
// at most once a second (the later line counting the ones left out), and
// the server keeps serving through it.
func TestAcceptErrorLogRateLimited(t *testing.T) {
	const fails = 9 // backoffs 5ms..1s: about 2.5s in all
	w := &testutil.LineCounter{Text: "accept failed"}
	cfg := config.Default()
	cfg.Dir = t.TempDir()
	shard := replication.NewShard()
	defer shard.Close(false)
	srv := New(cfg, shard, slog.New(slog.NewTextHandler(w, nil)))
	ln := testutil.NewFailingListener(fails)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	testutil.RequireLoggedOncePerSecond(t, ln, w, start)
	srv.Close()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
