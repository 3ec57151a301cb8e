package replication

import (
	"fmt"
	"reflect"
	"testing"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

// Redis 8.2's XDELEX, XACKDEL and DELREF/ACKED trimming through a 3-node
// cluster, across a leader kill and a restart: every replica applies the
// same deletions (the references are derived from replicated state at
// apply time), and ends with the same state.
func TestClusterRefDeletes(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.leader()
	b := wire.Base{Key: "s"}
	ms := func(m uint64) streams.ID { return streams.ID{Ms: m} }
	propose(t, l.shard, wire.ConfigSet{Name: "stream-node-max-entries", Value: "2"})
	for i := 1; i <= 10; i++ {
		x := xadd("s", "i", fmt.Sprint(i))
		x.ID = streams.IDSpec{ID: ms(uint64(i))}
		propose(t, l.shard, x)
	}
	for _, g := range []string{"g1", "g2"} {
		propose(t, l.shard, wire.XGroupCreate{Base: b, Group: g, EntriesRead: -1})
		propose(t, l.shard, wire.XReadGroup{Group: g, Consumer: "c", Count: 6,
			Streams: []wire.ReadStream{{Key: "s", New: true}}})
	}
	want := func(what string, got any, codes ...int64) {
		t.Helper()
		if r, _ := got.(wire.RefResult); !reflect.DeepEqual(r.Codes, codes) {
			t.Fatalf("%s: %#v, want codes %v", what, got, codes)
		}
	}
	// 1-0..6-0 pending in both groups; 7-0.. not delivered.
	want("XACKDEL g1 ACKED", propose(t, l.shard, wire.XAckDel{Base: b, Group: "g1", Mode: wire.RefAcked,
		IDs: []streams.ID{ms(1), ms(2), ms(9)}}), 2, 2, -1)
	want("XDELEX ACKED", propose(t, l.shard, wire.XDelEx{Base: b, Mode: wire.RefAcked,
		IDs: []streams.ID{ms(1), ms(7)}}), 2, 2)

	old := l
	c.kill(old)
	l = c.leader()
	want("XACKDEL g2 ACKED", propose(t, l.shard, wire.XAckDel{Base: b, Group: "g2", Mode: wire.RefAcked,
		IDs: []streams.ID{ms(1), ms(2)}}), 1, 1)
	want("XDELEX DELREF", propose(t, l.shard, wire.XDelEx{Base: b, Mode: wire.RefDelete,
		IDs: []streams.ID{ms(3)}}), 1)
	// MINID ~ 7-0 ACKED: nodes {3,4} and {5,6} could go; 4-6 are still
	// pending in both groups.
	trim := wire.Trim{Strategy: wire.TrimMinID, MinID: ms(7), Approx: true, Limit: -1, Ref: wire.RefAcked}
	if n := propose(t, l.shard, wire.XTrim{Base: b, Trim: trim}); n != int64(0) {
		t.Fatalf("XTRIM ACKED trimmed %v", n)
	}
	trim.Ref = wire.RefDelete
	if n := propose(t, l.shard, wire.XTrim{Base: b, Trim: trim}); n != int64(3) {
		t.Fatalf("XTRIM DELREF trimmed %v", n)
	}
	c.restart(old)
	c.converge()
	for _, nd := range c.alive() {
		if n := xlenOf(t, nd.shard, "s"); n != 4 {
			t.Errorf("%s: xlen %d, want 4", nd.id, n)
		}
		for _, g := range []string{"g1", "g2"} {
			res, err := nd.shard.Query(wire.XPending{Base: b, Group: g, Summary: true, IdleMs: -1})
			if err != nil {
				t.Fatal(err)
			}
			if s := res.(state.PendingSummary); s.Count != 0 {
				t.Errorf("%s: %s pending %+v, want none", nd.id, g, s)
			}
		}
	}
}
