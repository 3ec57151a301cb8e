package groups

import (
	"math"
	"testing"

	"streamd/streams"
)

// claimed renders ReadClaim's answer as ID ms, idle, count triples.
func claimed(cs []Claimed) [][3]int64 {
	out := [][3]int64{}
	for _, c := range cs {
		out = append(out, [3]int64{int64(c.ID.Ms), c.IdleMs, c.DeliveryCount})
	}
	return out
}

// TestNackAndReadClaim: XNACK modes, the zone served first, ghosts skipped
// (not claimed, not removed, not counted), FATAL's count saturating on the
// next claim, allow stopping a read, and the group invariant after each step.
func TestNackAndReadClaim(t *testing.T) {
	s := newStream(1, 2, 3, 4, 5)
	var set Set
	g := set.Create("g", streams.MinID, 0)
	ids := func(ms ...uint64) []streams.ID {
		out := []streams.ID{}
		for _, m := range ms {
			out = append(out, id(m))
		}
		return out
	}
	runSteps(t, g, s, []groupStep{
		{name: "deliver 3 to c1", now: 1000,
			do:  func(g *Group, s *streams.Stream, now int64) any { return entryIDs(g.ReadNew(s, "c1", 3, false, now)) },
			pel: []pending{{1, "c1", 1000, 1}, {2, "c1", 1000, 1}, {3, "c1", 1000, 1}}, lastID: 3, entries: 3},
		{name: "NACK 2 SILENT, 1 FATAL, 5 FAIL without FORCE", now: 1100,
			do: func(g *Group, s *streams.Stream, now int64) any {
				return []int64{g.Nack(s, ids(2), NackSilent, -1, false), g.Nack(s, ids(1), NackFatal, -1, false),
					g.Nack(s, ids(5), NackFail, -1, false)}
			},
			want: []int64{1, 1, 0},
			pel:  []pending{{1, "", 0, math.MaxInt64}, {2, "", 0, 0}, {3, "c1", 1000, 1}}, lastID: 3, entries: 3},
		{name: "FORCE RETRYCOUNT on 5; FORCE on a missing 9", now: 1100,
			do: func(g *Group, s *streams.Stream, now int64) any {
				return g.Nack(s, ids(5, 9), NackFail, 4, true)
			},
			want: int64(1),
			pel:  []pending{{1, "", 0, math.MaxInt64}, {2, "", 0, 0}, {3, "c1", 1000, 1}, {5, "", 0, 4}}, lastID: 3, entries: 3},
		{name: "2 deleted: a ghost CLAIM skips; zone 1, 5 then 3 (idle 200 >= 150); COUNT 3 leaves no room for new", now: 1200,
			do: func(g *Group, s *streams.Stream, now int64) any {
				s.Delete(id(2))
				return claimed(g.ReadClaim(s, "c2", 150, 3, false, now, nil))
			},
			want: [][3]int64{{1, 1200, math.MaxInt64}, {5, 1200, 4}, {3, 200, 1}},
			pel:  []pending{{1, "c2", 1200, math.MaxInt64}, {2, "", 0, 0}, {3, "c2", 1200, 2}, {5, "c2", 1200, 5}}, lastID: 3, entries: 3},
		{name: "nothing idle: new entry 4 (0, 0); allow stops after one", now: 1250,
			do: func(g *Group, s *streams.Stream, now int64) any {
				n := 0
				return claimed(g.ReadClaim(s, "c2", 100, 0, false, now, func(streams.Entry) bool { n++; return n <= 1 }))
			},
			want: [][3]int64{{4, 0, 0}},
			pel:  []pending{{1, "c2", 1200, math.MaxInt64}, {2, "", 0, 0}, {3, "c2", 1200, 2}, {4, "c2", 1250, 1}, {5, "c2", 1200, 5}}, lastID: 4, entries: 4},
	})
	if g.PEL.NackedLen() != 1 || !g.PEL.Nacked(id(2)) {
		t.Fatalf("zone: %d", g.PEL.NackedLen())
	}
	if n, _ := g.DeleteConsumer("c2"); n != 4 || g.PEL.Len() != 1 {
		t.Fatalf("DELCONSUMER dropped %d, left %d (the NACKed ghost stays)", n, g.PEL.Len())
	}
}
