package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// TestPipelineAroundBlockingCommand checks a connection that first sends
// plain writes one at a time, then one pipeline with a blocking read in the
// middle (writes before and after it are proposed around the block): every
// reply comes whole and in request order, later commands still work, and a
// close while blocked is seen (the waiter is dropped).
func TestPipelineAroundBlockingCommand(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	w := dial(t, addr)
	c := dial(t, addr)
	for i := 1; i <= 3; i++ { // plain writes one at a time
		if got, want := mustDo(t, c, "XADD", "s", fmt.Sprintf("%d-1", i), "f", "v"), fmt.Sprintf("%q", fmt.Sprintf("%d-1", i)); got != want {
			t.Fatalf("XADD %d = %s, want %s", i, got, want)
		}
	}
	// One write: a write, a read that blocks (and times out), and requests
	// behind it.
	raw := "*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$3\r\n4-1\r\n$1\r\nf\r\n$1\r\nv\r\n" +
		"*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$2\r\n50\r\n$7\r\nSTREAMS\r\n$2\r\ns2\r\n$1\r\n$\r\n" +
		"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$3\r\n5-1\r\n$1\r\nf\r\n$1\r\nv\r\n" +
		"*2\r\n$4\r\nXLEN\r\n$1\r\ns\r\n"
	if err := c.SendRaw([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`"4-1"`, "(nil array)", `"5-1"`, "(integer) 5"} {
		if got := receive(t, c); got != want {
			t.Fatalf("reply %d = %s, want %s", i, got, want)
		}
	}
	if got := mustDo(t, c, "XLEN", "s"); got != "(integer) 5" {
		t.Fatalf("XLEN after the pipeline = %s", got)
	}
	// Blocked again, then closed.
	if err := c.Send("XREAD", "BLOCK", "0", "STREAMS", "s3", "$"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, w, 1)
	c.Close()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := srv.hub().waits.Waiting(0, "s3"); n != 0 {
			return fmt.Errorf("Waiting = %d after close", n)
		}
		return nil
	})
	waitBlocked(t, w, 0)
}

// TestIdleTimeoutSparesBlocked checks "timeout": an idle client is closed,
// a blocked one is not (as Redis), and it is still woken afterwards.
func TestIdleTimeoutSparesBlocked(t *testing.T) {
	_, addr := startTestServer(t, nil)
	admin := dial(t, addr)
	idle := dial(t, addr)
	blocked := dial(t, addr)
	mustDo(t, idle, "PING")
	mustDo(t, admin, "CONFIG", "SET", "timeout", "1")
	if err := blocked.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, admin, 1)
	// The idle client's pending read started before the timeout was set;
	// its next one (after this command) has the deadline.
	mustDo(t, idle, "PING")
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		// admin keeps itself active; idle goes away; blocked stays.
		v, err := admin.Do("CLIENT", "LIST")
		if err != nil {
			return err
		}
		if n := strings.Count(v.Str, "\n"); n != 2 {
			return fmt.Errorf("%d clients: %s", n, v.Str)
		}
		return nil
	})
	if _, err := idle.Do("PING"); err == nil {
		t.Fatal("idle client still served after the timeout")
	}
	if got := blockedCount(t, admin); got != 1 {
		t.Fatalf("blocked_clients = %d, want 1 (a blocked client has no idle timeout)", got)
	}
	mustDo(t, admin, "XADD", "s", "*", "f", "v")
	if got := receive(t, blocked); !strings.Contains(got, "f") {
		t.Fatalf("blocked client got %s", got)
	}
}
