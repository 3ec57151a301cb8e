package groups

import (
	"math"
	"reflect"
	"testing"

	"streamd/streams"
)

// deadIDs renders TakeDeadLetters as ID ms, owner, deliveries.
func deadIDs(g *Group) [][3]any {
	out := [][3]any{}
	for _, d := range g.TakeDeadLetters() {
		out = append(out, [3]any{d.Entry.ID.Ms, d.Consumer, d.Deliveries})
	}
	return out
}

// TestDeadLetterAndVisibility: ReadVisible redelivers due entries before
// new ones in the plain shape; an entry at MAXDELIVERIES is dead-lettered
// (acknowledged, queued once for the caller, counted) by ReadVisible,
// Claim (not with JUSTID) and AutoClaim; XNACK FATAL dead-letters with a
// dead-letter stream and no limit; the group invariant holds throughout.
func TestDeadLetterAndVisibility(t *testing.T) {
	s := newStream(1, 2, 3, 4)
	var set Set
	g := set.Create("g", streams.MinID, 0)
	g.Config = Config{MaxDeliveries: 2, VisibilityMs: 100}
	runSteps(t, g, s, []groupStep{
		{name: "deliver 1, 2 to c1", now: 1000,
			do:  func(g *Group, s *streams.Stream, now int64) any { return entryIDs(g.ReadNew(s, "c1", 2, false, now)) },
			pel: []pending{{1, "c1", 1000, 1}, {2, "c1", 1000, 1}}, lastID: 2, entries: 2},
		{name: "nothing due: new 3", now: 1050,
			do: func(g *Group, s *streams.Stream, now int64) any {
				es, re := g.ReadVisible(s, "c2", 1, false, now, nil)
				return []any{entryIDs(es), re}
			},
			want: []any{[]streams.ID{id(3)}, int64(0)},
			pel:  []pending{{1, "c1", 1000, 1}, {2, "c1", 1000, 1}, {3, "c2", 1050, 1}}, lastID: 3, entries: 3},
		{name: "1, 2 due (COUNT 3): redelivered, then new 4", now: 1100,
			do: func(g *Group, s *streams.Stream, now int64) any {
				es, re := g.ReadVisible(s, "c2", 3, false, now, nil)
				return []any{entryIDs(es), re}
			},
			want: []any{[]streams.ID{id(1), id(2), id(4)}, int64(2)},
			pel:  []pending{{1, "c2", 1100, 2}, {2, "c2", 1100, 2}, {3, "c2", 1050, 1}, {4, "c2", 1100, 1}}, lastID: 4, entries: 4},
		{name: "1, 2 at the limit: dead-lettered, 3 redelivered", now: 1200,
			do: func(g *Group, s *streams.Stream, now int64) any {
				es, re := g.ReadVisible(s, "c3", 0, false, now, nil)
				return []any{entryIDs(es), re, deadIDs(g), g.DeadLettered}
			},
			want: []any{[]streams.ID{id(3), id(4)}, int64(2), [][3]any{{uint64(1), "c2", int64(2)}, {uint64(2), "c2", int64(2)}}, int64(2)},
			pel:  []pending{{3, "c3", 1200, 2}, {4, "c3", 1200, 2}}, lastID: 4, entries: 4},
		{name: "XCLAIM JUSTID never dead-letters; XCLAIM does", now: 1300,
			do: func(g *Group, s *streams.Stream, now int64) any {
				j := g.Claim(s, "c4", ClaimArgs{IDs: []streams.ID{id(3)}, IdleMs: -1, TimeMs: -1, RetryCount: -1, JustID: true}, now)
				c := g.Claim(s, "c4", ClaimArgs{IDs: []streams.ID{id(3)}, IdleMs: -1, TimeMs: -1, RetryCount: -1}, now)
				return []any{len(j), len(c), deadIDs(g)}
			},
			want: []any{1, 0, [][3]any{{uint64(3), "c4", int64(2)}}},
			pel:  []pending{{4, "c3", 1200, 2}}, lastID: 4, entries: 4},
		{name: "XAUTOCLAIM lists it with the deleted IDs", now: 1300,
			do: func(g *Group, s *streams.Stream, now int64) any {
				r := g.AutoClaim(s, "c4", 0, streams.MinID, 10, false, now)
				return []any{len(r.Claimed), r.Deleted, deadIDs(g), g.DeadLettered}
			},
			want: []any{0, []streams.ID{id(4)}, [][3]any{{uint64(4), "c3", int64(2)}}, int64(4)},
			pel:  []pending{}, lastID: 4, entries: 4},
		{name: "FATAL with a dead-letter stream and no limit", now: 1400,
			do: func(g *Group, s *streams.Stream, now int64) any {
				g.Config = Config{DeadLetterKey: "dlq", VisibilityMs: 100}
				g.Nack(s, []streams.ID{id(1)}, NackFatal, -1, true)
				es, _ := g.ReadVisible(s, "c1", 0, false, now, nil)
				return []any{len(es), deadIDs(g)}
			},
			want: []any{0, [][3]any{{uint64(1), "", int64(math.MaxInt64)}}},
			pel:  []pending{}, lastID: 4, entries: 4},
	})
	if c := g.Clone(); !reflect.DeepEqual(c.Config, g.Config) || c.DeadLettered != g.DeadLettered {
		t.Fatalf("clone %+v %d", c.Config, c.DeadLettered)
	}
}

// TestDeadLettersPerReadBounded: one visibility read dead-letters at most
// MaxDeadLettersPerRead entries; the next read takes the rest.
func TestDeadLettersPerReadBounded(t *testing.T) {
	n := MaxDeadLettersPerRead + 5
	ms := make([]uint64, n)
	for i := range ms {
		ms[i] = uint64(i + 1)
	}
	s := newStream(ms...)
	var set Set
	g := set.Create("g", streams.MinID, 0)
	g.Config = Config{MaxDeliveries: 1, VisibilityMs: 10}
	g.ReadNew(s, "c1", 0, false, 100)
	for _, want := range []int{MaxDeadLettersPerRead, 5, 0} {
		es, _ := g.ReadVisible(s, "c2", 0, false, 200, nil)
		if got := len(g.TakeDeadLetters()); got != want || len(es) != 0 {
			t.Fatalf("dead-lettered %d (want %d), served %d", got, want, len(es))
		}
		if err := g.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if g.DeadLettered != int64(n) || g.PEL.Len() != 0 {
		t.Fatalf("dead-lettered %d, pending %d", g.DeadLettered, g.PEL.Len())
	}
}
