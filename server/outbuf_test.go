package server

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
	"streamd/server/resp"
)

// TestSlowTrackingClient checks that a tracking client that stops reading
// neither blocks the writers whose writes it is told about nor holds
// unbounded output: XADDs from another client keep completing while the
// invalidations (1 MiB key names) pile up, and the silent client is
// disconnected once its pending output passes pushOutputLimit.
func TestSlowTrackingClient(t *testing.T) {
	_, addr := startTestServer(t, nil)
	slow, w := dial(t, addr), dial(t, addr)
	mustDo(t, slow, "HELLO", "3")
	mustDo(t, slow, "CLIENT", "TRACKING", "on", "BCAST")
	id := strings.TrimPrefix(mustDo(t, slow, "CLIENT", "ID"), "(integer) ")
	// slow reads nothing from here on.

	connected := func() bool {
		v, err := w.Do("CLIENT", "LIST")
		if err != nil {
			t.Fatalf("CLIENT LIST: %v", err)
		}
		return strings.Contains(v.Str, "id="+id+" ")
	}
	if !connected() {
		t.Fatal("tracking client not listed")
	}
	key := strings.Repeat("k", 1<<20)
	// Well past the limit plus what the sockets can buffer.
	n := pushOutputLimit/len(key) + 32
	gone := false
	for i := 0; i < n && !gone; i++ {
		start := time.Now()
		if err := w.Send("XADD", fmt.Sprintf("%s%d", key, i), "*", "f", "v"); err != nil {
			t.Fatalf("XADD %d: %v", i, err)
		}
		v, err := w.Receive(5 * time.Second)
		if err != nil || v.Kind != '$' {
			t.Fatalf("XADD %d blocked or failed after %v: %v %v", i, time.Since(start), v, err)
		}
		if i%8 == 7 {
			gone = !connected()
		}
	}
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		if connected() {
			return fmt.Errorf("client %s still connected", id)
		}
		return nil
	})
	// Its connection ends after whatever output had been written.
	slow.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, err := readValue(slow.r); err != nil {
			if strings.Contains(err.Error(), "timeout") {
				t.Fatalf("connection of the disconnected client still open: %v", err)
			}
			break
		}
	}
}

// TestPushDoesNotWaitForWriter checks that pushes to a client whose own
// reply output is stuck (it sent a pipeline and reads nothing) do not block
// the writer, and that replies and pushes arrive whole and in order once
// it reads.
func TestPushDoesNotWaitForWriter(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, w := dial(t, addr), dial(t, addr)
	mustDo(t, c, "HELLO", "3")
	mustDo(t, c, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p")
	mustDo(t, w, "XADD", "big", "1-1", "f", strings.Repeat("v", 1<<20))
	// c asks for 8 MiB of replies and reads none of them for now.
	const reads = 8
	for i := 0; i < reads; i++ {
		if err := c.Send("XRANGE", "big", "-", "+"); err != nil {
			t.Fatal(err)
		}
	}
	const writes = 200
	for i := 0; i < writes; i++ {
		start := time.Now()
		if err := w.Send("XADD", fmt.Sprintf("p%d", i), "*", "f", "v"); err != nil {
			t.Fatal(err)
		}
		if v, err := w.Receive(5 * time.Second); err != nil || v.Kind != '$' {
			t.Fatalf("XADD %d blocked or failed after %v: %v %v", i, time.Since(start), v, err)
		}
	}
	// Now read everything: 8 whole XRANGE replies and 200 whole pushes.
	c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	var replies, pushes int
	for replies < reads || pushes < writes {
		v, err := readValue(c.r)
		if err != nil {
			t.Fatalf("after %d replies, %d pushes: %v", replies, pushes, err)
		}
		switch {
		case v.Kind == '>' && len(v.Elems) == 2 && v.Elems[0].Str == "invalidate":
			if want := fmt.Sprintf("p%d", pushes); len(v.Elems[1].Elems) != 1 || v.Elems[1].Elems[0].Str != want {
				t.Fatalf("push %d: %s, want key %s", pushes, v, want)
			}
			pushes++
		case v.Kind == '*' && len(v.Elems) == 1 && len(v.Elems[0].Elems) == 2:
			replies++
		default:
			t.Fatalf("unexpected value %.200s", v.String())
		}
	}
	if got := mustDo(t, c, "PING"); got != "+PONG" {
		t.Fatalf("PING after: %s", got)
	}
}

// A push that arrives between a tracked read and its reply (another
// client's write invalidating the key just read) waits for that reply: were
// it sent first, the client would cache the old value after dropping it.
func TestPushHeldUntilTrackedReply(t *testing.T) {
	srv := New(config.Default(), nil, nil)
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := newClient(srv, a, 1, true)
	c.proto.Store(3)
	inv := Push{Bulk("invalidate"), Array{Bulk("k")}}

	c.holdPushes() // as trackRead does before the read
	c.Push(inv)    // another client's write lands before the reply
	c.out.mu.Lock()
	queued := len(c.out.buf)
	c.out.mu.Unlock()
	if queued != 0 {
		t.Fatalf("push queued during the hold (%d bytes)", queued)
	}
	c.reply(Bulk("old"))
	want := string(resp.AppendReply(resp.AppendReply(nil, Bulk("old"), 3), inv, 3))
	c.out.mu.Lock()
	got := string(c.out.buf)
	hold := c.out.hold
	c.out.mu.Unlock()
	if got != want {
		t.Fatalf("queued %q, want the reply then the push %q", got, want)
	}
	if hold {
		t.Fatal("hold not ended by the reply")
	}
	// After the reply, pushes go straight to the queue again.
	c.Push(inv)
	c.out.mu.Lock()
	n := c.out.queued
	c.out.mu.Unlock()
	if n != int64(2*len(resp.AppendReply(nil, inv, 3))+len(resp.AppendReply(nil, Bulk("old"), 3))) {
		t.Fatalf("queued %d bytes after the hold, want the second push queued too", n)
	}
}
