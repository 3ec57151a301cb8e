package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// mustDo runs a command and returns its rendered reply.
func mustDo(t *testing.T, c *respConn, args ...string) string {
	t.Helper()
	v, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return v.String()
}

// blockedCount is INFO's blocked_clients.
func blockedCount(t *testing.T, c *respConn) int {
	t.Helper()
	v, err := c.Do("INFO", "clients")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(v.Str, "\r\n") {
		if n, ok := strings.CutPrefix(line, "blocked_clients:"); ok {
			i, _ := strconv.Atoi(n)
			return i
		}
	}
	t.Fatalf("no blocked_clients in INFO: %q", v.Str)
	return 0
}

// waitBlocked polls until n clients are blocked.
func waitBlocked(t *testing.T, c *respConn, n int) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if got := blockedCount(t, c); got != n {
			return fmt.Errorf("blocked_clients = %d, want %d", got, n)
		}
		return nil
	})
}

// receive reads a pending reply (of a command sent with Send).
func receive(t *testing.T, c *respConn) string {
	t.Helper()
	v, err := c.Receive(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return v.String()
}

func TestXReadBlockWokenByXAdd(t *testing.T) {
	_, addr := startTestServer(t, nil)
	tests := []struct {
		name, proto string
		cmd         []string
		want        string
	}{
		{"xread $ resp2", "2", []string{"XREAD", "BLOCK", "0", "STREAMS", "s1", "$"},
			`[["s1", [["5-1", ["f", "v"]]]]]`},
		{"xread id resp3", "3", []string{"XREAD", "COUNT", "5", "BLOCK", "10000", "STREAMS", "s2", "0"},
			`map{"s2": [["5-1", ["f", "v"]]]}`},
		{"xreadgroup >", "2", []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s3", ">"},
			`[["s3", [["5-1", ["f", "v"]]]]]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.cmd[len(tc.cmd)-2]
			w, r := dial(t, addr), dial(t, addr)
			mustDo(t, w, "XGROUP", "CREATE", key, "g", "$", "MKSTREAM")
			mustDo(t, r, "HELLO", tc.proto)
			if err := r.Send(tc.cmd...); err != nil {
				t.Fatal(err)
			}
			waitBlocked(t, w, 1)
			mustDo(t, w, "XADD", key, "5-1", "f", "v")
			if got := receive(t, r); got != tc.want {
				t.Fatalf("got %s\nwant %s", got, tc.want)
			}
			waitBlocked(t, w, 0)
		})
	}
}

func TestXReadBlockTimeoutAndDeadlineKept(t *testing.T) {
	_, addr := startTestServer(t, nil)
	w, r := dial(t, addr), dial(t, addr)
	mustDo(t, w, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	other := dial(t, addr)
	if err := r.Send("XREADGROUP", "GROUP", "g", "late", "BLOCK", "400", "STREAMS", "s", ">"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, w, 1)
	if err := other.Send("XREADGROUP", "GROUP", "g", "first", "BLOCK", "0", "STREAMS", "s", ">"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, w, 2)
	// FIFO: "late" blocked first and gets the entry; then "first" is
	// still blocked.
	mustDo(t, w, "XADD", "s", "1-1", "f", "v")
	if got := receive(t, r); got != `[["s", [["1-1", ["f", "v"]]]]]` {
		t.Fatalf("first waiter got %s", got)
	}
	waitBlocked(t, w, 1)
	mustDo(t, w, "XADD", "s", "2-1", "f", "v")
	if got := receive(t, other); got != `[["s", [["2-1", ["f", "v"]]]]]` {
		t.Fatalf("second waiter got %s", got)
	}

	// Deadline kept across wake-ups: XREAD after a high ID, woken by an
	// XADD every 50ms that never gives it anything. Were the deadline
	// restarted on each wake, no reply would come while the writes go on.
	start := time.Now()
	if err := r.Send("XREAD", "BLOCK", "300", "STREAMS", "s", "999999-0"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, w, 1)
	for i := 3; ; i++ {
		if time.Since(start) > 5*time.Second {
			t.Fatal("no timeout reply while woken every 50ms: deadline not kept")
		}
		mustDo(t, w, "XADD", "s", fmt.Sprintf("%d-1", i), "f", "v")
		v, err := r.Receive(50 * time.Millisecond)
		if err != nil {
			continue // still blocked
		}
		if got := v.String(); got != "(nil array)" {
			t.Fatalf("timeout reply %s, want a null array", got)
		}
		break
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("timed out after %v, before the 300ms deadline", el)
	}
}

func TestOneEntryOneGroupConsumer(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	// roundDone waits until the unblocker has offered the last change to
	// every waiter: entries that arrive one at a time are then served
	// strictly in arrival order (a change landing mid-round may be taken by
	// a waiter already retrying).
	roundDone := func() {
		testutil.Eventually(t, 5*time.Second, time.Millisecond, func() error {
			if !srv.hub().waits.Idle() {
				return fmt.Errorf("unblocker still serving")
			}
			return nil
		})
	}
	w := dial(t, addr)
	mustDo(t, w, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	const n = 4
	readers := make([]*respConn, n)
	for i := range readers {
		readers[i] = dial(t, addr)
		if err := readers[i].Send("XREADGROUP", "GROUP", "g", fmt.Sprint("c", i), "BLOCK", "0", "STREAMS", "s", ">"); err != nil {
			t.Fatal(err)
		}
		waitBlocked(t, w, i+1)
	}
	mustDo(t, w, "XADD", "s", "1-1", "f", "v")
	// Exactly the first reader is served; the others stay blocked.
	if got := receive(t, readers[0]); got != `[["s", [["1-1", ["f", "v"]]]]]` {
		t.Fatalf("reader 0 got %s", got)
	}
	waitBlocked(t, w, n-1)
	roundDone()
	if got := mustDo(t, w, "XPENDING", "s", "g"); got != `[(integer) 1, "1-1", "1-1", [["c0", "1"]]]` {
		t.Fatalf("XPENDING %s", got)
	}
	// Each next entry goes to the next reader in arrival order.
	for i := 1; i < n; i++ {
		id := fmt.Sprintf("%d-1", i+1)
		mustDo(t, w, "XADD", "s", id, "f", "v")
		if got := receive(t, readers[i]); got != `[["s", [["`+id+`", ["f", "v"]]]]]` {
			t.Fatalf("reader %d got %s", i, got)
		}
		roundDone()
	}
	waitBlocked(t, w, 0)
}

func TestBlockedXReadGroupKeyGone(t *testing.T) {
	_, addr := startTestServer(t, nil)
	tests := []struct {
		name string
		cmd  []string
		want string
	}{
		{"del", []string{"DEL", "s"}, "(error) UNBLOCKED the stream key no longer exists"},
		{"unlink", []string{"UNLINK", "s"}, "(error) UNBLOCKED the stream key no longer exists"},
		{"rename", []string{"RENAME", "s", "s2"}, "(error) UNBLOCKED the stream key no longer exists"},
		{"flushdb", []string{"FLUSHDB"}, "(error) UNBLOCKED the stream key no longer exists"},
		{"flushall", []string{"FLUSHALL"}, "(error) UNBLOCKED the stream key no longer exists"},
		{"expire", []string{"EXPIRE", "s", "0"}, "(error) UNBLOCKED the stream key no longer exists"},
		{"destroy", []string{"XGROUP", "DESTROY", "s", "g"},
			"(error) NOGROUP the consumer group this client was blocked on no longer exists"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, r := dial(t, addr), dial(t, addr)
			mustDo(t, w, "DEL", "s", "s2")
			mustDo(t, w, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
			if err := r.Send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"); err != nil {
				t.Fatal(err)
			}
			waitBlocked(t, w, 1)
			mustDo(t, w, tc.cmd...)
			if got := receive(t, r); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			waitBlocked(t, w, 0)
		})
	}
}

func TestClientUnblock(t *testing.T) {
	_, addr := startTestServer(t, nil)
	tests := []struct{ how, want string }{
		{"TIMEOUT", "(nil array)"},
		{"ERROR", "(error) UNBLOCKED client unblocked via CLIENT UNBLOCK"},
	}
	for _, tc := range tests {
		t.Run(tc.how, func(t *testing.T) {
			w, r := dial(t, addr), dial(t, addr)
			id := mustDo(t, r, "CLIENT", "ID")
			id = strings.TrimPrefix(id, "(integer) ")
			if err := r.Send("XREAD", "BLOCK", "0", "STREAMS", "nokey", "$"); err != nil {
				t.Fatal(err)
			}
			waitBlocked(t, w, 1)
			if got := mustDo(t, w, "CLIENT", "UNBLOCK", id, tc.how); got != "(integer) 1" {
				t.Fatalf("CLIENT UNBLOCK: %s", got)
			}
			if got := receive(t, r); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			// The waiter is gone: a later XADD finds nobody.
			mustDo(t, w, "XADD", "nokey", "*", "f", "v")
			if got := mustDo(t, r, "PING"); got != "+PONG" {
				t.Fatalf("after unblock: %s", got)
			}
		})
	}
}

func TestClosedConnectionDropsWaiter(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	w := dial(t, addr)
	r, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, w, 1)
	if n := srv.hub().waits.Waiting(0, "s"); n != 1 {
		t.Fatalf("Waiting = %d, want 1", n)
	}
	r.Close()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := srv.hub().waits.Waiting(0, "s"); n != 0 {
			return fmt.Errorf("Waiting = %d after close", n)
		}
		return nil
	})
	waitBlocked(t, w, 0)
}

func TestBlockInsideMultiDoesNotBlock(t *testing.T) {
	_, addr := startTestServer(t, nil)
	w, r := dial(t, addr), dial(t, addr)
	runSteps(t, r, []step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"XADD", "s", "1-1", "f", "v"}, "+QUEUED"},
		{[]string{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}, "+QUEUED"},
		{[]string{"XREAD", "BLOCK", "0", "STREAMS", "s", "0"}, "+QUEUED"},
		{[]string{"EXEC"}, `["1-1", (nil array), [["s", [["1-1", ["f", "v"]]]]]]`},
	})
	// A reader blocked on s is woken by an XADD inside EXEC, after EXEC.
	if err := r.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, w, 1)
	runSteps(t, w, []step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"XADD", "s", "2-1", "a", "b"}, "+QUEUED"},
		{[]string{"XADD", "s", "3-1", "c", "d"}, "+QUEUED"},
		{[]string{"EXEC"}, `["2-1", "3-1"]`},
	})
	if got := receive(t, r); got != `[["s", [["2-1", ["a", "b"]], ["3-1", ["c", "d"]]]]]` {
		t.Fatalf("woken after EXEC with %s", got)
	}
}
