package router

import (
	"errors"
	"net"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// TestPeerClosed: an idle connection is live; once its peer closes it, or
// sends bytes nobody asked for, it is not — and the peek consumes nothing.
func TestPeerClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pair := func() (client, server net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); s.Close() })
		return c, s
	}

	c, s := pair()
	if peerClosed(c) {
		t.Fatal("an idle live connection reported closed")
	}
	s.Close()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if !peerClosed(c) {
			return errors.New("the peer closed the connection; peerClosed still false")
		}
		return nil
	})

	c, s = pair()
	if _, err := s.Write([]byte("+x\r\n")); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if !peerClosed(c) {
			return errors.New("unsolicited bytes: peerClosed still false")
		}
		return nil
	})
	buf := make([]byte, 4)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "+x\r\n" {
		t.Fatalf("the peek consumed bytes: read %q, %v", buf[:n], err)
	}
}
