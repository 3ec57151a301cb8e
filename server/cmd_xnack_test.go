package server

import (
	"strings"
	"testing"
)

// Tests of Redis 8.8's XNACK through a real client, after §4 of the spec.

func TestXNACKErrors(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	mustDo(t, c, "XADD", "s", "1-0", "f", "v")
	mustDo(t, c, "XGROUP", "CREATE", "s", "grp", "0")
	tests := []struct{ cmd, want string }{
		{"XNACK nokey grp FAIL IDS 1 bad", "NOGROUP No such key 'nokey' or consumer group 'grp'"},
		{"XNACK s nogrp BAD IDS 1 1-0", "NOGROUP No such key 's' or consumer group 'nogrp'"},
		{"XNACK s grp BAD IDS 1 1-0", "ERR mode must be SILENT, FAIL, or FATAL"},
		{"XNACK s grp FAIL IDS 0 1-0", "ERR numids must be a positive integer"},
		{"XNACK s grp FAIL IDS x 1-0", "ERR numids must be a positive integer"},
		{"XNACK s grp FAIL IDS 2147483648 1-0", "ERR numids must be a positive integer"},
		{"XNACK s grp FAIL IDS 3 1-0 2-0", "ERR number of IDs doesn't match numids"},
		{"XNACK s grp FAIL IDS 1 1-0 RETRYCOUNT x", "ERR value is not an integer or out of range"},
		{"XNACK s grp FAIL IDS 1 1-0 RETRYCOUNT -1", "ERR Invalid RETRYCOUNT value, must be >= 0"},
		{"XNACK s grp FAIL IDS 1 1-0 2-0", "ERR Unrecognized XNACK option '2-0'"},
		{"XNACK s grp FAIL FAIL IDS 1 1-0", "ERR Unrecognized XNACK option 'FAIL'"},
		{"XNACK s grp FAIL IDS 1 1-0 RETRYCOUNT", "ERR Unrecognized XNACK option 'RETRYCOUNT'"},
		{"XNACK s grp FAIL FORCE RETRYCOUNT 1", "ERR syntax error, expected IDS keyword"},
		{"XNACK s grp FAIL IDS 1 bad", "ERR Invalid stream ID specified as stream command argument"},
		{"XNACK s grp FAIL IDS 1 +", "ERR Invalid stream ID specified as stream command argument"},
		{"XNACK s grp", "ERR wrong number of arguments for 'xnack' command"},
	}
	for _, tc := range tests {
		if got := mustDo(t, c, strings.Fields(tc.cmd)...); got != "(error) "+tc.want {
			t.Errorf("%s: %s, want %s", tc.cmd, got, tc.want)
		}
	}
	// Flexible order after the mode.
	if got := mustDo(t, c, "XNACK", "s", "grp", "fail", "force", "retrycount", "2", "ids", "1", "1-0"); got != "(integer) 1" {
		t.Fatalf("options before IDS: %s", got)
	}
}

func TestXNACKModes(t *testing.T) {
	_, addr := startTestServer(t, nil)
	for _, proto := range []string{"2", "3"} {
		c := dial(t, addr)
		mustDo(t, c, "HELLO", proto)
		k := "nack" + proto
		for _, id := range []string{"1-0", "2-0", "3-0"} {
			mustDo(t, c, "XADD", k, id, "f", "v")
		}
		mustDo(t, c, "XGROUP", "CREATE", k, "grp", "0")
		pendingRow := func() string {
			return doV(t, c, "XPENDING", k, "grp", "-", "+", "10").Elems[0].String()
		}
		if got := mustDo(t, c, "XNACK", k, "grp", "FAIL", "IDS", "1", "1-0", "FORCE"); got != "(integer) 1" {
			t.Fatalf("FORCE without a read: %s", got)
		}
		if got := pendingRow(); got != `["1-0", "", (integer) -1, (integer) 0]` {
			t.Fatalf("FORCEd row %s", got)
		}
		mustDo(t, c, "XACK", k, "grp", "1-0")
		mustDo(t, c, "XREADGROUP", "GROUP", "grp", "c1", "STREAMS", k, ">")
		if got := mustDo(t, c, "XNACK", k, "grp", "SILENT", "IDS", "1", "1-0"); got != "(integer) 1" {
			t.Fatalf("SILENT: %s", got)
		}
		if got := pendingRow(); got != `["1-0", "", (integer) -1, (integer) 0]` {
			t.Fatalf("SILENT row %s", got)
		}
		mustDo(t, c, "XNACK", k, "grp", "FATAL", "IDS", "1", "1-0")
		if got := pendingRow(); got != `["1-0", "", (integer) -1, (integer) 9223372036854775807]` {
			t.Fatalf("FATAL row %s", got)
		}
		if got := mustDo(t, c, "XNACK", k, "grp", "FAIL", "IDS", "5", "1-0", "9-9", "2-0", "8-8", "3-0"); got != "(integer) 3" {
			t.Fatalf("3 of 5: %s", got)
		}
		if got := mustDo(t, c, "XNACK", k, "grp", "FAIL", "IDS", "2", "1-0", "1-0"); got != "(integer) 2" {
			t.Fatalf("duplicates: %s", got)
		}
		// IDLE never leaves a NACKed entry out; the summary counts them but
		// lists no consumer; XINFO CONSUMERS pending excludes them.
		if got := doV(t, c, "XPENDING", k, "grp", "IDLE", "100000", "-", "+", "10"); len(got.Elems) != 3 {
			t.Fatalf("XPENDING IDLE %s", got)
		}
		if got := mustDo(t, c, "XPENDING", k, "grp"); got != `[(integer) 3, "1-0", "3-0", []]` {
			t.Fatalf("summary %s", got)
		}
		if got := mustDo(t, c, "XINFO", "CONSUMERS", k, "grp"); !strings.Contains(strings.ReplaceAll(got, `": `, `", `), `"pending", (integer) 0`) {
			t.Fatalf("XINFO CONSUMERS %s", got)
		}
		// Zone order: 2-0, 3-0, 1-0 after a re-NACK of 1-0; CLAIM serves it
		// first, in FIFO order.
		mustDo(t, c, "XNACK", k, "grp", "FAIL", "IDS", "3", "1-0", "2-0", "3-0")
		mustDo(t, c, "XNACK", k, "grp", "FAIL", "IDS", "1", "1-0")
		full := strings.ReplaceAll(mustDo(t, c, "XINFO", "STREAM", k, "FULL"), `": `, `", `)
		if !strings.Contains(full, `"pel-count", (integer) 3, "nacked-count", (integer) 3, "pending", [["1-0", "", (integer) 0, `) {
			t.Fatalf("XINFO STREAM FULL %s", full)
		}
		var order []string
		for i := 0; i < 3; i++ {
			es := streamEntries(t, doV(t, c, "XREADGROUP", "GROUP", "grp", "c2", "COUNT", "1", "CLAIM", "5", "STREAMS", k, ">"))
			order = append(order, es[0].Elems[0].Str)
		}
		if strings.Join(order, " ") != "2-0 3-0 1-0" {
			t.Fatalf("claim order %v", order)
		}
		// XCLAIM takes a NACKed entry whatever min-idle-time says.
		mustDo(t, c, "XNACK", k, "grp", "FAIL", "IDS", "1", "1-0")
		if got := mustDo(t, c, "XCLAIM", k, "grp", "c2", "99999", "1-0", "JUSTID"); got != `["1-0"]` {
			t.Fatalf("XCLAIM of a NACKed entry: %s", got)
		}
		// XDEL leaves a NACKed ghost; XAUTOCLAIM reports it deleted.
		mustDo(t, c, "XNACK", k, "grp", "FAIL", "IDS", "1", "2-0")
		mustDo(t, c, "XDEL", k, "2-0")
		if got := mustDo(t, c, "XPENDING", k, "grp", "-", "+", "10", "c2"); strings.Contains(got, `"2-0"`) {
			t.Fatalf("NACKed ghost still owned: %s", got)
		}
		if got := mustDo(t, c, "XAUTOCLAIM", k, "grp", "c3", "99999", "0"); !strings.HasSuffix(got, `["2-0"]]`) {
			t.Fatalf("XAUTOCLAIM %s", got)
		}
		// DELCONSUMER leaves NACKed entries; DESTROY frees them.
		mustDo(t, c, "XNACK", k, "grp", "FAIL", "IDS", "1", "3-0")
		mustDo(t, c, "XGROUP", "DELCONSUMER", k, "grp", "c2")
		if got := doV(t, c, "XPENDING", k, "grp", "-", "+", "10"); len(got.Elems) != 1 || got.Elems[0].Elems[0].Str != "3-0" {
			t.Fatalf("after DELCONSUMER %s", got)
		}
	}
}
