package mux

import (
	"log/slog"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// TestAcceptErrorLogRateLimited: a burst of EMFILE from the raft port's
// accept is logged at most once a second, the later line counting the
// ones left out, and the port keeps serving.
func TestAcceptErrorLogRateLimited(t *testing.T) {
	const fails = 9 // backoffs 5ms..1s: about 2.5s in all
	w := &testutil.LineCounter{Text: "accept failed"}
	ln := testutil.NewFailingListener(fails)
	m := New(ln, "127.0.0.1:1", 1, slog.New(slog.NewTextHandler(w, nil)), Auth{})
	start := time.Now()
	m.Serve()
	testutil.RequireLoggedOncePerSecond(t, ln, w, start)
	m.Close()
}
