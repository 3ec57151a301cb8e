package server

import (
	"testing"
	"time"
)

// Blocking XREADGROUP ... CLAIM (Redis 8.4): the wait ends on a new entry,
// on XNACK, on the deadline, and when the oldest pending entry becomes idle
// enough (a server-side timer; the claim is then a new log entry).

// pendingToC1 makes stream key with entry 1-0, delivered to consumer c1 of
// group g (so pending there).
func pendingToC1(t *testing.T, c *respConn, key string) {
	t.Helper()
	mustDo(t, c, "XADD", key, "1-0", "f", "v")
	mustDo(t, c, "XGROUP", "CREATE", key, "g", "0")
	mustDo(t, c, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", key, ">")
}

// sendClaimRead sends, without waiting for the answer, consumer c2's
// XREADGROUP BLOCK block CLAIM minIdle of key's new entries.
func sendClaimRead(t *testing.T, r *respConn, key, block, minIdle string) {
	t.Helper()
	if err := r.Send("XREADGROUP", "GROUP", "g", "c2", "BLOCK", block, "CLAIM", minIdle, "STREAMS", key, ">"); err != nil {
		t.Fatal(err)
	}
}

func TestXReadGroupClaimBlockTimesOut(t *testing.T) {
	_, addr := startTestServer(t, nil)
	for _, proto := range []string{"2", "3"} {
		c := dial(t, addr)
		mustDo(t, c, "HELLO", proto)
		k := "bto" + proto
		pendingToC1(t, c, k)
		want := map[string]string{"2": "(nil array)", "3": "(null)"}[proto]
		if got := mustDo(t, c, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "100", "CLAIM", "500000", "STREAMS", k, ">"); got != want {
			t.Fatalf("RESP%s: %s", proto, got)
		}
	}
}

func TestXReadGroupClaimBlockWokenByXAdd(t *testing.T) {
	_, addr := startTestServer(t, nil)
	r, w := dial(t, addr), dial(t, addr)
	pendingToC1(t, w, "bx")
	sendClaimRead(t, r, "bx", "0", "500000")
	waitBlocked(t, w, 1)
	mustDo(t, w, "XADD", "bx", "2-0", "f", "new")
	if got := receive(t, r); got != `[["bx", [["2-0", ["f", "new"], (integer) 0, (integer) 0]]]]` {
		t.Fatalf("woken read: %s", got)
	}
}

func TestXReadGroupClaimBlockWokenByXNack(t *testing.T) {
	_, addr := startTestServer(t, nil)
	r, w := dial(t, addr), dial(t, addr)
	pendingToC1(t, w, "bn")
	sendClaimRead(t, r, "bn", "0", "500000")
	waitBlocked(t, w, 1)
	mustDo(t, w, "XNACK", "bn", "g", "FAIL", "IDS", "1", "1-0")
	got := receive(t, r)
	if want := `[["bn", [["1-0", ["f", "v"], (integer) `; len(got) < len(want) || got[:len(want)] != want {
		t.Fatalf("woken read: %s", got)
	}
	if got := mustDo(t, w, "XPENDING", "bn", "g", "-", "+", "10"); got[:19] != `[["1-0", "c2", (int` {
		t.Fatalf("XPENDING %s", got)
	}
}

func TestXReadGroupClaimBlockWokenByIdleTimer(t *testing.T) {
	_, addr := startTestServer(t, nil)
	r, w := dial(t, addr), dial(t, addr)
	pendingToC1(t, w, "bt")
	// Nothing is idle for 300 ms yet and nothing is written after this:
	// only the server's timer can end the wait before BLOCK's 20 s.
	sendClaimRead(t, r, "bt", "20000", "300")
	v, err := r.Receive(15 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	es := streamEntries(t, v)
	id, idle, count := claimRow(t, es[0])
	if id != "1-0" || idle < 300 || count != 1 {
		t.Fatalf("claimed %s", v)
	}
}

// TestXReadGroupClaimBlockNothingPending: blocked with nothing pending, the
// client still retries after min-idle-time, so an entry made pending
// meanwhile without waking anyone (here XCLAIM FORCE; another consumer's
// read is the same) is claimed once idle enough.
func TestXReadGroupClaimBlockNothingPending(t *testing.T) {
	_, addr := startTestServer(t, nil)
	r, w := dial(t, addr), dial(t, addr)
	mustDo(t, w, "XADD", "bp", "1-0", "f", "v")
	mustDo(t, w, "XGROUP", "CREATE", "bp", "g", "$")
	sendClaimRead(t, r, "bp", "20000", "200")
	waitBlocked(t, w, 1)
	if got := mustDo(t, w, "XCLAIM", "bp", "g", "c1", "0", "1-0", "FORCE", "JUSTID"); got != `["1-0"]` {
		t.Fatalf("XCLAIM FORCE: %s", got)
	}
	v, err := r.Receive(15 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if id, idle, count := claimRow(t, streamEntries(t, v)[0]); id != "1-0" || idle < 200 || count != 1 {
		t.Fatalf("claimed %s", v)
	}
}
