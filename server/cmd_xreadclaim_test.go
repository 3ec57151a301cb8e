package server

import (
	"fmt"
	"strings"
	"testing"
)

// Tests of Redis 8.4's XREADGROUP ... CLAIM and 8.10's MAXCOUNT / MAXSIZE
// through a real client, after the [test] blocks of the spec (§2, §5).
// Idle times are made with XCLAIM ... IDLE (never by sleeping).

// doV runs a command and returns its reply value.
func doV(t *testing.T, c *respConn, args ...string) Value {
	t.Helper()
	v, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return v
}

// streamEntries returns the entries of the first stream of an XREAD-style
// reply, in either protocol.
func streamEntries(t *testing.T, v Value) []Value {
	t.Helper()
	switch {
	case v.Kind == '*' && len(v.Elems) > 0 && len(v.Elems[0].Elems) == 2:
		return v.Elems[0].Elems[1].Elems
	case v.Kind == '%' && len(v.Elems) >= 2:
		return v.Elems[1].Elems
	}
	t.Fatalf("not a read reply: %s", v)
	return nil
}

// claimRow is a 4-element CLAIM entry as "id idle>=min? count".
func claimRow(t *testing.T, e Value) (id string, idle, count int64) {
	t.Helper()
	if len(e.Elems) != 4 || e.Elems[2].Kind != ':' || e.Elems[3].Kind != ':' {
		t.Fatalf("not a CLAIM entry [id, fields, :idle, :count]: %s", e)
	}
	return e.Elems[0].Str, e.Elems[2].Int, e.Elems[3].Int
}

func TestXReadGroupClaim(t *testing.T) {
	_, addr := startTestServer(t, nil)
	for _, proto := range []string{"2", "3"} {
		t.Run("resp"+proto, func(t *testing.T) {
			c := dial(t, addr)
			mustDo(t, c, "HELLO", proto)
			k := "claim" + proto
			mustDo(t, c, "XADD", k, "1-0", "f", "v1")
			mustDo(t, c, "XGROUP", "CREATE", k, "group1", "0")
			mustDo(t, c, "XREADGROUP", "GROUP", "group1", "consumer1", "STREAMS", k, ">")
			// 1-0 idle for 100 s (JUSTID keeps its delivery count, 1).
			mustDo(t, c, "XCLAIM", k, "group1", "consumer1", "0", "1-0", "IDLE", "100000", "JUSTID")
			mustDo(t, c, "XADD", k, "2-0", "f", "v2")
			v := doV(t, c, "XREADGROUP", "GROUP", "group1", "consumer2", "CLAIM", "50", "STREAMS", k, ">")
			if proto == "3" && v.Kind != '%' || proto == "2" && v.Kind != '*' {
				t.Fatalf("envelope %s", v)
			}
			es := streamEntries(t, v)
			if len(es) != 2 {
				t.Fatalf("entries %s", v)
			}
			id, idle, count := claimRow(t, es[0])
			if id != "1-0" || idle < 100000 || count != 1 || es[0].Elems[1].String() != `["f", "v1"]` {
				t.Fatalf("claimed %s", es[0])
			}
			if id, idle, count := claimRow(t, es[1]); id != "2-0" || idle != 0 || count != 0 {
				t.Fatalf("new entry %s", es[1])
			}
			pend := doV(t, c, "XPENDING", k, "group1", "-", "+", "10")
			if got := pend.Elems[0].Elems; got[1].Str != "consumer2" || got[3].Int != 2 {
				t.Fatalf("XPENDING after claim %s", pend)
			}
			// NOACK: the claimed entry stays pending, the new one is not added.
			mustDo(t, c, "XCLAIM", k, "group1", "consumer2", "0", "1-0", "2-0", "IDLE", "100000", "JUSTID")
			mustDo(t, c, "XADD", k, "3-0", "f", "v3")
			es = streamEntries(t, doV(t, c, "XREADGROUP", "GROUP", "group1", "consumer1", "NOACK", "CLAIM", "50", "COUNT", "2", "STREAMS", k, ">"))
			if len(es) != 2 || es[0].Elems[0].Str != "1-0" || es[1].Elems[0].Str != "2-0" {
				t.Fatalf("COUNT 2 shared by the claim phase: %v", es)
			}
			es = streamEntries(t, doV(t, c, "XREADGROUP", "GROUP", "group1", "consumer1", "NOACK", "CLAIM", "100000", "STREAMS", k, ">"))
			if len(es) != 1 || es[0].Elems[0].Str != "3-0" {
				t.Fatalf("NOACK new entry %v", es)
			}
			if got := mustDo(t, c, "XPENDING", k, "group1"); !strings.HasPrefix(got, "[(integer) 2, ") {
				t.Fatalf("XPENDING summary %s", got)
			}
			// After SETID back to 0 the same ID comes twice: claimed, then new.
			mustDo(t, c, "XGROUP", "SETID", k, "group1", "0")
			mustDo(t, c, "XCLAIM", k, "group1", "consumer1", "0", "1-0", "IDLE", "100000", "JUSTID")
			es = streamEntries(t, doV(t, c, "XREADGROUP", "GROUP", "group1", "consumer1", "CLAIM", "50000", "STREAMS", k, ">"))
			if id, _, n := claimRow(t, es[0]); id != "1-0" || n != 3 {
				t.Fatalf("claimed %s", es[0])
			}
			if id, _, n := claimRow(t, es[len(es)-3]); id != "1-0" || n != 0 {
				t.Fatalf("new %s", es[len(es)-3])
			}
			// min-idle-time LLONG_MAX: nothing is claimable, only new entries.
			mustDo(t, c, "XADD", k, "4-0", "f", "v4")
			es = streamEntries(t, doV(t, c, "XREADGROUP", "GROUP", "group1", "consumer1", "CLAIM", "9223372036854775807", "STREAMS", k, ">"))
			if len(es) != 1 || es[0].Elems[0].Str != "4-0" {
				t.Fatalf("CLAIM LLONG_MAX %v", es)
			}
			// A history stream gets 2-element entries.
			es = streamEntries(t, doV(t, c, "XREADGROUP", "GROUP", "group1", "consumer1", "CLAIM", "0", "COUNT", "1", "STREAMS", k, "0"))
			if len(es) != 1 || len(es[0].Elems) != 2 {
				t.Fatalf("history with CLAIM %v", es)
			}
			// Wire shape (RESP2): *1 *2 $key *1 *4 $id *2 $f $v :idle :count.
			if proto == "2" {
				mustDo(t, c, "XCLAIM", k, "group1", "consumer1", "0", "4-0", "IDLE", "100000", "JUSTID")
				if err := c.Send("XREADGROUP", "GROUP", "group1", "consumer1", "COUNT", "1", "CLAIM", "50000", "STREAMS", k, ">"); err != nil {
					t.Fatal(err)
				}
				raw := rawReply(t, c)
				want := "*1\r\n*2\r\n$6\r\nclaim2\r\n*1\r\n*4\r\n$3\r\n4-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv4\r\n:1000"
				if !strings.HasPrefix(raw, want) || !strings.HasSuffix(raw, "\r\n:1\r\n") {
					t.Fatalf("raw reply %q", raw)
				}
			}
		})
	}
}

// rawReply reads the next reply and renders it back to RESP2 bytes: the
// value keeps every element's type, so integers stay integers.
func rawReply(t *testing.T, c *respConn) string {
	t.Helper()
	v, err := c.Receive(10e9)
	if err != nil {
		t.Fatal(err)
	}
	return encodeValue(v)
}

// encodeValue renders a RESP2 value back to its wire bytes (arrays, bulk
// strings and integers: what a read reply holds).
func encodeValue(v Value) string {
	switch v.Kind {
	case '*':
		s := fmt.Sprintf("*%d\r\n", len(v.Elems))
		for _, e := range v.Elems {
			s += encodeValue(e)
		}
		return s
	case ':':
		return fmt.Sprintf(":%d\r\n", v.Int)
	case '$':
		return fmt.Sprintf("$%d\r\n%s\r\n", len(v.Str), v.Str)
	}
	return "?" + v.String()
}

func TestXReadClaimAndCapErrors(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	mustDo(t, c, "XADD", "s", "1-0", "f", "v")
	mustDo(t, c, "XGROUP", "CREATE", "s", "g", "0")
	tests := []struct {
		cmd  string
		want string
	}{
		{"XREAD CLAIM 10 STREAMS s 0", "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead."},
		{"XREADGROUP GROUP g c CLAIM abc STREAMS s >", "ERR min-idle-time is not an integer or out of range"},
		{"XREADGROUP GROUP g c CLAIM 3.14 STREAMS s >", "ERR min-idle-time is not an integer or out of range"},
		{"XREADGROUP GROUP g c CLAIM +10 STREAMS s >", "ERR min-idle-time is not an integer or out of range"},
		{"XREADGROUP GROUP g c CLAIM -1 STREAMS s >", "ERR min-idle-time must be a positive integer"},
		{"XREADGROUP GROUP g c CLAIM STREAMS s >", "ERR min-idle-time is not an integer or out of range"},
		{"XREAD MAXCOUNT 0 STREAMS s 0", "ERR MAXCOUNT must be a positive integer"},
		{"XREAD MAXCOUNT x STREAMS s 0", "ERR value is not an integer or out of range"},
		{"XREAD MAXSIZE -5 STREAMS s 0", "ERR MAXSIZE must be a positive integer"},
		{"XREAD COUNT 3 MAXCOUNT 2 STREAMS s 0", "ERR MAXCOUNT must be greater than or equal to COUNT"},
		{"XREADGROUP GROUP g c MAXCOUNT 1 COUNT 2 STREAMS s >", "ERR MAXCOUNT must be greater than or equal to COUNT"},
	}
	for _, tc := range tests {
		if got := mustDo(t, c, strings.Fields(tc.cmd)...); got != "(error) "+tc.want {
			t.Errorf("%s: %s, want %s", tc.cmd, got, tc.want)
		}
	}
	// Repeated CLAIM: the last wins.
	mustDo(t, c, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
	mustDo(t, c, "XCLAIM", "s", "g", "c", "0", "1-0", "IDLE", "55000", "JUSTID")
	if got := mustDo(t, c, "XREADGROUP", "GROUP", "g", "c", "CLAIM", "50000", "COUNT", "1", "CLAIM", "60000", "STREAMS", "s", ">"); got != "(nil array)" {
		t.Fatalf("CLAIM 50000 … CLAIM 60000 claimed: %s", got)
	}
}

func TestXReadMaxCountMaxSize(t *testing.T) {
	_, addr := startTestServer(t, nil)
	for _, proto := range []string{"2", "3"} {
		c := dial(t, addr)
		mustDo(t, c, "HELLO", proto)
		p := "mc" + proto
		for _, k := range []string{p + "1", p + "2", p + "3"} {
			for i := 1; i <= 3; i++ {
				mustDo(t, c, "XADD", k, fmt.Sprintf("%d-0", i), "f", strings.Repeat("x", 100))
			}
		}
		v := doV(t, c, "XREAD", "COUNT", "2", "MAXCOUNT", "3", "STREAMS", p+"1", p+"2", p+"3", "0", "0", "0")
		if proto == "2" && (len(v.Elems) != 2 || len(v.Elems[0].Elems[1].Elems) != 2 || len(v.Elems[1].Elems[1].Elems) != 1) ||
			proto == "3" && (len(v.Elems) != 4 || len(v.Elems[1].Elems) != 2 || len(v.Elems[3].Elems) != 1) {
			t.Fatalf("RESP%s COUNT 2 MAXCOUNT 3: %s", proto, v)
		}
		// MAXSIZE is soft: never before the first entry; checked before
		// each next one (an entry here is about 130 bytes).
		if n := len(streamEntries(t, doV(t, c, "XREAD", "MAXSIZE", "1", "STREAMS", p+"1", "0"))); n != 1 {
			t.Fatalf("MAXSIZE 1 served %d", n)
		}
		if n := len(streamEntries(t, doV(t, c, "XREAD", "MAXSIZE", "200", "STREAMS", p+"1", "0"))); n != 2 {
			t.Fatalf("MAXSIZE 200 served %d", n)
		}
		// XREADGROUP: an entry left out by a cap is not delivered.
		mustDo(t, c, "XGROUP", "CREATE", p+"1", "g", "0")
		mustDo(t, c, "XGROUP", "CREATE", p+"2", "g", "0")
		v = doV(t, c, "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "4", "STREAMS", p+"1", p+"2", ">", ">")
		if got := mustDo(t, c, "XPENDING", p+"2", "g"); !strings.HasPrefix(got, "[(integer) 1, \"1-0\", \"1-0\"") {
			t.Fatalf("after MAXCOUNT 4 over 3+3 entries: %s (reply %s)", got, v)
		}
		if got := strings.ReplaceAll(mustDo(t, c, "XINFO", "GROUPS", p+"2"), `": `, `", `); !strings.Contains(got, `"last-delivered-id", "1-0"`) {
			t.Fatalf("XINFO GROUPS %s", got)
		}
	}
}

// TestXReadGroupClaimInMulti: inside MULTI a CLAIM read replies in the CLAIM
// form too, and a BLOCK with nothing to serve answers null at once.
func TestXReadGroupClaimInMulti(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	mustDo(t, c, "XADD", "m", "1-0", "f", "v")
	mustDo(t, c, "XGROUP", "CREATE", "m", "g", "0")
	mustDo(t, c, "MULTI")
	mustDo(t, c, "XREADGROUP", "GROUP", "g", "c", "CLAIM", "0", "STREAMS", "m", ">")
	mustDo(t, c, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "CLAIM", "1000000", "STREAMS", "m", ">")
	mustDo(t, c, "XNACK", "m", "g", "FAIL", "IDS", "1", "1-0")
	if got := mustDo(t, c, "EXEC"); got != `[[["m", [["1-0", ["f", "v"], (integer) 0, (integer) 0]]]], (nil array), (integer) 1]` {
		t.Fatalf("EXEC: %s", got)
	}
}
