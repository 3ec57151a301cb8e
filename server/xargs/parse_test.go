package xargs

import (
	"strings"
	"testing"

	"streamd/server/resp"
)

// fields splits a command line on spaces, as the server tests do.
func fields(line string) [][]byte {
	var args [][]byte
	for _, f := range strings.Fields(line) {
		args = append(args, []byte(f))
	}
	return args
}

// parse runs the parser of line's command (the error a planner answers
// first for XGROUP's, or after its state check).
func parse(args [][]byte) resp.Reply {
	var r, late resp.Reply
	switch name := strings.ToUpper(string(args[0])); name {
	case "XADD":
		_, r = XAdd(args)
	case "XTRIM":
		_, r = XTrim(args)
	case "XRANGE", "XREVRANGE":
		_, r = XRange(args, name == "XREVRANGE")
	case "XSETID":
		_, r = XSetID(args)
	case "XCLAIM":
		_, r = XClaim(args)
	case "XAUTOCLAIM":
		_, r = XAutoClaim(args)
	case "XPENDING":
		_, _, r = XPending(args)
	case "XGROUP":
		if isOpt(args[1], "CREATE") {
			_, r, late = XGroupCreate(args)
		} else {
			_, r, late = XGroupSetID(args)
		}
	}
	if r == nil {
		return late
	}
	return r
}

const (
	createSyntax = "ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."
	setidSyntax  = "ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP."
)

// TestArgumentErrors checks each parser's error, with Redis 7.0's texts and
// order of checks.
func TestArgumentErrors(t *testing.T) {
	tests := []struct{ line, want string }{
		{"XADD s MAXLEN 5 * f", "ERR wrong number of arguments for 'xadd' command"},
		{"XADD s * f v f", "ERR wrong number of arguments for 'xadd' command"},
		{"XADD s NOMKSTREAM MAXLEN 5", "ERR wrong number of arguments for 'xadd' command"},
		{"XADD s maxlen ~ 5", "ERR wrong number of arguments for 'xadd' command"},
		{"XADD s LIMIT 5 * f v", "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"},
		{"XADD s LIMIT 0 * f v", "ERR syntax error, LIMIT cannot be used without the special ~ option"},
		{"XADD s MAXLEN 5 LIMIT 5 * f v", "ERR syntax error, LIMIT cannot be used without the special ~ option"},
		{"XADD s MAXLEN = 5 LIMIT 5 * f v", "ERR syntax error, LIMIT cannot be used without the special ~ option"},
		{"XADD s MAXLEN ~ 5 LIMIT -1 * f v", "ERR The LIMIT argument must be >= 0."},
		{"XADD s MAXLEN ~ 5 LIMIT x * f v", "ERR value is not an integer or out of range"},
		{"XADD s MAXLEN -1 * f v", "ERR The MAXLEN argument must be >= 0."},
		{"XADD s MAXLEN ~ * f v", "ERR value is not an integer or out of range"},
		{"XADD s maxlen = ~ * f v", "ERR value is not an integer or out of range"},
		{"XADD s MAXLEN 01 * f v", "ERR value is not an integer or out of range"},
		{"XADD s MAXLEN 9223372036854775808 * f v", "ERR value is not an integer or out of range"},
		{"XADD s MAXLEN 5 MINID 5 * f v", "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"},
		{"XADD s MINID 5 MAXLEN 5 * f v", "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"},
		{"XADD s MAXLEN 1 MAXLEN 2 * f v", "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"},
		{"XADD s MINID - * f v", "ERR Invalid stream ID specified as stream command argument"},
		{"XADD s MINID 5-* * f v", "ERR Invalid stream ID specified as stream command argument"},
		{"XADD s foo f v", "ERR Invalid stream ID specified as stream command argument"},
		{"XADD s + f v", "ERR Invalid stream ID specified as stream command argument"},
		{"XADD s -* f v", "ERR Invalid stream ID specified as stream command argument"},
		{"XADD s 18446744073709551616 f v", "ERR Invalid stream ID specified as stream command argument"},
		{"XADD s MAXLEN 1 foo", "ERR Invalid stream ID specified as stream command argument"},
		{"XTRIM s garbage x", "ERR syntax error"},
		{"XTRIM s MAXLEN 1 extra", "ERR syntax error"},
		{"XTRIM s NOMKSTREAM MAXLEN 5", "ERR syntax error"},
		{"XTRIM s MAXLEN 5 LIMIT", "ERR syntax error"},
		{"XTRIM s MAXLEN -1", "ERR The MAXLEN argument must be >= 0."},
		{"XTRIM s MINID bad", "ERR Invalid stream ID specified as stream command argument"},
		{"XTRIM s MAXLEN ~ 5 LIMIT x", "ERR value is not an integer or out of range"},
		{"XTRIM s MAXLEN 1 LIMIT 5", "ERR syntax error, LIMIT cannot be used without the special ~ option"},
		{"XTRIM s LIMIT 5", "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"},
		{"XTRIM s LIMIT 0", "ERR syntax error, XTRIM must be called with a trimming strategy"},
		{"XTRIM s MINID 0 MINID 5", "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"},
		{"XRANGE s (- +", "ERR Invalid stream ID specified as stream command argument"},
		{"XRANGE s - (+", "ERR Invalid stream ID specified as stream command argument"},
		{"XRANGE s ( +", "ERR Invalid stream ID specified as stream command argument"},
		{"XRANGE s - (0-0", "ERR invalid end ID for the interval"},
		{"XRANGE s (18446744073709551615-18446744073709551615 +", "ERR invalid start ID for the interval"},
		{"XRANGE s - + COUNT", "ERR syntax error"},
		{"XRANGE s - + FOO 1", "ERR syntax error"},
		{"XRANGE s - + COUNT x", "ERR value is not an integer or out of range"},
		{"XRANGE s - + COUNT x bad", "ERR value is not an integer or out of range"},
		{"XRANGE s bad bad COUNT x", "ERR Invalid stream ID specified as stream command argument"},
		// XREVRANGE parses its start (the last bound) first.
		{"XREVRANGE s (0-0 (18446744073709551615-18446744073709551615", "ERR invalid start ID for the interval"},
		{"XREVRANGE s bad (18446744073709551615-18446744073709551615", "ERR invalid start ID for the interval"},
		{"XREVRANGE s (0-0 bad", "ERR Invalid stream ID specified as stream command argument"},
		{"XSETID s bad", "ERR Invalid stream ID specified as stream command argument"},
		{"XSETID s +", "ERR Invalid stream ID specified as stream command argument"},
		{"XSETID s -", "ERR Invalid stream ID specified as stream command argument"},
		{"XSETID s 5-5 ENTRIESADDED -1", "ERR entries_added must be positive"},
		{"XSETID s 5-5 ENTRIESADDED x", "ERR value is not an integer or out of range"},
		{"XSETID s 5-5 ENTRIESADDED", "ERR syntax error"},
		{"XSETID s 5-5 FOO 1", "ERR syntax error"},
		{"XSETID s 5-5 MAXDELETEDID bad", "ERR Invalid stream ID specified as stream command argument"},
		{"XSETID s 5-5 MAXDELETEDID 6-6", "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"},
		{"XSETID s 5-5 MAXDELETEDID 6-6 FOO", "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"},
		{"XGROUP CREATE s g $ FOO", createSyntax},
		{"XGROUP create s g $ ENTRIESREAD", "ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP."},
		{"XGROUP CREATE s g $ ENTRIESREAD x", "ERR value is not an integer or out of range"},
		{"XGROUP CREATE s g $ ENTRIESREAD -2", "ERR value for ENTRIESREAD must be positive or -1"},
		{"XGROUP CREATE s g bad MKSTREAM", "ERR Invalid stream ID specified as stream command argument"},
		{"XGROUP CREATE s g $ MKSTREAM ENTRIESREAD 1 ENTRIESREAD 2", createSyntax},
		{"XGROUP SETID s g 1 MKSTREAM", setidSyntax},
		{"XGROUP SETID s g 1 ENTRIESREAD", setidSyntax},
		{"XGROUP SETID s g 1 FOO 1", setidSyntax},
		{"XGROUP SETID s g 1 ENTRIESREAD 1 x", setidSyntax},
		{"XGROUP SETID s g 1 ENTRIESREAD x", "ERR value is not an integer or out of range"},
		{"XGROUP SETID s g bad ENTRIESREAD x", "ERR value is not an integer or out of range"},
		{"XGROUP SETID s g 1 ENTRIESREAD -2", "ERR value for ENTRIESREAD must be positive or -1"},
		{"XAUTOCLAIM s g c x 0", "ERR Invalid min-idle-time argument for XAUTOCLAIM"},
		{"XAUTOCLAIM s g c 0 bad", "ERR Invalid stream ID specified as stream command argument"},
		{"XAUTOCLAIM s g c 0 (-", "ERR Invalid stream ID specified as stream command argument"},
		{"XAUTOCLAIM s g c 0 (18446744073709551615-18446744073709551615", "ERR invalid start ID for the interval"},
		{"XAUTOCLAIM s g c 0 0 COUNT 0", "ERR COUNT must be > 0"},
		{"XAUTOCLAIM s g c 0 0 COUNT x", "ERR COUNT must be > 0"},
		{"XAUTOCLAIM s g c 0 0 COUNT -1", "ERR COUNT must be > 0"},
		{"XAUTOCLAIM s g c 0 0 COUNT 576460752303423488", "ERR COUNT must be > 0"},
		{"XAUTOCLAIM s g c 0 0 COUNT", "ERR syntax error"},
		{"XAUTOCLAIM s g c 0 0 FOO", "ERR syntax error"},
		{"XPENDING s g - +", "ERR syntax error"},
		{"XPENDING s g -", "ERR syntax error"},
		{"XPENDING s g - + 10 c extra extra2 extra3", "ERR syntax error"},
		{"XPENDING s g IDLE 0 - +", "ERR syntax error"},
		{"XPENDING s g IDLE x - +", "ERR value is not an integer or out of range"},
		{"XPENDING s g IDLE 0 - + 10 c extra", "ERR syntax error"},
		{"XPENDING s g - + x", "ERR value is not an integer or out of range"},
		{"XPENDING s g bad + x", "ERR value is not an integer or out of range"},
		{"XPENDING s g bad + 1", "ERR Invalid stream ID specified as stream command argument"},
		{"XPENDING s g (18446744073709551615-18446744073709551615 + 1", "ERR invalid start ID for the interval"},
		{"XPENDING s g - (0-0 1", "ERR invalid end ID for the interval"},
		{"XCLAIM s g c x 1-1", "ERR Invalid min-idle-time argument for XCLAIM"},
		{"XCLAIM s g c 0 1-1 IDLE x", "ERR Invalid IDLE option argument for XCLAIM"},
		{"XCLAIM s g c 0 1-1 idle 01", "ERR Invalid IDLE option argument for XCLAIM"},
		{"XCLAIM s g c 0 1-1 IDLE 10 IDLE x", "ERR Invalid IDLE option argument for XCLAIM"},
		{"XCLAIM s g c 0 1-1 TIME x", "ERR Invalid TIME option argument for XCLAIM"},
		{"XCLAIM s g c 0 1-1 RETRYCOUNT x", "ERR Invalid RETRYCOUNT option argument for XCLAIM"},
		{"XCLAIM s g c 0 1-1 LASTID x", "ERR Invalid stream ID specified as stream command argument"},
		{"XCLAIM s g c 0 1-1 FOO", "ERR Unrecognized XCLAIM option 'FOO'"},
		{"XCLAIM s g c 0 1-1 IDLE", "ERR Unrecognized XCLAIM option 'IDLE'"},
		{"XCLAIM s g c 0 1-1 foo 2-2", "ERR Unrecognized XCLAIM option 'foo'"},
		{"XCLAIM s g c 0 FORCE 1-1", "ERR Unrecognized XCLAIM option '1-1'"},
		{"XCLAIM s g c 0 -", "ERR Unrecognized XCLAIM option '-'"},
	}
	for _, tt := range tests {
		if got := parse(fields(tt.line)); got != resp.ErrorReply(tt.want) {
			t.Errorf("%q: got %#v, want %q", tt.line, got, tt.want)
		}
	}
}

func TestParseRead(t *testing.T) {
	const now = int64(1_700_000_000_000)
	a, r := ParseRead(fields("XREADGROUP BLOCK 1500 GROUP g c COUNT -3 NOACK COUNT 2 STREAMS a b > 1-1"), true, now)
	if r != nil {
		t.Fatal(r)
	}
	if !a.Block || a.Timeout.Milliseconds() != 1500 || a.Count != 2 || !a.NoAck ||
		string(a.Group) != "g" || string(a.Consumer) != "c" || len(a.Keys) != 2 || string(a.IDs[1]) != "1-1" {
		t.Fatalf("parsed %+v", a)
	}
	rs, _, r := a.GroupStreams()
	if r != nil || !rs[0].New || rs[1].ID.Ms != 1 || rs[1].Key != "b" {
		t.Fatalf("group streams %+v %v", rs, r)
	}
	if _, r := ParseRead(fields("XREAD BLOCK 9223372036854775807 STREAMS a 0"), false, now); r != ErrTimeoutRange {
		t.Fatalf("range: %v", r)
	}
	if a, r := ParseRead(fields("XREAD BLOCK 9223372036854775807 STREAMS a 0"), false, 0); r != nil || a.Timeout != 0 {
		t.Fatalf("forever: %+v %v", a, r)
	}
	a, _ = ParseRead(fields("XREAD STREAMS a b c $ + 0-1"), false, now)
	rs, dollar, r := a.ReadStreams()
	if r != nil || len(dollar) != 1 || dollar[0] != 0 || !rs[1].Last || rs[2].ID.Seq != 1 {
		t.Fatalf("read streams %+v %v %v", rs, dollar, r)
	}
}
