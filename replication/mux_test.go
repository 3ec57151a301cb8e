package replication

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestMuxHeader checks the header codec and what it refuses.
func TestMuxHeader(t *testing.T) {
	for _, shard := range []int{0, 1, 127, 128, 300, maxMuxShard - 1} {
		b := appendMuxHeader(nil, muxKindRPC, shard)
		kind, got, err := readMuxHeader(bufio.NewReader(bytes.NewReader(b)))
		if err != nil || kind != muxKindRPC || got != shard {
			t.Fatalf("shard %d: kind %d shard %d err %v", shard, kind, got, err)
		}
	}
	for name, b := range map[string][]byte{
		"bad magic":   []byte("HTTP\x01\x00"),
		"short":       []byte("SDR"),
		"no shard":    []byte(muxMagic + "\x01"),
		"shard range": appendMuxHeader(nil, muxKindRaft, maxMuxShard),
	} {
		if _, _, err := readMuxHeader(bufio.NewReader(bytes.NewReader(b))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestMuxLayers routes raft connections of two shards over one listener,
// with data sent right behind the header (as raft does) arriving intact.
func TestMuxLayers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := newMux(ln, ln.Addr().String(), 2, nodeTestLogger(t))
	m.serve()
	defer m.close()
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
	m.close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection survived the mux's close")
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("listener still open after close")
	}
}
