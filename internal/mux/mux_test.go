package mux

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestMuxLayers routes raft connections of two shards over one listener,
// with data sent right behind the header (as raft does) arriving intact.
func TestMuxLayers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := New(ln, ln.Addr().String(), 2, slog.New(slog.NewTextHandler(io.Discard, nil)), Auth{Secret: "s"})
	m.Serve()
	defer m.Close()
	if got := m.layers[1].Addr().String(); got != ln.Addr().String() {
		t.Fatalf("layer addr %q", got)
	}
	for i, l := range m.layers {
		msg := strings.Repeat("x", 100*(i+1)) + "\n"
		c, err := l.Dial("127.0.0.1:1", 100*time.Millisecond)
		if err == nil {
			c.Close()
			t.Fatal("dial to a dead port succeeded")
		}
		c, err = l.Dial(raft.ServerAddress(l.Addr().String()), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, msg); err != nil {
			t.Fatal(err)
		}
		in, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil || line != msg {
			t.Fatalf("shard %d: read %d bytes, %v", i, len(line), err)
		}
	}
	// Closing one layer leaves the other serving; Accept on it fails.
	m.layers[0].Close()
	if _, err := m.layers[0].Accept(); err == nil {
		t.Fatal("accept on a closed layer")
	}
	c, err := m.layers[1].Dial(raft.ServerAddress(ln.Addr().String()), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := m.layers[1].Accept(); err != nil {
		t.Fatal(err)
	}
	// After close, accepted connections are cut.
	m.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection survived the mux's close")
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("listener still open after close")
	}
}

// TestMuxHandlers routes RESP and RPC connections to their registered
// handlers: a connection of a kind without a handler is closed, a tracked
// one is cut by Close (which waits for its handler), a detached one is not.
func TestMuxHandlers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := New(ln, ln.Addr().String(), 1, slog.New(slog.NewTextHandler(io.Discard, nil)), Auth{})
	m.Serve()
	defer m.Close()
	addr := ln.Addr().String()
	read := func(c net.Conn) (string, error) {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		return bufio.NewReader(c).ReadString('\n')
	}

	c, err := m.Dial(addr, KindRESP, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := read(c); err != io.EOF {
		t.Fatalf("RESP without a handler: %v, want EOF", err)
	}
	c.Close()

	detached := make(chan net.Conn, 1)
	m.HandleDetached(KindRESP, func(c net.Conn) {
		io.WriteString(c, "resp\n")
		detached <- c
	})
	tracked := make(chan int, 1)
	m.Handle(KindRPC, func(c net.Conn, shard int) {
		io.WriteString(c, "rpc\n")
		tracked <- shard
		c.Read(make([]byte, 1)) // until Close cuts it
	})
	rc, err := m.Dial(addr, KindRESP, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if line, err := read(rc); line != "resp\n" {
		t.Fatalf("RESP: %q, %v", line, err)
	}
	pc, err := m.Dial(addr, KindRPC, 7, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if line, err := read(pc); line != "rpc\n" || <-tracked != 7 {
		t.Fatalf("RPC: %q, %v", line, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := read(pc); err == nil {
		t.Fatal("tracked connection survived Close")
	}
	// The detached connection is still its handler's.
	sc := <-detached
	defer sc.Close()
	io.WriteString(sc, "still\n")
	if line, err := read(rc); line != "still\n" {
		t.Fatalf("detached after Close: %q, %v", line, err)
	}
}
