package server

import (
	"fmt"
	"testing"
	"time"

	"streamd/internal/testutil"
)

func TestMultiExecErrors(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"EXEC"}, "(error) ERR EXEC without MULTI"},
		{[]string{"DISCARD"}, "(error) ERR DISCARD without MULTI"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"MULTI"}, "(error) ERR MULTI calls can not be nested"},
		{[]string{"WATCH", "x"}, "(error) ERR WATCH inside MULTI is not allowed"},
		// Neither error above aborts the transaction (Redis runs them
		// outside the queue).
		{[]string{"PING"}, "+QUEUED"},
		{[]string{"EXEC"}, "[+PONG]"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"XADD", "s", "1-1", "f", "v"}, "+QUEUED"},
		{[]string{"NOSUCHCMD"}, "(error) ERR unknown command 'NOSUCHCMD', with args beginning with: "},
		{[]string{"XADD", "s"}, "(error) ERR wrong number of arguments for 'xadd' command"},
		{[]string{"EXEC"}, "(error) EXECABORT Transaction discarded because of previous errors."},
		{[]string{"XLEN", "s"}, "(integer) 0"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"XADD", "s", "1-1", "f", "v"}, "+QUEUED"},
		{[]string{"DISCARD"}, "+OK"},
		{[]string{"XLEN", "s"}, "(integer) 0"},
		{[]string{"EXEC"}, "(error) ERR EXEC without MULTI"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"EXEC"}, "[]"},
	})
}

func TestMultiExecRunsInOrder(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"XADD", "s", "1-1", "f", "v"}, "+QUEUED"},
		{[]string{"XLEN", "s"}, "+QUEUED"},
		// Argument errors found at EXEC are that command's reply only.
		{[]string{"XADD", "s", "bad", "f", "v"}, "+QUEUED"},
		{[]string{"XADD", "s", "1-1", "f", "v"}, "+QUEUED"},
		{[]string{"PING", "x"}, "+QUEUED"},
		{[]string{"SELECT", "1"}, "+QUEUED"},
		{[]string{"XADD", "s", "7-1", "f", "v"}, "+QUEUED"},
		{[]string{"UNWATCH"}, "+QUEUED"},
		{[]string{"EXEC"}, `["1-1", (integer) 1, (error) ERR Invalid stream ID specified as stream command argument, ` +
			`(error) ERR The ID specified in XADD is equal or smaller than the target stream top item, "x", +OK, "7-1", +OK]`},
		// SELECT inside MULTI moved the later XADD to database 1.
		{[]string{"XRANGE", "s", "-", "+"}, `[["7-1", ["f", "v"]]]`},
		{[]string{"SELECT", "0"}, "+OK"},
		{[]string{"XRANGE", "s", "-", "+"}, `[["1-1", ["f", "v"]]]`},
	})
}

func TestWatch(t *testing.T) {
	_, addr := startTestServer(t, nil)
	tests := []struct {
		name    string
		setup   [][]string // run before WATCH by the other client
		touch   []string   // run by the other client after WATCH
		aborted bool
	}{
		{"xadd", nil, []string{"XADD", "w", "1-1", "f", "v"}, true},
		{"del existing", [][]string{{"XADD", "w", "1-1", "f", "v"}}, []string{"DEL", "w"}, true},
		{"del missing", nil, []string{"DEL", "w"}, false},
		{"other key", nil, []string{"XADD", "other", "1-1", "f", "v"}, false},
		{"other db", [][]string{{"SELECT", "1"}}, []string{"XADD", "w", "1-1", "f", "v"}, false},
		{"flushall", [][]string{{"XADD", "w", "1-1", "f", "v"}}, []string{"FLUSHALL"}, true},
		{"flushdb", [][]string{{"XADD", "w", "1-1", "f", "v"}}, []string{"FLUSHDB"}, true},
		{"rename away", [][]string{{"XADD", "w", "1-1", "f", "v"}}, []string{"RENAME", "w", "w2"}, true},
		{"expire", [][]string{{"XADD", "w", "1-1", "f", "v"}}, []string{"EXPIRE", "w", "100"}, true},
		{"xdel something", [][]string{{"XADD", "w", "1-1", "f", "v"}}, []string{"XDEL", "w", "1-1"}, true},
		{"xdel nothing", [][]string{{"XADD", "w", "1-1", "f", "v"}}, []string{"XDEL", "w", "9-9"}, false},
		{"xgroup create", [][]string{{"XADD", "w", "1-1", "f", "v"}}, []string{"XGROUP", "CREATE", "w", "g", "0"}, false},
		{"xreadgroup", [][]string{{"XADD", "w", "1-1", "f", "v"}, {"XGROUP", "CREATE", "w", "g", "0"}},
			[]string{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "w", ">"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, o := dial(t, addr), dial(t, addr)
			mustDo(t, o, "FLUSHALL")
			mustDo(t, o, "SELECT", "0")
			for _, s := range tc.setup {
				mustDo(t, o, s...)
			}
			mustDo(t, c, "WATCH", "w")
			mustDo(t, o, tc.touch...)
			mustDo(t, c, "MULTI")
			mustDo(t, c, "XLEN", "w")
			got := mustDo(t, c, "EXEC")
			if aborted := got == "(nil array)"; aborted != tc.aborted {
				t.Fatalf("EXEC = %s, aborted %v, want %v", got, aborted, tc.aborted)
			}
		})
	}
}

func TestWatchExpiredKey(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, o := dial(t, addr), dial(t, addr)
	mustDo(t, o, "XADD", "k", "1-1", "f", "v")
	mustDo(t, o, "PEXPIRE", "k", "100")
	mustDo(t, c, "WATCH", "k")
	testutil.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if got := mustDo(t, o, "EXISTS", "k"); got != "(integer) 0" {
			return fmt.Errorf("EXISTS k = %s", got)
		}
		return nil
	})
	runSteps(t, c, []step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"PING"}, "+QUEUED"},
		{[]string{"EXEC"}, "(nil array)"},
	})
}

func TestWatchUnwatchAndOwnWrites(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, o := dial(t, addr), dial(t, addr)
	// UNWATCH forgets the key.
	mustDo(t, c, "WATCH", "k")
	mustDo(t, c, "UNWATCH")
	mustDo(t, o, "XADD", "k", "1-1", "f", "v")
	runSteps(t, c, []step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"PING"}, "+QUEUED"},
		{[]string{"EXEC"}, "[+PONG]"},
	})
	// EXEC unwatches: the next transaction is not affected by old touches.
	mustDo(t, c, "WATCH", "k")
	mustDo(t, c, "MULTI")
	mustDo(t, c, "EXEC")
	mustDo(t, o, "XADD", "k", "2-1", "f", "v")
	runSteps(t, c, []step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"XLEN", "k"}, "+QUEUED"},
		{[]string{"EXEC"}, "[(integer) 2]"},
	})
	// A queued UNWATCH does not save a transaction already dirty.
	mustDo(t, c, "WATCH", "k")
	mustDo(t, o, "XADD", "k", "3-1", "f", "v")
	runSteps(t, c, []step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"UNWATCH"}, "+QUEUED"},
		{[]string{"EXEC"}, "(nil array)"},
	})
	// The client's own write also makes its WATCH dirty, as in Redis.
	mustDo(t, c, "WATCH", "k")
	mustDo(t, c, "XADD", "k", "4-1", "f", "v")
	runSteps(t, c, []step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"PING"}, "+QUEUED"},
		{[]string{"EXEC"}, "(nil array)"},
	})
	// DISCARD unwatches too.
	mustDo(t, c, "WATCH", "k")
	mustDo(t, c, "MULTI")
	mustDo(t, c, "DISCARD")
	mustDo(t, o, "XADD", "k", "5-1", "f", "v")
	runSteps(t, c, []step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"PING"}, "+QUEUED"},
		{[]string{"EXEC"}, "[+PONG]"},
	})
}
