package main

// Restart tests on the real binary (issue #3): a mixed workload over several
// databases, then a restart (SIGTERM, SIGKILL, SAVE + SIGKILL, everysec +
// SIGTERM), and the state afterwards must equal the state before, compared
// field by field through XINFO STREAM FULL, XRANGE, XPENDING (idle times
// excluded), XINFO GROUPS/CONSUMERS (idle times excluded), and TTLs within
// the time that passed.

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// stateDump is everything the restart tests compare: one entry per
// "db/key/view" (exact), plus the keys' PTTLs (compared within bounds).
type stateDump struct {
	views map[string]any
	pttl  map[string]int64
	at    time.Time // when the PTTLs were read
}

// dumpState reads every key of every database through the public commands.
func dumpState(t *testing.T, port int) stateDump {
	t.Helper()
	d := stateDump{views: map[string]any{}, pttl: map[string]int64{}}
	for db := 0; db < 16; db++ {
		c := newClient(t, port, db)
		keys := asList(t, "KEYS", do(t, c, "KEYS", "*"))
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = asStr(t, "KEYS", k)
		}
		sort.Strings(names)
		d.views[fmt.Sprintf("%d/dbsize", db)] = do(t, c, "DBSIZE")
		for _, k := range names {
			p := fmt.Sprintf("%d/%s/", db, k)
			d.views[p+"type"] = do(t, c, "TYPE", k)
			d.views[p+"xinfo-full"] = do(t, c, "XINFO", "STREAM", k, "FULL", "COUNT", 0)
			d.views[p+"xrange"] = do(t, c, "XRANGE", k, "-", "+")
			d.views[p+"xlen"] = do(t, c, "XLEN", k)
			groups := asList(t, "XINFO GROUPS", do(t, c, "XINFO", "GROUPS", k))
			d.views[p+"xinfo-groups"] = groups
			for _, g := range groups {
				name := asStr(t, "group name", field(t, "XINFO GROUPS", asList(t, "group", g), "name"))
				gp := p + "group/" + name + "/"
				d.views[gp+"xpending"] = do(t, c, "XPENDING", k, name)
				var ext []any
				for _, e := range asList(t, "XPENDING", do(t, c, "XPENDING", k, name, "-", "+", 1_000_000)) {
					row := asList(t, "XPENDING row", e)
					// ID, consumer, idle (relative: dropped), delivery count.
					ext = append(ext, []any{row[0], row[1], row[3]})
				}
				d.views[gp+"xpending-ext"] = ext
				var cons []any
				for _, cv := range asList(t, "XINFO CONSUMERS", do(t, c, "XINFO", "CONSUMERS", k, name)) {
					cons = append(cons, dropFields(asList(t, "consumer", cv), "idle", "inactive"))
				}
				d.views[gp+"xinfo-consumers"] = cons
			}
			d.pttl[fmt.Sprintf("%d/%s", db, k)] = asInt(t, "PTTL", do(t, c, "PTTL", k))
		}
	}
	d.at = time.Now()
	return d
}

// compareDumps fails the test where after differs from before; a PTTL may
// only have gone down by at most the wall time between the two dumps.
func compareDumps(t *testing.T, before, after stateDump) {
	t.Helper()
	var keys []string
	for k := range before.views {
		keys = append(keys, k)
	}
	for k := range after.views {
		if _, ok := before.views[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, inB := before.views[k]
		a, inA := after.views[k]
		switch {
		case !inB:
			t.Errorf("%s: present after restart only: %v", k, a)
		case !inA:
			t.Errorf("%s: lost in restart (was %v)", k, b)
		case !reflect.DeepEqual(a, b):
			t.Errorf("%s differs after restart:\nbefore %v\nafter  %v", k, b, a)
		}
	}
	elapsed := after.at.Sub(before.at).Milliseconds()
	for k, b := range before.pttl {
		a, ok := after.pttl[k]
		if !ok {
			continue // reported above
		}
		if b < 0 {
			if a != b {
				t.Errorf("%s: PTTL %d after restart, was %d", k, a, b)
			}
			continue
		}
		// The dumps read PTTL at slightly different moments than `at`;
		// allow 250ms of slack on the lower bound for that.
		if a > b || a < b-elapsed-250 {
			t.Errorf("%s: PTTL %d after restart; was %d, %dms earlier", k, a, b, elapsed)
		}
	}
}

// runWorkload issues the mixed workload through port; half selects which
// part (0: first, 1: second) so a test can snapshot in between. Every reply
// must be a success.
func runWorkload(t *testing.T, port int, half int) {
	t.Helper()
	ctx := ctxT(t)
	c0 := newClient(t, port, 0)
	if half == 0 {
		for i := 1; i <= 30; i++ {
			do(t, c0, "XADD", "orders", fmt.Sprintf("1000-%d", i), "item", fmt.Sprintf("i%d", i), "qty", i)
		}
		do(t, c0, "XADD", "orders", "*", "item", "star", "note", "auto id")
		do(t, c0, "XGROUP", "CREATE", "orders", "billing", "0")
		do(t, c0, "XGROUP", "CREATE", "orders", "audit", "$")
		do(t, c0, "XGROUP", "CREATE", "orders", "late", "1000-10", "ENTRIESREAD", 10)
		do(t, c0, "XGROUP", "CREATECONSUMER", "orders", "billing", "idle-one")
		do(t, c0, "XREADGROUP", "GROUP", "billing", "alice", "COUNT", 5, "STREAMS", "orders", ">")
		do(t, c0, "XREADGROUP", "GROUP", "billing", "bob", "COUNT", 5, "STREAMS", "orders", ">")
		do(t, c0, "XREADGROUP", "GROUP", "late", "zed", "COUNT", 3, "STREAMS", "orders", ">")
		do(t, c0, "XACK", "orders", "billing", "1000-1", "1000-2")
		do(t, c0, "XCLAIM", "orders", "billing", "carol", 0, "1000-6")
		do(t, c0, "XCLAIM", "orders", "billing", "carol", 0, "1000-7", "RETRYCOUNT", 7)
		do(t, c0, "XCLAIM", "orders", "billing", "carol", 0, "1000-8", "JUSTID")
		do(t, c0, "XAUTOCLAIM", "orders", "billing", "dave", 0, "0-0", "COUNT", 1)
		do(t, c0, "XDEL", "orders", "1000-20", "1000-9") // 1000-9 is pending with bob
		do(t, c0, "XTRIM", "orders", "MINID", "1000-4")
		do(t, c0, "XGROUP", "SETID", "orders", "audit", "1000-15", "ENTRIESREAD", 12)
		do(t, c0, "XREADGROUP", "GROUP", "audit", "eve", "NOACK", "COUNT", 4, "STREAMS", "orders", ">")

		// Keys with TTLs: relative, absolute, and one removed again.
		do(t, c0, "XADD", "session", "*", "user", "u1")
		do(t, c0, "EXPIRE", "session", 1000)
		do(t, c0, "XADD", "cache", "*", "v", "1")
		do(t, c0, "PEXPIREAT", "cache", time.Now().Add(time.Hour).UnixMilli())
		do(t, c0, "XADD", "kept", "*", "v", "1")
		do(t, c0, "EXPIRE", "kept", 50)
		do(t, c0, "PERSIST", "kept")

		// An empty stream that keeps its group and last ID.
		do(t, c0, "XADD", "empty", "5-5", "a", "b")
		do(t, c0, "XGROUP", "CREATE", "empty", "g", "0")
		do(t, c0, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "empty", ">")
		do(t, c0, "XDEL", "empty", "5-5")

		// A transaction (one EXEC batch).
		_, err := c0.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Do(ctx, "XADD", "tx", "1-1", "a", "1")
			p.Do(ctx, "XADD", "tx", "*", "b", "2")
			p.Do(ctx, "XGROUP", "CREATE", "tx", "g", "0")
			p.Do(ctx, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "tx", ">")
			p.Do(ctx, "XACK", "tx", "g", "1-1")
			return nil
		})
		if err != nil {
			t.Fatalf("MULTI/EXEC: %v", err)
		}

		// Database 3: a long stream trimmed approximately (node layout
		// matters), NOMKSTREAM, and a pipeline of writes.
		c3 := newClient(t, port, 3)
		cmds, err := c3.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range 700 {
				p.Do(ctx, "XADD", "log", "*", "n", i, "payload", fmt.Sprintf("%0*d", i%40, i))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("pipelined XADD: %v", err)
		}
		for i, cmd := range cmds {
			if cmd.Err() != nil {
				t.Fatalf("pipelined XADD %d: %v", i, cmd.Err())
			}
		}
		do(t, c3, "XTRIM", "log", "MAXLEN", "~", 250)
		do(t, c3, "XADD", "log", "MAXLEN", "~", 300, "*", "n", "last")
		do(t, c3, "XGROUP", "CREATE", "log", "readers", "0")
		do(t, c3, "XREADGROUP", "GROUP", "readers", "r1", "COUNT", 40, "STREAMS", "log", ">")
		do(t, c3, "XREADGROUP", "GROUP", "readers", "r2", "COUNT", 15, "STREAMS", "log", ">")
		do(t, c3, "XADD", "nothere", "NOMKSTREAM", "*", "a", "b")
		return
	}

	// Second half: changes on top of the first (after a possible SAVE).
	do(t, c0, "XADD", "orders", "*", "item", "after-save")
	do(t, c0, "XSETID", "orders", "9999999999999-0", "ENTRIESADDED", 500, "MAXDELETEDID", "1000-25")
	do(t, c0, "XADD", "orders", "*", "item", "after-setid")
	do(t, c0, "XREADGROUP", "GROUP", "billing", "alice", "COUNT", 2, "STREAMS", "orders", ">")
	do(t, c0, "XACK", "orders", "billing", "1000-3", "1000-10")
	do(t, c0, "XGROUP", "DELCONSUMER", "orders", "billing", "idle-one")

	c15 := newClient(t, port, 15)
	do(t, c15, "XADD", "a", "1-1", "f", "v")
	do(t, c15, "XADD", "b", "1-1", "f", "v")
	do(t, c15, "XGROUP", "CREATE", "a", "g1", "0")
	do(t, c15, "XGROUP", "CREATE", "a", "g2", "0")
	do(t, c15, "XGROUP", "DESTROY", "a", "g2")
	do(t, c15, "RENAME", "a", "renamed")
	do(t, c15, "DEL", "b")
	do(t, c15, "XADD", "c", "*", "f", "v")
	do(t, c15, "PEXPIRE", "c", 600_000)

	c7 := newClient(t, port, 7)
	do(t, c7, "XADD", "gone", "*", "f", "v")
	do(t, c7, "FLUSHDB")
	do(t, c7, "XADD", "fresh", "*", "f", "v")
}

// TestRestartPreservesState runs the workload, restarts the binary in four
// ways, and compares the full state.
func TestRestartPreservesState(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts the binary several times")
	}
	cases := []struct {
		name      string
		saveMid   bool   // SAVE between the two halves of the workload
		kill      bool   // SIGKILL instead of SIGTERM
		config    string // config file contents ("" = none)
		wantFsync string
	}{
		{name: "sigterm", wantFsync: "always"},
		{name: "sigkill", kill: true, wantFsync: "always"},
		{name: "save-then-sigkill", saveMid: true, kill: true, wantFsync: "always"},
		{name: "everysec-sigterm", config: "appendfsync everysec\n", wantFsync: "everysec"},
		{name: "everysec-sigkill", config: "appendfsync everysec\n", kill: true, wantFsync: "everysec"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "data")
			var extra []string
			if tc.config != "" {
				conf := filepath.Join(root, "streamd.conf")
				if err := os.WriteFile(conf, []byte(tc.config), 0o644); err != nil {
					t.Fatal(err)
				}
				extra = []string{conf}
			}
			port := pickPort(t)
			s := startReady(t, port, dir, extra...)
			c := newClient(t, port, 0)
			for param, want := range map[string]string{"appendonly": "yes", "appendfsync": tc.wantFsync} {
				got := asList(t, "CONFIG GET", do(t, c, "CONFIG", "GET", param))
				if len(got) != 2 || got[1] != want {
					t.Errorf("CONFIG GET %s = %v, want %s", param, got, want)
				}
			}
			runWorkload(t, port, 0)
			if tc.saveMid {
				if r := do(t, c, "SAVE"); r != "OK" {
					t.Fatalf("SAVE = %v", r)
				}
			}
			runWorkload(t, port, 1)
			before := dumpState(t, port)
			c.Close()
			if tc.kill {
				s.kill()
			} else {
				s.terminate()
			}

			s = startReady(t, port, dir, extra...)
			after := dumpState(t, port)
			compareDumps(t, before, after)

			// A second restart (now from whatever the first one wrote) keeps
			// it all too.
			s.terminate()
			startReady(t, port, dir, extra...)
			compareDumps(t, before, dumpState(t, port))
		})
	}
}

// TestRestartSanity checks that the dump sees what the workload wrote, so
// that an empty-vs-empty comparison cannot pass the restart test.
func TestRestartSanity(t *testing.T) {
	port := pickPort(t)
	startReady(t, port, filepath.Join(t.TempDir(), "data"))
	runWorkload(t, port, 0)
	runWorkload(t, port, 1)
	d := dumpState(t, port)
	want := map[string]any{
		"0/orders/xlen": int64(28),
		"3/dbsize":      int64(1),
		"7/dbsize":      int64(1),
		"15/dbsize":     int64(2),
	}
	for k, v := range want {
		if !reflect.DeepEqual(d.views[k], v) {
			t.Errorf("%s = %v, want %v", k, d.views[k], v)
		}
	}
	if p := d.pttl["0/session"]; p <= 990_000 || p > 1_000_000 {
		t.Errorf("PTTL session = %d, want about 1000s", p)
	}
	if p := d.pttl["0/kept"]; p != -1 {
		t.Errorf("PTTL kept = %d, want -1", p)
	}
	if n := len(asList(t, "xpending", d.views["3/log/group/readers/xpending-ext"])); n != 55 {
		t.Errorf("log/readers has %d pending, want 55", n)
	}
	t.Logf("dump has %d views over %s", len(d.views), strconv.Itoa(len(d.pttl))+" keys")
}
