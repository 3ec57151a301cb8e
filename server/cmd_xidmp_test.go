package server

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
	"streamd/replication/wire"
	"streamd/server/xargs"
	"streamd/streams"
)

// Tests of Redis 8.6's idempotent production (spec §3) through a real
// in-process server, in RESP2 and RESP3 where the replies differ.

// do runs one command and returns its rendered reply.
func do(t *testing.T, c *respConn, args ...string) Value {
	t.Helper()
	v, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return v
}

// TestXADDIDMPParseErrors are §3.2's errors, in Redis's order.
func TestXADDIDMPParseErrors(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	const syntax = "(error) ERR syntax error, "
	runSteps(t, c, []step{
		{[]string{"XADD", "s", "IDMP", "p1", "i1", "IDMP", "p1", "i2", "*", "f", "v"}, syntax + "IDMP/IDMPAUTO specified multiple times"},
		{[]string{"XADD", "s", "IDMPAUTO", "p1", "IDMP", "p1", "i2", "*", "f", "v"}, syntax + "IDMP/IDMPAUTO specified multiple times"},
		{[]string{"XADD", "s", "IDMP", "p1", "i1", "IDMPAUTO", "p1", "*", "f", "v"}, syntax + "IDMP/IDMPAUTO specified multiple times"},
		{[]string{"XADD", "s", "IDMPAUTO", "", "*", "f", "v"}, syntax + "IDMPAUTO requires a non-empty producer ID"},
		{[]string{"XADD", "s", "IDMP", "", "i1", "*", "f", "v"}, syntax + "IDMP requires a non-empty producer ID"},
		{[]string{"XADD", "s", "IDMP", "p1", "", "*", "f", "v"}, syntax + "IDMP requires a non-empty idempotent ID"},
		{[]string{"XADD", "s", "IDMP", "p1", "i1", "1-1", "f", "v"}, syntax + "IDMP/IDMPAUTO can be used only with auto-generated IDs"},
		{[]string{"XADD", "s", "IDMPAUTO", "p1", "1-*", "f", "v"}, syntax + "IDMP/IDMPAUTO can be used only with auto-generated IDs"},
		// "*" is taken as the iid, "f" as the ID.
		{[]string{"XADD", "s", "IDMP", "p1", "*", "f", "v"}, "(error) ERR Invalid stream ID specified as stream command argument"},
		{[]string{"XADD", "s", "idmp", "p1", "i1", "*", "f"}, "(error) ERR wrong number of arguments for 'xadd' command"},
		{[]string{"EXISTS", "s"}, "(integer) 0"},
		// Options in any order before the ID.
		{[]string{"XADD", "s", "MAXLEN", "~", "10", "idmp", "p1", "i1", "NOMKSTREAM", "*", "f", "v"}, "(nil bulk)"},
		{[]string{"XADD", "s", "IDMPAUTO", "p1", "MAXLEN", "5", "2-*", "f", "v"}, syntax + "IDMP/IDMPAUTO can be used only with auto-generated IDs"},
	})
	// Binary and 64 KiB producer and idempotent IDs are valid.
	big := strings.Repeat("x", 64<<10)
	for _, args := range [][]string{
		{"XADD", "s", "IDMP", "\x00\xff", big, "*", "f", "v"},
		{"XADD", "s", "IDMPAUTO", big, "*", "f", "v"},
	} {
		if v := do(t, c, args...); v.Kind != '$' || v.Nil {
			t.Fatalf("binary/large ids: %s", v)
		}
	}
}

// TestXADDIDMPDuplicate is §3.3's first [test]s: a duplicate answers the
// original ID, keeps the original fields, and changes no counter but
// iids-duplicates; IDMPAUTO ignores the order of the pairs.
func TestXADDIDMPDuplicate(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	id1 := do(t, c, "XADD", "mystream", "IDMP", "p1", "payment-abc", "*", "amount", "100", "currency", "USD")
	id2 := do(t, c, "XADD", "mystream", "IDMP", "p1", "payment-abc", "*", "amount", "200", "currency", "EUR")
	if !id1.Equal(id2) || id1.Kind != '$' {
		t.Fatalf("%s != %s", id1, id2)
	}
	runSteps(t, c, []step{
		{[]string{"XLEN", "mystream"}, "(integer) 1"},
		{[]string{"XRANGE", "mystream", "-", "+"}, fmt.Sprintf(`[[%s, ["amount", "100", "currency", "USD"]]]`, id1)},
	})
	a1 := do(t, c, "XADD", "auto", "IDMPAUTO", "p1", "*", "field1", "a", "field2", "b", "field3", "c")
	a2 := do(t, c, "XADD", "auto", "IDMPAUTO", "p1", "*", "field2", "b", "field3", "c", "field1", "a")
	if !a1.Equal(a2) {
		t.Fatalf("IDMPAUTO depends on the order: %s != %s", a1, a2)
	}
	// Field names count; another producer is another space.
	a3 := do(t, c, "XADD", "auto", "IDMPAUTO", "p1", "*", "field1", "b", "field2", "a", "field3", "c")
	a4 := do(t, c, "XADD", "auto", "IDMPAUTO", "p2", "*", "field1", "a", "field2", "b", "field3", "c")
	if a3.Equal(a1) || a4.Equal(a1) || a4.Equal(a3) {
		t.Fatalf("IDMPAUTO collisions: %s %s %s", a1, a3, a4)
	}
	runSteps(t, c, []step{
		{[]string{"XLEN", "auto"}, "(integer) 3"},
		// The original ID even after its entry is deleted (#14908).
		{[]string{"XDEL", "mystream", id1.Str}, "(integer) 1"},
		{[]string{"XADD", "mystream", "IDMP", "p1", "payment-abc", "*", "x", "y"}, id1.String()},
		{[]string{"XLEN", "mystream"}, "(integer) 0"},
	})
}

// xinfoIDMP returns XINFO STREAM's six IDMP fields of key, rendered.
func xinfoIDMP(t *testing.T, c *respConn, key string) string {
	t.Helper()
	v := do(t, c, "XINFO", "STREAM", key)
	var out []string
	for i := 0; i+1 < len(v.Elems); i += 2 {
		switch k := v.Elems[i].Str; k {
		case "idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked", "iids-added", "iids-duplicates":
			out = append(out, fmt.Sprintf("%s=%d", k, v.Elems[i+1].Int))
		}
	}
	return strings.Join(out, " ")
}

// TestXCFGSET is §3.4: errors in Redis's order, a change clears the
// producers and keeps the counters, the same values keep everything.
func TestXCFGSET(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		// The key is looked up before the options are parsed.
		{[]string{"XCFGSET", "mystream", "IDMP-DURATION", "86401"}, "(error) ERR no such key"},
		{[]string{"XCFGSET", "mystream"}, "(error) ERR no such key"},
		{[]string{"XCFGSET", "mystream", "IDMP-DURATION", "60"}, "(error) ERR no such key"},
		{[]string{"XCFGSET"}, "(error) ERR wrong number of arguments for 'xcfgset' command"},
	})
	for _, p := range []string{"p1", "p2", "p3"} {
		do(t, c, "XADD", "mystream", "IDMP", p, "i", "*", "f", "v")
	}
	runSteps(t, c, []step{
		{[]string{"XCFGSET", "mystream", "IDMP-DURATION", "86401"}, "(error) ERR IDMP-DURATION must be between 1 and 86400 seconds"},
		{[]string{"XCFGSET", "mystream", "IDMP-DURATION", "0"}, "(error) ERR IDMP-DURATION must be between 1 and 86400 seconds"},
		{[]string{"XCFGSET", "mystream", "IDMP-MAXSIZE", "10001"}, "(error) ERR IDMP-MAXSIZE must be between 1 and 10000 entries"},
		{[]string{"XCFGSET", "mystream", "IDMP-MAXSIZE", "-1"}, "(error) ERR IDMP-MAXSIZE must be between 1 and 10000 entries"},
		{[]string{"XCFGSET", "mystream", "IDMP-DURATION", "5", "idmp-duration", "6"}, "(error) ERR IDMP-DURATION specified multiple times"},
		{[]string{"XCFGSET", "mystream", "IDMP-MAXSIZE", "5", "IDMP-MAXSIZE", "6"}, "(error) ERR IDMP-MAXSIZE specified multiple times"},
		{[]string{"XCFGSET", "mystream"}, "(error) ERR At least one parameter must be specified"},
		{[]string{"XCFGSET", "mystream", "IDMP-DURATION"}, "(error) ERR syntax error"},
		{[]string{"XCFGSET", "mystream", "FOO", "1"}, "(error) ERR syntax error"},
		{[]string{"XCFGSET", "mystream", "IDMP-DURATION", "60", "IDMP-MAXSIZE"}, "(error) ERR syntax error"},
	})
	for _, bad := range []string{"-0", "+10", "000", "3.14", "10e", "x"} {
		runSteps(t, c, []step{{[]string{"XCFGSET", "mystream", "IDMP-DURATION", bad}, "(error) ERR value is not an integer or out of range"}})
	}
	if got := xinfoIDMP(t, c, "mystream"); got != "idmp-duration=100 idmp-maxsize=100 pids-tracked=3 iids-tracked=3 iids-added=3 iids-duplicates=0" {
		t.Fatalf("before: %s", got)
	}
	// The same values: nothing cleared.
	runSteps(t, c, []step{{[]string{"XCFGSET", "mystream", "IDMP-DURATION", "100", "IDMP-MAXSIZE", "100"}, "+OK"}})
	if got := xinfoIDMP(t, c, "mystream"); !strings.Contains(got, "pids-tracked=3") {
		t.Fatalf("same values cleared: %s", got)
	}
	runSteps(t, c, []step{{[]string{"XCFGSET", "mystream", "IDMP-DURATION", "60"}, "+OK"}})
	if got := xinfoIDMP(t, c, "mystream"); got != "idmp-duration=60 idmp-maxsize=100 pids-tracked=0 iids-tracked=0 iids-added=3 iids-duplicates=0" {
		t.Fatalf("after: %s", got)
	}
}

// TestXCFGSETMaxSize is §3.3's eviction [test]: with IDMP-MAXSIZE 3 the
// fourth iid evicts the first, which is then added anew.
func TestXCFGSETMaxSize(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	do(t, c, "XADD", "mystream", "*", "f", "v")
	runSteps(t, c, []step{{[]string{"XCFGSET", "mystream", "IDMP-MAXSIZE", "3", "IDMP-DURATION", "60"}, "+OK"}})
	id1 := do(t, c, "XADD", "mystream", "IDMP", "p1", "i1", "*", "f", "v")
	for _, iid := range []string{"i2", "i3", "i4"} {
		do(t, c, "XADD", "mystream", "IDMP", "p1", iid, "*", "f", "v")
	}
	if r := do(t, c, "XADD", "mystream", "IDMP", "p1", "i1", "*", "f", "v"); r.Equal(id1) {
		t.Fatalf("evicted iid answered its old ID %s", r)
	}
	if got := xinfoIDMP(t, c, "mystream"); got != "idmp-duration=60 idmp-maxsize=3 pids-tracked=1 iids-tracked=3 iids-added=5 iids-duplicates=0" {
		t.Fatalf("%s", got)
	}
}

// TestXCFGSETDurationExpiry is §3.3's expiry [test] (IDMP-DURATION 1, then
// the same XADD later appends anew), polling instead of sleeping.
func TestXCFGSETDurationExpiry(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	do(t, c, "XADD", "mystream", "*", "f", "v")
	runSteps(t, c, []step{{[]string{"XCFGSET", "mystream", "IDMP-DURATION", "1"}, "+OK"}})
	id1 := do(t, c, "XADD", "mystream", "IDMP", "p1", "i1", "*", "f", "v")
	testutil.Eventually(t, 10*time.Second, 50*time.Millisecond, func() error {
		if id3 := do(t, c, "XADD", "mystream", "IDMP", "p1", "i1", "*", "f", "v"); id3.Equal(id1) {
			return fmt.Errorf("still a duplicate of %s", id1)
		}
		return nil
	})
}

// TestXIDMPRECORD is §3.5's order of checks.
func TestXIDMPRECORD(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"XIDMPRECORD", "s", "p", "i"}, "(error) ERR wrong number of arguments for 'xidmprecord' command"},
		{[]string{"XIDMPRECORD", "s", "", "", "bad"}, "(error) ERR Invalid stream ID specified as stream command argument"},
		{[]string{"XIDMPRECORD", "s", "", "i", "1-1"}, "(error) ERR producer ID must be non-empty"},
		{[]string{"XIDMPRECORD", "s", "p", "", "1-1"}, "(error) ERR idempotent ID must be non-empty"},
		{[]string{"XIDMPRECORD", "s", "p", "i", "1-1"}, "(error) ERR no such key"},
		{[]string{"XADD", "s", "1-1", "f", "v"}, `"1-1"`},
		{[]string{"XADD", "s", "2-1", "f", "v"}, `"2-1"`},
		{[]string{"XIDMPRECORD", "s", "p", "i", "3-1"}, "(error) ERR No such message in stream"},
		{[]string{"XIDMPRECORD", "s", "p", "i", "1-1"}, "+OK"},
		{[]string{"XIDMPRECORD", "s", "p", "i", "1-1"}, "+OK"},
		{[]string{"XIDMPRECORD", "s", "p", "i", "2-1"}, "(error) ERR IID already exists for this producer with a different stream ID"},
		{[]string{"XADD", "s", "IDMP", "p", "i", "*", "f", "v"}, `"1-1"`},
		{[]string{"XLEN", "s"}, "(integer) 2"},
	})
	if got := xinfoIDMP(t, c, "s"); got != "idmp-duration=100 idmp-maxsize=100 pids-tracked=1 iids-tracked=1 iids-added=1 iids-duplicates=1" {
		t.Fatalf("%s", got)
	}
}

// TestXINFOSTREAMIDMPFields is §3.6: the six fields, always present, after
// recorded-first-entry-id, in both forms; RESP3 maps of 16 and 15 pairs.
func TestXINFOSTREAMIDMPFields(t *testing.T) {
	_, addr := startTestServer(t, nil)
	for _, proto := range []string{"2", "3"} {
		c := dial(t, addr)
		do(t, c, "HELLO", proto)
		key := "s" + proto
		do(t, c, "XADD", key, "1-1", "f", "v")
		for _, full := range []bool{false, true} {
			args := []string{"XINFO", "STREAM", key}
			wantPairs := 16
			if full {
				args, wantPairs = append(args, "FULL"), 15
			}
			v := do(t, c, args...)
			wantKind := byte('*')
			if proto == "3" {
				wantKind = '%'
			}
			if v.Kind != wantKind || len(v.Elems) != 2*wantPairs {
				t.Fatalf("RESP%s %q: kind %q, %d elements, want %d pairs: %s", proto, args, v.Kind, len(v.Elems), wantPairs, v)
			}
			var names []string
			for i := 0; i < len(v.Elems); i += 2 {
				names = append(names, v.Elems[i].Str)
			}
			got := strings.Join(names[6:13], " ")
			want := "recorded-first-entry-id idmp-duration idmp-maxsize pids-tracked iids-tracked iids-added iids-duplicates"
			if got != want {
				t.Fatalf("RESP%s %q: fields %s", proto, args, strings.Join(names, " "))
			}
			// A stream that never used IDMP: iids-tracked 0, iids-added 0.
			for i := 14; i < 26; i += 2 {
				wantV := int64(0)
				if i < 18 {
					wantV = 100
				}
				if e := v.Elems[i+1]; e.Kind != ':' || e.Int != wantV {
					t.Fatalf("RESP%s %s = %s", proto, v.Elems[i].Str, e)
				}
			}
		}
	}
}

// TestIDMPConfig is §3.7: the directives, their range errors, and that a
// stream takes the values in force when it is created.
func TestIDMPConfig(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"CONFIG", "GET", "stream-idmp-*"}, `["stream-idmp-duration", "100", "stream-idmp-maxsize", "100"]`},
		{[]string{"CONFIG", "SET", "stream-idmp-duration", "0"},
			"(error) ERR CONFIG SET failed (possibly related to argument 'stream-idmp-duration') - argument must be between 1 and 86400 inclusive"},
		{[]string{"CONFIG", "SET", "stream-idmp-maxsize", "10001"},
			"(error) ERR CONFIG SET failed (possibly related to argument 'stream-idmp-maxsize') - argument must be between 1 and 10000 inclusive"},
	})
	do(t, c, "XADD", "old", "*", "f", "v")
	runSteps(t, c, []step{
		{[]string{"CONFIG", "SET", "stream-idmp-duration", "7", "stream-idmp-maxsize", "9"}, "+OK"},
		{[]string{"CONFIG", "GET", "stream-idmp-*"}, `["stream-idmp-duration", "7", "stream-idmp-maxsize", "9"]`},
	})
	do(t, c, "XADD", "new", "*", "f", "v")
	if got := xinfoIDMP(t, c, "old"); !strings.HasPrefix(got, "idmp-duration=100 idmp-maxsize=100 ") {
		t.Fatalf("old: %s", got)
	}
	if got := xinfoIDMP(t, c, "new"); !strings.HasPrefix(got, "idmp-duration=7 idmp-maxsize=9 ") {
		t.Fatalf("new: %s", got)
	}
}

// TestIDMPDuplicateKeepsWatch: a duplicate modifies nothing, so it does not
// abort a WATCH (Redis signals no key for it), while a new entry does.
func TestIDMPDuplicateKeepsWatch(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, other := dial(t, addr), dial(t, addr)
	do(t, other, "XADD", "s", "IDMP", "p", "i", "*", "f", "v")
	for _, tc := range []struct {
		iid, exec string
	}{{"i", "[(integer) 1]"}, {"j", "(nil array)"}} {
		runSteps(t, c, []step{{[]string{"WATCH", "s"}, "+OK"}})
		do(t, other, "XADD", "s", "IDMP", "p", tc.iid, "*", "f", "v")
		runSteps(t, c, []step{
			{[]string{"MULTI"}, "+OK"},
			{[]string{"XLEN", "s"}, "+QUEUED"},
		})
		v := do(t, c, "EXEC")
		if tc.exec == "(nil array)" && !v.Nil {
			t.Fatalf("iid %s: EXEC %s, want aborted", tc.iid, v)
		}
		if tc.exec != "(nil array)" && (v.Nil || len(v.Elems) != 1) {
			t.Fatalf("iid %s: EXEC %s", tc.iid, v)
		}
	}
}

// TestXADDIDMPPlans: the log carries IDMP pid iid; IDMPAUTO's iid is
// computed when the command is planned (16 bytes, the same for any order
// of the pairs), so replay never recomputes it.
func TestXADDIDMPPlans(t *testing.T) {
	base := wire.Base{DB: 3, Key: "s"}
	p := mustPlan(t, "XADD s IDMP p1 i1 MAXLEN 5 * f v")
	want := wire.XAdd{Base: base, Trim: wire.Trim{Strategy: wire.TrimMaxLen, MaxLen: 5, Limit: -1},
		ID: streams.IDSpec{Auto: true}, Fields: bs("f", "v"), IDMP: wire.IDMP{PID: "p1", IID: "i1"}}
	if !reflect.DeepEqual(p.Op, want) {
		t.Fatalf("got %#v\nwant %#v", p.Op, want)
	}
	a := mustPlan(t, "XADD s idmpauto p1 * a 1 b 2").Op.(wire.XAdd)
	b := mustPlan(t, "XADD s IDMPAUTO p1 * b 2 a 1").Op.(wire.XAdd)
	c := mustPlan(t, "XADD s IDMPAUTO p1 * a 2 b 1").Op.(wire.XAdd)
	if a.IDMP.PID != "p1" || len(a.IDMP.IID) != 16 || a.IDMP != b.IDMP || a.IDMP == c.IDMP {
		t.Fatalf("IDMPAUTO iids %q %q %q", a.IDMP.IID, b.IDMP.IID, c.IDMP.IID)
	}
	// Field names count, not only the values; a duplicate pair is fine.
	if xargs.IDMPAutoIID(bs("a", "1")) == xargs.IDMPAutoIID(bs("b", "1")) ||
		xargs.IDMPAutoIID(bs("ab", "c")) == xargs.IDMPAutoIID(bs("a", "bc")) ||
		xargs.IDMPAutoIID(bs("a", "1", "a", "1")) == xargs.IDMPAutoIID(bs("a", "1")) {
		t.Fatal("IDMPAUTO collision")
	}
	if p := mustPlan(t, "XCFGSET s IDMP-MAXSIZE 3 idmp-duration 60"); !reflect.DeepEqual(p.Op,
		wire.XCfgSet{Base: base, Duration: 60, MaxSize: 3}) {
		t.Fatalf("XCFGSET %#v", p.Op)
	}
	if p := mustPlan(t, "XIDMPRECORD s p i 5"); !reflect.DeepEqual(p.Op,
		wire.XIDMPRecord{Base: base, PID: "p", IID: "i", ID: streams.ID{Ms: 5}}) {
		t.Fatalf("XIDMPRECORD %#v", p.Op)
	}
}

// TestIDMPSweep: the leader's once-a-second sweep frees the expired iids of
// a stream no write touches (Redis's cron), through the log.
func TestIDMPSweep(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	c := dial(t, addr)
	do(t, c, "XADD", "s", "*", "f", "v")
	runSteps(t, c, []step{{[]string{"XCFGSET", "s", "IDMP-DURATION", "1"}, "+OK"}})
	id := do(t, c, "XADD", "s", "IDMP", "p", "i", "*", "f", "v")
	ms, _, _ := strings.Cut(id.Str, "-")
	var at int64
	fmt.Sscan(ms, &at)
	sh := srv.node.Shard(0)
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if now := time.Now().UnixMilli(); now < at+1200 {
			return fmt.Errorf("not expired yet (%d ms to go)", at+1200-now)
		}
		if keys, _ := sh.IDMPExpiring(0, 0, 100); len(keys) != 0 {
			return fmt.Errorf("expired iids still held by %q", keys)
		}
		return nil
	})
	if got := xinfoIDMP(t, c, "s"); got != "idmp-duration=1 idmp-maxsize=100 pids-tracked=0 iids-tracked=0 iids-added=1 iids-duplicates=0" {
		t.Fatalf("%s", got)
	}
}

// TestIDMPInMulti: the commands queue and run inside MULTI/EXEC, a
// duplicate answering the recorded ID there too.
func TestIDMPInMulti(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"MULTI"}, "+OK"},
		// Argument errors show at EXEC, as in Redis.
		{[]string{"XADD", "s", "IDMP", "p", "i", "1-*", "f", "v"}, "+QUEUED"},
		{[]string{"EXEC"}, "[(error) ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs]"},
		{[]string{"XADD", "s", "9999999999999-1", "f", "v"}, `"9999999999999-1"`},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"XIDMPRECORD", "s", "p", "i", "9999999999999-1"}, "+QUEUED"},
		{[]string{"XADD", "s", "IDMP", "p", "i", "*", "f", "v"}, "+QUEUED"},
		{[]string{"XCFGSET", "s", "IDMP-MAXSIZE", "7"}, "+QUEUED"},
		{[]string{"XCFGSET", "nokey", "IDMP-MAXSIZE", "7"}, "+QUEUED"},
		{[]string{"XCFGSET", "s", "IDMP-MAXSIZE", "0"}, "+QUEUED"},
		{[]string{"XADD", "s", "IDMP", "p", "i", "*", "f", "v"}, "+QUEUED"},
		{[]string{"EXEC"}, `[+OK, "9999999999999-1", +OK, (error) ERR no such key, (error) ERR IDMP-MAXSIZE must be between 1 and 10000 entries, "9999999999999-2"]`},
	})
}

// TestIDMPConfigFromStartup: stream-idmp-duration/maxsize given at start-up
// reach the state machine (through the log), and CONFIG GET reports what
// the state holds.
func TestIDMPConfigFromStartup(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) {
		c.StreamIDMPDuration, c.StreamIDMPMaxSize = 30, 40
	})
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"CONFIG", "GET", "stream-idmp-*"}, `["stream-idmp-duration", "30", "stream-idmp-maxsize", "40"]`},
	})
	do(t, c, "XADD", "s", "*", "f", "v")
	if got := xinfoIDMP(t, c, "s"); !strings.HasPrefix(got, "idmp-duration=30 idmp-maxsize=40 ") {
		t.Fatalf("%s", got)
	}
}
