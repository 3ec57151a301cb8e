package main

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"streamd/internal/testutil"
)

// TestAcceptOutOfFiles: with its open-file limit lowered to 64 while it
// runs, a server flooded with connections gets "too many open files" from
// accept; it logs it, keeps running, and serves again once connections
// close (it used to exit).
func TestAcceptOutOfFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	port := pickPort(t)
	s := startReady(t, port, t.TempDir())
	lim := unix.Rlimit{Cur: 64, Max: 64}
	if err := unix.Prlimit(s.cmd.Process.Pid, unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		t.Skipf("prlimit: %v", err)
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 100 {
		c, err := net.DialTimeout("tcp", s.addr(), time.Second)
		if err != nil {
			break // the listen backlog is full too
		}
		conns = append(conns, c)
	}
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if s.exited() {
			t.Fatalf("streamd exited when out of file descriptors: %v\n%s", s.err, s.logs())
		}
		if !strings.Contains(s.logs(), "too many open files") {
			return fmt.Errorf("no accept failure logged yet (%d connections open)", len(conns))
		}
		return nil
	})
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	testutil.Eventually(t, 20*time.Second, 50*time.Millisecond, func() error {
		if s.exited() {
			t.Fatalf("streamd exited: %v\n%s", s.err, s.logs())
		}
		return ping(s.addr())
	})
}
