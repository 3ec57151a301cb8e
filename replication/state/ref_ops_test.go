package state

import (
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// refKeyspace has stream s with entries 1-0..n-0 and groups g1, g2 that
// each read the first `read` entries (consumer c).
func refKeyspace(t *testing.T, n, read int) *Keyspace {
	t.Helper()
	ks := New()
	for i := 1; i <= n; i++ {
		x := xadd("s", "1-0")
		x.ID = streams.IDSpec{ID: id(uint64(i), 0)}
		mustApply(t, ks, x, 10)
	}
	for _, g := range []string{"g1", "g2"} {
		mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: g, EntriesRead: -1}, 10)
		mustApply(t, ks, wire.XReadGroup{Group: g, Consumer: "c", Count: int64(read),
			Streams: []wire.ReadStream{{Key: "s", New: true}}}, 10)
	}
	return ks
}

func refRes(codes []int64, deleted int64) wire.RefResult {
	return wire.RefResult{Codes: codes, Deleted: deleted}
}

func pendingCount(t *testing.T, ks *Keyspace, group string) int64 {
	t.Helper()
	return mustQuery(t, ks, wire.XPending{Base: base("s"), Group: group, Summary: true, IdleMs: -1}, 10).(PendingSummary).Count
}

func TestXDelExXAckDel(t *testing.T) {
	ids := func(ms ...uint64) []streams.ID {
		out := make([]streams.ID, len(ms))
		for i, m := range ms {
			out[i] = id(m, 0)
		}
		return out
	}
	ks := refKeyspace(t, 6, 3)
	// Missing key and group.
	if r := mustApply(t, ks, wire.XDelEx{Base: base("none"), IDs: ids(1, 2)}, 10); !reflect.DeepEqual(r, refRes([]int64{-1, -1}, 0)) {
		t.Fatalf("missing key: %#v", r)
	}
	if r := mustApply(t, ks, wire.XAckDel{Base: base("s"), Group: "none", IDs: ids(1)}, 10); !reflect.DeepEqual(r, refRes([]int64{-1}, 0)) {
		t.Fatalf("missing group: %#v", r)
	}
	// XACKDEL ACKED: acknowledged in g1, still pending in g2: 2; the same
	// ID again is no longer pending in g1: -1.
	r := mustApply(t, ks, wire.XAckDel{Base: base("s"), Group: "g1", Mode: wire.RefAcked, IDs: ids(1, 1, 4)}, 10)
	if !reflect.DeepEqual(r, refRes([]int64{2, -1, -1}, 0)) {
		t.Fatalf("XACKDEL ACKED: %#v", r)
	}
	if pendingCount(t, ks, "g1") != 2 || pendingCount(t, ks, "g2") != 3 {
		t.Fatalf("pending %d %d", pendingCount(t, ks, "g1"), pendingCount(t, ks, "g2"))
	}
	// XDELEX KEEPREF leaves g1's and g2's reference to 2-0 dangling;
	// XACKDEL then still answers 1 for it, with nothing deleted.
	r = mustApply(t, ks, wire.XDelEx{Base: base("s"), IDs: ids(2, 2)}, 10)
	if !reflect.DeepEqual(r, refRes([]int64{1, -1}, 1)) {
		t.Fatalf("XDELEX: %#v", r)
	}
	r = mustApply(t, ks, wire.XAckDel{Base: base("s"), Group: "g1", IDs: ids(2)}, 10)
	if !reflect.DeepEqual(r, refRes([]int64{1}, 0)) {
		t.Fatalf("XACKDEL gone entry: %#v", r)
	}
	if e := wire.EffectsOf(wire.XAckDel{Base: base("s")}, r, nil); len(e.Modified) != 0 {
		t.Fatalf("nothing deleted, but modified: %+v", e)
	}
	// DELREF on the gone 2-0 drops g2's dangling reference: -1.
	r = mustApply(t, ks, wire.XDelEx{Base: base("s"), Mode: wire.RefDelete, IDs: ids(2)}, 10)
	if !reflect.DeepEqual(r, refRes([]int64{-1}, 0)) || pendingCount(t, ks, "g2") != 2 {
		t.Fatalf("XDELEX DELREF gone: %#v, g2 pending %d", r, pendingCount(t, ks, "g2"))
	}
	// max-deleted-entry-id follows XDELEX deletions, as for XDEL.
	r = mustApply(t, ks, wire.XDelEx{Base: base("s"), Mode: wire.RefDelete, IDs: ids(3)}, 10)
	if !reflect.DeepEqual(r, refRes([]int64{1}, 1)) {
		t.Fatalf("XDELEX DELREF: %#v", r)
	}
	info := mustQuery(t, ks, wire.XInfoStream{Base: base("s")}, 10).(StreamInfo)
	if info.MaxDeletedEntryID != id(3, 0) || info.Length != 4 || info.RecordedFirstEntryID != id(1, 0) {
		t.Fatalf("info %+v", info.StreamHeader)
	}
	if pendingCount(t, ks, "g1") != 0 || pendingCount(t, ks, "g2") != 1 {
		t.Fatalf("pending %d %d", pendingCount(t, ks, "g1"), pendingCount(t, ks, "g2"))
	}
	// Inside EXEC.
	out := mustApply(t, ks, wire.Exec{Ops: []wire.Op{
		wire.XDelEx{Base: base("s"), Mode: wire.RefAcked, IDs: ids(1, 4)},
		wire.XLen{Base: base("s")},
	}}, 10).([]wire.Outcome)
	if !reflect.DeepEqual(out[0].Result, refRes([]int64{2, 2}, 0)) || out[1].Result != int64(4) {
		t.Fatalf("exec %#v", out)
	}
	checkInvariants(t, ks)
}

// XADD/XTRIM with ACKED keep what a group references; DELREF drops the
// trimmed entries' references.
func TestTrimRefModes(t *testing.T) {
	ks := refKeyspace(t, 6, 3)
	trim := wire.Trim{Strategy: wire.TrimMaxLen, MaxLen: 0, Limit: -1, Ref: wire.RefAcked}
	if n := mustApply(t, ks, wire.XTrim{Base: base("s"), Trim: trim}, 10); n != int64(0) {
		t.Fatalf("ACKED trimmed %v", n)
	}
	mustApply(t, ks, wire.XAck{Base: base("s"), Group: "g1", IDs: []streams.ID{id(1, 0), id(2, 0)}}, 10)
	mustApply(t, ks, wire.XAck{Base: base("s"), Group: "g2", IDs: []streams.ID{id(2, 0)}}, 10)
	if n := mustApply(t, ks, wire.XTrim{Base: base("s"), Trim: trim}, 10); n != int64(1) {
		t.Fatalf("ACKED trimmed %v, want 1 (2-0)", n)
	}
	trim.Ref = wire.RefDelete
	x := xadd("s", "7-0")
	x.Trim = wire.Trim{Strategy: wire.TrimMinID, MinID: id(4, 0), Limit: -1, Ref: wire.RefDelete}
	mustApply(t, ks, x, 10)
	if n := mustQuery(t, ks, wire.XLen{Base: base("s")}, 10); n != int64(4) {
		t.Fatalf("xlen %v", n)
	}
	if pendingCount(t, ks, "g1") != 0 || pendingCount(t, ks, "g2") != 0 {
		t.Fatalf("pending %d %d", pendingCount(t, ks, "g1"), pendingCount(t, ks, "g2"))
	}
	checkInvariants(t, ks)
}
