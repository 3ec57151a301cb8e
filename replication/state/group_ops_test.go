package state

import (
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func gid(ms uint64) streams.ID { return streams.ID{Ms: ms} }

func gbase(key string) wire.Base { return wire.Base{Key: key} }

// groupKeyspace returns a keyspace with stream s holding 1-0..n-0 and group
// g at 0-0.
func groupKeyspace(t *testing.T, n uint64) *Keyspace {
	t.Helper()
	ks := New()
	for i := uint64(1); i <= n; i++ {
		if _, err := ks.Apply(wire.XAdd{Base: gbase("s"), ID: streams.IDSpec{ID: gid(i)},
			Fields: [][]byte{[]byte("f"), []byte("v")}, Trim: wire.Trim{Limit: -1}}, 1); err != nil {
			t.Fatal(err)
		}
	}
	if n > 0 {
		if _, err := ks.Apply(wire.XGroupCreate{Base: gbase("s"), Group: "g", EntriesRead: -1}, 1); err != nil {
			t.Fatal(err)
		}
	}
	return ks
}

func checkGroups(t *testing.T, ks *Keyspace) {
	t.Helper()
	if o := ks.lookupRead(0, "s", 0); o != nil {
		if err := o.Groups.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGroupErrors pins every error text to redis-server's.
func TestGroupErrors(t *testing.T) {
	const (
		keyRequired = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
	)
	tests := []struct {
		op   wire.Op
		want string
	}{
		{wire.XGroupCreate{Base: gbase("nokey"), Group: "g", EntriesRead: -1}, keyRequired},
		{wire.XGroupCreate{Base: gbase("s"), Group: "g", EntriesRead: -1}, "BUSYGROUP Consumer Group name already exists"},
		{wire.XGroupSetID{Base: gbase("nokey"), Group: "g", EntriesRead: -1}, keyRequired},
		{wire.XGroupSetID{Base: gbase("s"), Group: "nog", EntriesRead: -1}, "NOGROUP No such consumer group 'nog' for key name 's'"},
		{wire.XGroupDestroy{Base: gbase("nokey"), Group: "g"}, keyRequired},
		{wire.XGroupCreateConsumer{Base: gbase("nokey"), Group: "g", Consumer: "c"}, keyRequired},
		{wire.XGroupCreateConsumer{Base: gbase("s"), Group: "nog", Consumer: "c"}, "NOGROUP No such consumer group 'nog' for key name 's'"},
		{wire.XGroupDelConsumer{Base: gbase("s"), Group: "nog", Consumer: "c"}, "NOGROUP No such consumer group 'nog' for key name 's'"},
		{wire.XReadGroup{Group: "nog", Consumer: "c", Streams: []wire.ReadStream{{Key: "s", New: true}}},
			"NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option"},
		{wire.XReadGroup{Group: "g", Consumer: "c", Streams: []wire.ReadStream{{Key: "s", New: true}, {Key: "nokey", New: true}}},
			"NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option"},
		{wire.XClaim{Base: gbase("nokey"), Group: "g", Consumer: "c", IDs: []streams.ID{gid(1)}, IdleMs: -1, TimeMs: -1, RetryCount: -1},
			"NOGROUP No such key 'nokey' or consumer group 'g'"},
		{wire.XClaim{Base: gbase("s"), Group: "nog", Consumer: "c", IDs: []streams.ID{gid(1)}, IdleMs: -1, TimeMs: -1, RetryCount: -1},
			"NOGROUP No such key 's' or consumer group 'nog'"},
		{wire.XAutoClaim{Base: gbase("s"), Group: "nog", Consumer: "c", Count: 100}, "NOGROUP No such key 's' or consumer group 'nog'"},
		{wire.XPending{Base: gbase("nokey"), Group: "g", Summary: true}, "NOGROUP No such key 'nokey' or consumer group 'g'"},
		{wire.XPending{Base: gbase("s"), Group: "nog", End: streams.MaxID, Count: 10}, "NOGROUP No such key 's' or consumer group 'nog'"},
		{wire.XInfoStream{Base: gbase("nokey")}, "ERR no such key"},
		{wire.XInfoStream{Base: gbase("nokey"), Full: true, Count: 10}, "ERR no such key"},
		{wire.XInfoGroups{Base: gbase("nokey")}, "ERR no such key"},
		{wire.XInfoConsumers{Base: gbase("nokey"), Group: "g"}, "ERR no such key"},
		{wire.XInfoConsumers{Base: gbase("s"), Group: "nog"}, "NOGROUP No such consumer group 'nog' for key name 's'"},
	}
	ks := groupKeyspace(t, 2)
	for _, tc := range tests {
		var err error
		switch op := tc.op.(type) {
		case wire.Command:
			_, err = ks.Apply(op, 10)
		case wire.Query:
			_, err = ks.Query(op, 10)
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%T: got %v, want %q", tc.op, err, tc.want)
		}
	}
	// The failed XREADGROUP on two keys left no consumer behind.
	if res, _ := ks.Query(wire.XInfoConsumers{Base: gbase("s"), Group: "g"}, 10); len(res.([]ConsumerInfo)) != 0 {
		t.Fatalf("consumers after a failed XREADGROUP: %v", res)
	}
	checkGroups(t, ks)
}

func TestXGroupSubcommands(t *testing.T) {
	ks := groupKeyspace(t, 3)
	steps := []struct {
		cmd  wire.Command
		want any
	}{
		{wire.XGroupCreate{Base: gbase("new"), Group: "g", Dollar: true, MkStream: true, EntriesRead: -1}, nil},
		{wire.XGroupCreate{Base: gbase("s"), Group: "d", Dollar: true, EntriesRead: -1}, nil},
		{wire.XGroupCreateConsumer{Base: gbase("s"), Group: "g", Consumer: "c"}, int64(1)},
		{wire.XGroupCreateConsumer{Base: gbase("s"), Group: "g", Consumer: "c"}, int64(0)},
		{wire.XReadGroup{Group: "g", Consumer: "c", Streams: []wire.ReadStream{{Key: "s", New: true}}}, nil},
		{wire.XGroupDelConsumer{Base: gbase("s"), Group: "g", Consumer: "c"}, int64(3)},
		{wire.XGroupDelConsumer{Base: gbase("s"), Group: "g", Consumer: "c"}, int64(0)},
		{wire.XGroupSetID{Base: gbase("s"), Group: "g", ID: gid(1), EntriesRead: 1}, nil},
		{wire.XGroupDestroy{Base: gbase("s"), Group: "d"}, int64(1)},
		{wire.XGroupDestroy{Base: gbase("s"), Group: "d"}, int64(0)},
	}
	for i, st := range steps {
		res, err := ks.Apply(st.cmd, 100)
		if err != nil {
			t.Fatalf("step %d %T: %v", i, st.cmd, err)
		}
		if _, isRead := st.cmd.(wire.XReadGroup); !isRead && !reflect.DeepEqual(res, st.want) {
			t.Fatalf("step %d %T: got %#v, want %#v", i, st.cmd, res, st.want)
		}
		checkGroups(t, ks)
	}
	res, _ := ks.Query(wire.XInfoGroups{Base: gbase("s")}, 100)
	one, two := int64(1), int64(2)
	want := []GroupInfo{{Name: "g", Consumers: 0, Pending: 0, LastDeliveredID: gid(1), EntriesRead: &one, Lag: &two}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("XINFO GROUPS %+v", res)
	}
	res, _ = ks.Query(wire.XInfoGroups{Base: gbase("new")}, 100)
	zero := int64(0)
	if !reflect.DeepEqual(res, []GroupInfo{{Name: "g", LastDeliveredID: gid(0), Lag: &zero}}) {
		t.Fatalf("XINFO GROUPS on a MKSTREAM stream %+v", res)
	}
}

func TestXReadGroupShapes(t *testing.T) {
	ks := groupKeyspace(t, 2)
	ks.Apply(wire.XGroupCreate{Base: gbase("e"), Group: "g", MkStream: true, EntriesRead: -1}, 1)
	read := func(streams ...wire.ReadStream) any {
		res, err := ks.Apply(wire.XReadGroup{Group: "g", Consumer: "c", Streams: streams}, 50)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// ">" on both: only s answers.
	res := read(wire.ReadStream{Key: "s", New: true}, wire.ReadStream{Key: "e", New: true})
	if kes := res.([]KeyEntries); len(kes) != 1 || kes[0].Key != "s" || len(kes[0].Entries) != 2 {
		t.Fatalf("> read: %+v", res)
	}
	// Nothing new anywhere: nil.
	if res := read(wire.ReadStream{Key: "s", New: true}, wire.ReadStream{Key: "e", New: true}); res != nil {
		t.Fatalf("empty > read: %#v", res)
	}
	// History: every stream answers, possibly empty.
	res = read(wire.ReadStream{Key: "s"}, wire.ReadStream{Key: "e"})
	kes := res.([]KeyEntries)
	if len(kes) != 2 || len(kes[0].Entries) != 2 || kes[1].Key != "e" || kes[1].Entries == nil || len(kes[1].Entries) != 0 {
		t.Fatalf("history read: %+v", res)
	}
	checkGroups(t, ks)
}

func TestXPendingAndAck(t *testing.T) {
	ks := groupKeyspace(t, 4)
	ks.Apply(wire.XReadGroup{Group: "g", Consumer: "b", Count: 1, Streams: []wire.ReadStream{{Key: "s", New: true}}}, 100)
	ks.Apply(wire.XReadGroup{Group: "g", Consumer: "a", Count: 2, Streams: []wire.ReadStream{{Key: "s", New: true}}}, 200)
	ks.Apply(wire.XGroupCreateConsumer{Base: gbase("s"), Group: "g", Consumer: "idle"}, 200)
	res, _ := ks.Query(wire.XPending{Base: gbase("s"), Group: "g", Summary: true}, 300)
	want := PendingSummary{Count: 3, Min: gid(1), Max: gid(3), Consumers: []ConsumerPending{{"a", 2}, {"b", 1}}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("summary %+v", res)
	}
	res, _ = ks.Query(wire.XPending{Base: gbase("s"), Group: "g", IdleMs: 150, Start: streams.MinID, End: streams.MaxID, Count: 10}, 300)
	if !reflect.DeepEqual(res, []PendingEntry{{ID: gid(1), Consumer: "b", IdleMs: 200, Deliveries: 1}}) {
		t.Fatalf("extended with IDLE %+v", res)
	}
	res, _ = ks.Query(wire.XPending{Base: gbase("s"), Group: "g", IdleMs: -1, Start: streams.MinID, End: streams.MaxID, Count: 10, Consumer: "a"}, 300)
	if ids := len(res.([]PendingEntry)); ids != 2 {
		t.Fatalf("extended for a: %+v", res)
	}
	if n, _ := ks.Apply(wire.XAck{Base: gbase("s"), Group: "g", IDs: []streams.ID{gid(1), gid(2), gid(9)}}, 300); n != int64(2) {
		t.Fatalf("XACK = %v", n)
	}
	if n, _ := ks.Apply(wire.XAck{Base: gbase("nokey"), Group: "g", IDs: []streams.ID{gid(1)}}, 300); n != int64(0) {
		t.Fatalf("XACK on a missing key = %v", n)
	}
	res, _ = ks.Query(wire.XPending{Base: gbase("s"), Group: "g", Summary: true}, 300)
	if !reflect.DeepEqual(res, PendingSummary{Count: 1, Min: gid(3), Max: gid(3), Consumers: []ConsumerPending{{"a", 1}}}) {
		t.Fatalf("summary after XACK %+v", res)
	}
	res, _ = ks.Query(wire.XInfoConsumers{Base: gbase("s"), Group: "g"}, 300)
	wantC := []ConsumerInfo{{"a", 1, 100, 100}, {"b", 0, 200, 200}, {"idle", 0, 100, -1}}
	if !reflect.DeepEqual(res, wantC) {
		t.Fatalf("XINFO CONSUMERS %+v", res)
	}
	checkGroups(t, ks)
}

func TestXClaimAndXAutoClaimResults(t *testing.T) {
	ks := groupKeyspace(t, 3)
	ks.Apply(wire.XReadGroup{Group: "g", Consumer: "a", Streams: []wire.ReadStream{{Key: "s", New: true}}}, 100)
	ks.Apply(wire.XDel{Base: gbase("s"), IDs: []streams.ID{gid(2)}}, 100)
	res, err := ks.Apply(wire.XClaim{Base: gbase("s"), Group: "g", Consumer: "b", MinIdleMs: 50,
		IDs: []streams.ID{gid(1)}, IdleMs: -1, TimeMs: -1, RetryCount: -1}, 200)
	if err != nil {
		t.Fatal(err)
	}
	if es := res.([]streams.Entry); len(es) != 1 || es[0].ID != gid(1) || es[0].Fields == nil {
		t.Fatalf("XCLAIM %+v", res)
	}
	res, _ = ks.Apply(wire.XAutoClaim{Base: gbase("s"), Group: "g", Consumer: "b", Start: streams.MinID, Count: 100, JustID: true}, 300)
	ac := res.(AutoClaimResult)
	if ac.Next != gid(0) || !reflect.DeepEqual(entryIDsOf(ac.Entries), []streams.ID{gid(1), gid(3)}) || !reflect.DeepEqual(ac.Deleted, []streams.ID{gid(2)}) {
		t.Fatalf("XAUTOCLAIM %+v", ac)
	}
	checkGroups(t, ks)
}

func entryIDsOf(es []streams.Entry) []streams.ID {
	out := []streams.ID{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}
