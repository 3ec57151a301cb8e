package server

import (
	"testing"
	"time"
)

// Blocking XREADGROUP ... CLAIM (Redis 8.4): the wait ends on a new entry,
// on XNACK, on the deadline, and when the oldest pending entry becomes idle
// enough (a server-side timer; the claim is then a new log entry).

func TestXReadGroupClaimBlockTimesOut(t *testing.T) {
	_, addr := startTestServer(t, nil)
	for _, proto := range []string{"2", "3"} {
		c := dial(t, addr)
		mustDo(t, c, "HELLO", proto)
		k := "bto" + proto
		mustDo(t, c, "XADD", k, "1-0", "f", "v")
		mustDo(t, c, "XGROUP", "CREATE", k, "g", "0")
		mustDo(t, c, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", k, ">")
		want := map[string]string{"2": "(nil array)", "3": "(null)"}[proto]
		if got := mustDo(t, c, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "100", "CLAIM", "500000", "STREAMS", k, ">"); got != want {
			t.Fatalf("RESP%s: %s", proto, got)
		}
	}
}

func TestXReadGroupClaimBlockWokenByXAdd(t *testing.T) {
	_, addr := startTestServer(t, nil)
	r, w := dial(t, addr), dial(t, addr)
	mustDo(t, w, "XADD", "bx", "1-0", "f", "v")
	mustDo(t, w, "XGROUP", "CREATE", "bx", "g", "0")
	mustDo(t, w, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "bx", ">")
	if err := r.Send("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "CLAIM", "500000", "STREAMS", "bx", ">"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, w, 1)
	mustDo(t, w, "XADD", "bx", "2-0", "f", "new")
	if got := receive(t, r); got != `[["bx", [["2-0", ["f", "new"], (integer) 0, (integer) 0]]]]` {
		t.Fatalf("woken read: %s", got)
	}
}

func TestXReadGroupClaimBlockWokenByXNack(t *testing.T) {
	_, addr := startTestServer(t, nil)
	r, w := dial(t, addr), dial(t, addr)
	mustDo(t, w, "XADD", "bn", "1-0", "f", "v")
	mustDo(t, w, "XGROUP", "CREATE", "bn", "g", "0")
	mustDo(t, w, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "bn", ">")
	if err := r.Send("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "CLAIM", "500000", "STREAMS", "bn", ">"); err != nil {
		t.Fatal(err)
	}
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
	mustDo(t, w, "XADD", "bt", "1-0", "f", "v")
	mustDo(t, w, "XGROUP", "CREATE", "bt", "g", "0")
	mustDo(t, w, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "bt", ">")
	// Nothing is idle for 300 ms yet and nothing is written after this:
	// only the server's timer can end the wait before BLOCK's 20 s.
	if err := r.Send("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "20000", "CLAIM", "300", "STREAMS", "bt", ">"); err != nil {
		t.Fatal(err)
	}
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
	if err := r.Send("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "20000", "CLAIM", "200", "STREAMS", "bp", ">"); err != nil {
		t.Fatal(err)
	}
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
