package state

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func TestExpire(t *testing.T) {
	type step struct {
		cmd  wire.Command
		now  int64
		want int64
	}
	exp := func(ms int64, rel bool, cond wire.ExpireCond) wire.Expire {
		return wire.Expire{Base: base("k"), Ms: ms, Relative: rel, Cond: cond}
	}
	tests := []struct {
		name    string
		steps   []step
		ttlAt   int64
		wantTTL int64 // PTTL at ttlAt
	}{
		{"relative", []step{{exp(5000, true, wire.ExpireAlways), 1000, 1}}, 2000, 4000},
		{"absolute", []step{{exp(9000, false, wire.ExpireAlways), 1000, 1}}, 2000, 7000},
		{"missing key", []step{{wire.Expire{Base: base("nokey"), Ms: 10, Relative: true}, 0, 0}}, 0, -1},
		{"nx", []step{{exp(100, true, wire.ExpireNX), 0, 1}, {exp(500, true, wire.ExpireNX), 0, 0}}, 0, 100},
		{"xx without ttl", []step{{exp(100, true, wire.ExpireXX), 0, 0}}, 0, -1},
		{"xx with ttl", []step{{exp(100, true, wire.ExpireAlways), 0, 1}, {exp(500, true, wire.ExpireXX), 0, 1}}, 0, 500},
		{"gt without ttl fails", []step{{exp(100, true, wire.ExpireGT), 0, 0}}, 0, -1},
		{"gt", []step{{exp(100, true, wire.ExpireAlways), 0, 1}, {exp(50, true, wire.ExpireGT), 0, 0}, {exp(200, true, wire.ExpireGT), 0, 1}}, 0, 200},
		{"lt without ttl passes", []step{{exp(100, true, wire.ExpireLT), 0, 1}}, 0, 100},
		{"lt", []step{{exp(100, true, wire.ExpireAlways), 0, 1}, {exp(150, true, wire.ExpireLT), 0, 0}, {exp(50, true, wire.ExpireLT), 0, 1}}, 0, 50},
		{"xx lt without ttl fails", []step{{exp(100, true, wire.ExpireXX|wire.ExpireLT), 0, 0}}, 0, -1},
		{"xx lt", []step{{exp(100, true, wire.ExpireAlways), 0, 1}, {exp(150, true, wire.ExpireXX|wire.ExpireLT), 0, 0}, {exp(50, true, wire.ExpireXX|wire.ExpireLT), 0, 1}}, 0, 50},
		{"xx gt without ttl fails", []step{{exp(100, true, wire.ExpireXX|wire.ExpireGT), 0, 0}}, 0, -1},
		{"xx gt", []step{{exp(100, true, wire.ExpireAlways), 0, 1}, {exp(50, true, wire.ExpireXX|wire.ExpireGT), 0, 0}, {exp(200, true, wire.ExpireXX|wire.ExpireGT), 0, 1}}, 0, 200},
		{"xx lt past deadline deletes", []step{{exp(100, true, wire.ExpireAlways), 0, 1}, {exp(-1, true, wire.ExpireXX|wire.ExpireLT), 0, 1}}, 0, -2},
		{"past deadline deletes", []step{{exp(-1, true, wire.ExpireAlways), 1000, 1}}, 1000, -2},
		{"deadline equal now deletes", []step{{exp(1000, false, wire.ExpireAlways), 1000, 1}}, 1000, -2},
		{"persist", []step{{exp(100, true, wire.ExpireAlways), 0, 1}, {wire.Persist{Base: base("k")}, 0, 1}, {wire.Persist{Base: base("k")}, 0, 0}}, 50, -1},
		{"expired key is gone for writes", []step{{exp(100, true, wire.ExpireAlways), 0, 1}, {wire.Persist{Base: base("k")}, 100, 0}}, 50, -2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ks := newKeys(t, "k")
			for i, st := range tc.steps {
				if got := mustApply(t, ks, st.cmd, st.now); got != st.want {
					t.Fatalf("step %d: %v, want %d", i, got, st.want)
				}
			}
			if got := mustQuery(t, ks, wire.TTL{Base: base("k"), Millis: true}, tc.ttlAt); got != tc.wantTTL {
				t.Fatalf("pttl %v, want %d", got, tc.wantTTL)
			}
		})
	}
}

func TestTTLAndVisibility(t *testing.T) {
	ks := newKeys(t, "k", "p")
	mustApply(t, ks, wire.Expire{Base: base("k"), Ms: 2500, Relative: true}, 0)
	ttl := func(now int64, millis bool) any {
		return mustQuery(t, ks, wire.TTL{Base: base("k"), Millis: millis}, now)
	}
	tests := []struct {
		now    int64
		millis bool
		want   int64
	}{
		{0, false, 3}, {1, false, 2}, {1999, false, 1}, {2000, false, 1}, {2001, false, 0}, {2499, true, 1}, {2500, true, -2},
	}
	for _, tc := range tests {
		if got := ttl(tc.now, tc.millis); got != tc.want {
			t.Errorf("ttl at %d (ms %v) = %v, want %d", tc.now, tc.millis, got, tc.want)
		}
	}
	if got := mustQuery(t, ks, wire.TTL{Base: base("p")}, 0); got != int64(-1) {
		t.Errorf("ttl without deadline %v", got)
	}
	// Expired keys are invisible to every query before any write deletes them.
	at := int64(3000)
	checks := []struct {
		q    wire.Query
		want any
	}{
		{wire.Exists{Names: []string{"k", "p", "p"}}, int64(2)},
		{wire.Type{Base: base("k")}, "none"},
		{wire.Type{Base: base("p")}, "stream"},
		{wire.DBSize{}, int64(1)},
		{wire.KeysMatch{Pattern: "*"}, []string{"p"}},
		{wire.XLen{Base: base("k")}, int64(0)},
		{wire.LastIDs{Names: []string{"k"}}, []streams.ID{{}}},
	}
	for _, c := range checks {
		if got := mustQuery(t, ks, c.q, at); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%T = %#v, want %#v", c.q, got, c.want)
		}
	}
	info := mustQuery(t, ks, wire.KeyspaceInfo{}, 0).([]DBInfo)
	if len(info) != NumDatabases || info[0] != (DBInfo{Keys: 2, Expires: 1}) {
		t.Errorf("keyspace info at 0: %v", info)
	}
	info = mustQuery(t, ks, wire.KeyspaceInfo{}, at).([]DBInfo)
	if info[0] != (DBInfo{Keys: 1, Expires: 0}) {
		t.Errorf("keyspace info at %d: %v", at, info[0])
	}
	// A write to an expired key sees it absent and starts a new stream.
	if got := mustApply(t, ks, xadd("k", "1-0"), at); got != (streams.ID{Ms: 1}) {
		t.Errorf("xadd on expired key: %v", got)
	}
	if got := mustQuery(t, ks, wire.TTL{Base: base("k")}, at); got != int64(-1) {
		t.Errorf("recreated key kept the old deadline: %v", got)
	}
}

func TestExpiredSweep(t *testing.T) {
	ks := newKeys(t, "a", "b", "c")
	mustApply(t, ks, wire.Expire{Base: base("a"), Ms: 100, Relative: true}, 0)
	mustApply(t, ks, wire.Expire{Base: base("b"), Ms: 500, Relative: true}, 0)
	got := mustApply(t, ks, wire.Expired{Names: []string{"a", "b", "c", "zz"}}, 100)
	if got != int64(1) {
		t.Fatalf("expired %v, want 1", got)
	}
	if n := len(ks.db(0).keys); n != 2 {
		t.Fatalf("%d keys left, want 2", n)
	}
}

func TestDelAndFlush(t *testing.T) {
	ks := newKeys(t, "a", "b")
	mustApply(t, ks, xadd("x", "1-1"), 0)
	if got := mustApply(t, ks, wire.Del{Names: []string{"a", "a", "zz"}}, 0); got != int64(1) {
		t.Fatalf("del %v", got)
	}
	ks.dbs[3].add("d3", &Object{Stream: streams.New()})
	mustApply(t, ks, wire.FlushDB{DB: 0}, 0)
	if mustQuery(t, ks, wire.DBSize{DB: 0}, 0) != int64(0) || mustQuery(t, ks, wire.DBSize{DB: 3}, 0) != int64(1) {
		t.Fatal("flushdb emptied the wrong database")
	}
	mustApply(t, ks, wire.FlushAll{}, 0)
	if mustQuery(t, ks, wire.DBSize{DB: 3}, 0) != int64(0) {
		t.Fatal("flushall left keys")
	}
}

func TestRename(t *testing.T) {
	tests := []struct {
		name     string
		cmd      wire.Rename
		want     any
		err      string
		wantKeys []string
	}{
		{"missing", wire.Rename{Src: "zz", Dst: "x"}, nil, "ERR no such key", []string{"a", "b"}},
		{"missing nx", wire.Rename{Src: "zz", Dst: "x", NX: true}, nil, "ERR no such key", []string{"a", "b"}},
		{"same", wire.Rename{Src: "a", Dst: "a"}, nil, "", []string{"a", "b"}},
		{"same nx", wire.Rename{Src: "a", Dst: "a", NX: true}, int64(0), "", []string{"a", "b"}},
		{"to new", wire.Rename{Src: "a", Dst: "c"}, nil, "", []string{"b", "c"}},
		{"nx to new", wire.Rename{Src: "a", Dst: "c", NX: true}, int64(1), "", []string{"b", "c"}},
		{"overwrite", wire.Rename{Src: "a", Dst: "b"}, nil, "", []string{"b"}},
		{"nx existing", wire.Rename{Src: "a", Dst: "b", NX: true}, int64(0), "", []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ks := newKeys(t, "a")
			mustApply(t, ks, xadd("b", "9-9"), 0)
			mustApply(t, ks, wire.Expire{Base: base("a"), Ms: 1000, Relative: true}, 0)
			res, err := ks.Apply(tc.cmd, 0)
			if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) || res != tc.want {
				t.Fatalf("got %v, %v; want %v, %q", res, err, tc.want, tc.err)
			}
			keys := mustQuery(t, ks, wire.KeysMatch{Pattern: "*"}, 0)
			if !reflect.DeepEqual(keys, tc.wantKeys) {
				t.Fatalf("keys %v, want %v", keys, tc.wantKeys)
			}
			if tc.err == "" && tc.want != int64(0) && tc.cmd.Src != tc.cmd.Dst {
				// The deadline moved with the key, and the stream with it.
				if got := mustQuery(t, ks, wire.TTL{Base: base(tc.cmd.Dst), Millis: true}, 0); got != int64(1000) {
					t.Fatalf("destination pttl %v", got)
				}
				ids := mustQuery(t, ks, wire.LastIDs{Names: []string{tc.cmd.Dst}}, 0)
				if !reflect.DeepEqual(ids, []streams.ID{{Ms: 1, Seq: 1}}) {
					t.Fatalf("destination last id %v", ids)
				}
			}
		})
	}
	// An expired source is a missing key.
	ks := newKeys(t, "a")
	mustApply(t, ks, wire.Expire{Base: base("a"), Ms: 10, Relative: true}, 0)
	if _, err := ks.Apply(wire.Rename{Src: "a", Dst: "b"}, 10); err != ErrNoSuchKey {
		t.Fatalf("rename of expired key: %v", err)
	}
}

func TestKeysMatchSorted(t *testing.T) {
	ks := newKeys(t, "user:2", "user:10", "admin", "user:1", "u[x]")
	tests := []struct {
		pattern string
		want    []string
	}{
		{"*", []string{"admin", "u[x]", "user:1", "user:10", "user:2"}},
		{"user:?", []string{"user:1", "user:2"}},
		{"user:[12]*", []string{"user:1", "user:10", "user:2"}},
		{`u\[x\]`, []string{"u[x]"}},
		{"nomatch*", []string{}},
	}
	for _, tc := range tests {
		if got := mustQuery(t, ks, wire.KeysMatch{Pattern: tc.pattern}, 0); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("KEYS %s = %v, want %v", tc.pattern, got, tc.want)
		}
	}
}

func TestConfigSet(t *testing.T) {
	tests := []struct {
		name, value string
		err         string
		entries     int
		bytes       int64
	}{
		{"stream-node-max-entries", "7", "", 7, 4096},
		{"STREAM-NODE-MAX-ENTRIES", "0", "", 0, 4096},
		{"stream-node-max-bytes", "8kb", "", 100, 8192},
		{"stream-node-max-bytes", "2k", "", 100, 2000},
		{"stream-node-max-bytes", "x", "ERR CONFIG SET failed (possibly related to argument 'stream-node-max-bytes') - argument must be a memory value", 100, 4096},
		{"stream-node-max-entries", "abc", "ERR CONFIG SET failed (possibly related to argument 'stream-node-max-entries') - argument couldn't be parsed into an integer", 100, 4096},
		{"maxmemory", "1", "ERR Unknown option or number of arguments for CONFIG SET - 'maxmemory'", 100, 4096},
	}
	for _, tc := range tests {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			ks := New()
			_, err := ks.Apply(wire.ConfigSet{Name: tc.name, Value: tc.value}, 0)
			if fmt.Sprint(err) != tc.err && !(err == nil && tc.err == "") {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
			if ks.NodeMaxEntries() != tc.entries || ks.NodeMaxBytes() != tc.bytes {
				t.Fatalf("entries %d bytes %d", ks.NodeMaxEntries(), ks.NodeMaxBytes())
			}
		})
	}
}

func TestExec(t *testing.T) {
	ks := New()
	res := mustApply(t, ks, wire.Exec{Ops: []wire.Op{
		xadd("s", "*"),
		xadd("s", "1-0"), // error: smaller than the first one, does not stop the rest
		xadd("s", "*"),
		wire.XLen{Base: base("s")},
		wire.Rename{Src: "nokey", Dst: "x"},
		wire.Expire{Base: base("s"), Ms: 100, Relative: true},
		wire.TTL{Base: base("s"), Millis: true},
	}}, 5000).([]wire.Outcome)
	want := []wire.Outcome{
		{Result: streams.ID{Ms: 5000}},
		{Err: streams.ErrIDTooSmall},
		{Result: streams.ID{Ms: 5000, Seq: 1}},
		{Result: int64(2)},
		{Err: ErrNoSuchKey},
		{Result: int64(1)},
		{Result: int64(100)},
	}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("exec\n got %v\nwant %v", res, want)
	}
}

// TestScanGuarantee checks SCAN's promise with keys added and removed
// between calls: every key present for the whole iteration is returned, and
// the iteration ends.
func TestScanGuarantee(t *testing.T) {
	for _, count := range []int64{0, 1, 3, 10, 1000} {
		ks := New()
		stable := map[string]bool{}
		for i := 0; i < 200; i++ {
			k := fmt.Sprintf("key:%d", i)
			mustApply(t, ks, xadd(k, "1-1"), 0)
			if i%3 != 0 {
				stable[k] = true
			}
		}
		seen := map[string]bool{}
		cursor, calls := uint64(0), 0
		for {
			r := mustQuery(t, ks, wire.Scan{Cursor: cursor, Count: count}, 0).(ScanResult)
			for _, k := range r.Keys {
				seen[k] = true
			}
			// Churn: drop a non-stable key and add a new one each call.
			mustApply(t, ks, wire.Del{Names: []string{fmt.Sprintf("key:%d", 3*calls)}}, 0)
			mustApply(t, ks, xadd(fmt.Sprintf("new:%d", calls), "1-1"), 0)
			calls++
			if r.Cursor == 0 || calls > 1000 {
				break
			}
			cursor = r.Cursor
		}
		if calls > 1000 {
			t.Fatalf("count %d: scan did not end", count)
		}
		for k := range stable {
			if !seen[k] {
				t.Fatalf("count %d: stable key %s never returned", count, k)
			}
		}
	}
}

func TestScanFilters(t *testing.T) {
	ks := newKeys(t, "a1", "a2", "b1", "gone")
	mustApply(t, ks, wire.Expire{Base: base("gone"), Ms: 10, Relative: true}, 0)
	all := func(q wire.Scan) []string {
		var out []string
		for {
			r := mustQuery(t, ks, q, 10).(ScanResult)
			out = append(out, r.Keys...)
			if r.Cursor == 0 {
				break
			}
			q.Cursor = r.Cursor
		}
		sort.Strings(out)
		return out
	}
	tests := []struct {
		q    wire.Scan
		want []string
	}{
		{wire.Scan{Count: 1}, []string{"a1", "a2", "b1"}},
		{wire.Scan{Count: 1, Match: "a*"}, []string{"a1", "a2"}},
		{wire.Scan{Type: "STREAM"}, []string{"a1", "a2", "b1"}},
		{wire.Scan{Type: "string"}, nil},
	}
	for _, tc := range tests {
		if got := all(tc.q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("scan %+v = %v, want %v", tc.q, got, tc.want)
		}
	}
	// The same state gives the same pages (deterministic across replicas).
	r1 := mustQuery(t, ks, wire.Scan{Count: 2}, 10)
	r2 := mustQuery(t, ks, wire.Scan{Count: 2}, 10)
	if !reflect.DeepEqual(r1, r2) {
		t.Fatal("scan is not deterministic")
	}
}
