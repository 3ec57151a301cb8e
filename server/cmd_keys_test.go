package server

import (
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/replication/wire"
)

// TestKeyspaceCommands checks replies and error texts against what
// redis-server 7.0.15 answers for the same script.
func TestKeyspaceCommands(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"XADD", "s", "1-1", "a", "1"}, `"1-1"`},
		{[]string{"XADD", "t", "1-1", "a", "1"}, `"1-1"`},
		{[]string{"EXISTS", "s", "s", "t", "nokey"}, "(integer) 3"},
		{[]string{"TYPE", "s"}, "+stream"},
		{[]string{"TYPE", "nokey"}, "+none"},
		{[]string{"DBSIZE"}, "(integer) 2"},
		{[]string{"KEYS", "*"}, `["s", "t"]`},
		{[]string{"KEYS", "[s]"}, `["s"]`},
		{[]string{"SCAN", "0", "COUNT", "100", "MATCH", "s*", "TYPE", "stream"}, `["0", ["s"]]`},
		{[]string{"SCAN", "0", "TYPE", "string"}, `["0", []]`},
		{[]string{"SCAN", "x"}, "(error) ERR invalid cursor"},
		{[]string{"SCAN", "18446744073709551616"}, "(error) ERR invalid cursor"},
		{[]string{"SCAN", "0", "COUNT", "0"}, "(error) ERR syntax error"},
		{[]string{"SCAN", "0", "COUNT", "x"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"SCAN", "0", "MATCH"}, "(error) ERR syntax error"},
		{[]string{"SCAN", "0", "FOO", "1"}, "(error) ERR syntax error"},
		{[]string{"RENAME", "nokey", "x"}, "(error) ERR no such key"},
		{[]string{"RENAMENX", "nokey", "x"}, "(error) ERR no such key"},
		{[]string{"RENAMENX", "s", "t"}, "(integer) 0"},
		{[]string{"RENAME", "s", "s"}, "+OK"},
		{[]string{"RENAMENX", "s", "s"}, "(integer) 0"},
		{[]string{"RENAME", "s", "u"}, "+OK"},
		{[]string{"EXISTS", "s", "u"}, "(integer) 1"},
		{[]string{"EXPIRE", "u", "x"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"EXPIRE", "u", "10", "NX", "XX"}, "(error) ERR NX and XX, GT or LT options at the same time are not compatible"},
		{[]string{"EXPIRE", "u", "10", "GT", "LT"}, "(error) ERR GT and LT options at the same time are not compatible"},
		{[]string{"EXPIRE", "u", "x", "FOO"}, "(error) ERR Unsupported option FOO"},
		{[]string{"EXPIRE", "u", "9223372036854775807"}, "(error) ERR invalid expire time in 'expire' command"},
		{[]string{"PEXPIRE", "u", "9223372036854775807"}, "(error) ERR invalid expire time in 'pexpire' command"},
		{[]string{"EXPIREAT", "u", "9223372036854775807"}, "(error) ERR invalid expire time in 'expireat' command"},
		{[]string{"TTL", "u"}, "(integer) -1"},
		{[]string{"PTTL", "nokey"}, "(integer) -2"},
		{[]string{"EXPIRE", "u", "10", "XX"}, "(integer) 0"},
		{[]string{"EXPIRE", "u", "10", "GT"}, "(integer) 0"},
		{[]string{"EXPIRE", "u", "100"}, "(integer) 1"},
		{[]string{"TTL", "u"}, "(integer) 100"},
		{[]string{"EXPIRE", "u", "50", "GT"}, "(integer) 0"},
		{[]string{"EXPIRE", "u", "200", "NX"}, "(integer) 0"},
		{[]string{"EXPIRE", "nokey", "10"}, "(integer) 0"},
		{[]string{"PERSIST", "u"}, "(integer) 1"},
		{[]string{"PERSIST", "u"}, "(integer) 0"},
		{[]string{"PEXPIREAT", "u", "1"}, "(integer) 1"},
		{[]string{"EXISTS", "u"}, "(integer) 0"},
		{[]string{"DEL", "t", "t", "nokey"}, "(integer) 1"},
		{[]string{"UNLINK", "t"}, "(integer) 0"},
		{[]string{"FLUSHDB", "FOO"}, "(error) ERR syntax error"},
		{[]string{"FLUSHDB", "SYNC", "ASYNC"}, "(error) ERR syntax error"},
		{[]string{"FLUSHALL", "ASYNC"}, "+OK"},
		{[]string{"FLUSHDB", "sync"}, "+OK"},
		{[]string{"DBSIZE"}, "(integer) 0"},
		{[]string{"KEYS"}, "(error) ERR wrong number of arguments for 'keys' command"},
	})
}

func TestExpirySweep(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	if _, err := srv.Shard().Query(wire.ExpiredKeys{}); err != nil {
		t.Skipf("engine does not answer wire.ExpiredKeys yet (%v): Keyspace.Query must dispatch it to expiredKeys", err)
	}
	w, r, tr := dial(t, addr), dial(t, addr), dial(t, addr)
	mustDo(t, w, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	mustDo(t, tr, "HELLO", "3")
	mustDo(t, tr, "CLIENT", "TRACKING", "on")
	mustDo(t, tr, "XLEN", "s")
	if err := r.Send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, w, 1)
	mustDo(t, w, "PEXPIRE", "s", "50")
	// Nobody writes the key again: only the sweep can wake the reader.
	if got := receive(t, r); got != "(error) UNBLOCKED the stream key no longer exists" {
		t.Fatalf("blocked reader got %s", got)
	}
	var pushes []string
	testutil.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		pushes = append(pushes, pushesAfterPing(t, tr)...)
		if len(pushes) == 0 {
			return errNoPush
		}
		return nil
	})
	// PEXPIRE itself invalidated s; the sweep's deletion is not seen
	// again because the key was forgotten after the first push.
	if strings.Join(pushes, " ") != invalidate("s") {
		t.Fatalf("pushes %q", pushes)
	}
}

var errNoPush = errorString("no push yet")

type errorString string

func (e errorString) Error() string { return string(e) }
