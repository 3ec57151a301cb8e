package groups

import (
	"testing"

	"streamd/streams"
)

func ptr(v streams.ID) *streams.ID { return &v }

func claim(ids ...uint64) ClaimArgs {
	a := ClaimArgs{IdleMs: -1, TimeMs: -1, RetryCount: -1}
	for _, m := range ids {
		a.IDs = append(a.IDs, id(m))
	}
	return a
}

// TestClaim follows a session checked against redis-server 7.0.15.
func TestClaim(t *testing.T) {
	s := newStream(1, 2, 3, 4, 5)
	var set Set
	g := set.Create("g", streams.MinID, 0)
	runSteps(t, g, s, []groupStep{
		{name: "deliver 3 to c1", now: 1000,
			do:  func(g *Group, s *streams.Stream, now int64) any { return entryIDs(g.ReadNew(s, "c1", 3, false, now)) },
			pel: []pending{{1, "c1", 1000, 1}, {2, "c1", 1000, 1}, {3, "c1", 1000, 1}}, lastID: 3, entries: 3},
		{name: "min-idle not reached: nothing claimed", now: 1050,
			do: func(g *Group, s *streams.Stream, now int64) any {
				a := claim(1)
				a.MinIdleMs = 100
				return entryIDs(g.Claim(s, "cz", a, now))
			},
			want: []streams.ID{},
			pel:  []pending{{1, "c1", 1000, 1}, {2, "c1", 1000, 1}, {3, "c1", 1000, 1}}, lastID: 3, entries: 3},
		{name: "FORCE JUSTID on an undelivered entry", now: 1100,
			do: func(g *Group, s *streams.Stream, now int64) any {
				a := claim(4)
				a.Force, a.JustID = true, true
				es := g.Claim(s, "c2", a, now)
				return []any{entryIDs(es), es[0].Fields == nil}
			},
			want: []any{[]streams.ID{id(4)}, true},
			pel:  []pending{{1, "c1", 1000, 1}, {2, "c1", 1000, 1}, {3, "c1", 1000, 1}, {4, "c2", 1100, 1}}, lastID: 3, entries: 3},
		{name: "FORCE without JUSTID counts a second delivery", now: 1200,
			do: func(g *Group, s *streams.Stream, now int64) any {
				a := claim(5)
				a.Force = true
				return entryIDs(g.Claim(s, "c2", a, now))
			},
			want: []streams.ID{id(5)},
			pel:  []pending{{1, "c1", 1000, 1}, {2, "c1", 1000, 1}, {3, "c1", 1000, 1}, {4, "c2", 1100, 1}, {5, "c2", 1200, 2}}, lastID: 3, entries: 3},
		{name: "deleted entry leaves the PEL, unknown ID skipped", now: 1300,
			do: func(g *Group, s *streams.Stream, now int64) any {
				s.Delete(id(2))
				return entryIDs(g.Claim(s, "c2", claim(2, 3, 9), now))
			},
			want: []streams.ID{id(3)},
			pel:  []pending{{1, "c1", 1000, 1}, {3, "c2", 1300, 2}, {4, "c2", 1100, 1}, {5, "c2", 1200, 2}}, lastID: 3, entries: 3},
		{name: "LASTID moves last-delivered-id forward only", now: 1400,
			do: func(g *Group, s *streams.Stream, now int64) any {
				a := claim(3)
				a.JustID, a.LastID = true, ptr(id(7))
				g.Claim(s, "c2", a, now)
				a.LastID = ptr(id(6))
				return entryIDs(g.Claim(s, "c2", a, now))
			},
			want: []streams.ID{id(3)},
			pel:  []pending{{1, "c1", 1000, 1}, {3, "c2", 1400, 2}, {4, "c2", 1100, 1}, {5, "c2", 1200, 2}}, lastID: 7, entries: 3},
		{name: "RETRYCOUNT and IDLE", now: 10000,
			do: func(g *Group, s *streams.Stream, now int64) any {
				a := claim(3)
				a.RetryCount, a.IdleMs, a.JustID = 9, 5000, true
				return entryIDs(g.Claim(s, "c1", a, now))
			},
			want: []streams.ID{id(3)},
			pel:  []pending{{1, "c1", 1000, 1}, {3, "c1", 5000, 9}, {4, "c2", 1100, 1}, {5, "c2", 1200, 2}}, lastID: 7, entries: 3},
		{name: "TIME in the future and negative IDLE become now", now: 11000,
			do: func(g *Group, s *streams.Stream, now int64) any {
				a := claim(3)
				a.TimeMs, a.JustID = 99999999, true
				g.Claim(s, "c1", a, now)
				b := claim(1)
				b.IdleMs, b.JustID = -5, true
				return entryIDs(g.Claim(s, "c1", b, now))
			},
			want: []streams.ID{id(1)},
			pel:  []pending{{1, "c1", 11000, 1}, {3, "c1", 11000, 9}, {4, "c2", 1100, 1}, {5, "c2", 1200, 2}}, lastID: 7, entries: 3},
		{name: "claim to the owner refreshes idle (keep-alive)", now: 12000,
			do: func(g *Group, s *streams.Stream, now int64) any {
				a := claim(4)
				a.JustID = true
				return entryIDs(g.Claim(s, "c2", a, now))
			},
			want: []streams.ID{id(4)},
			pel:  []pending{{1, "c1", 11000, 1}, {3, "c1", 11000, 9}, {4, "c2", 12000, 1}, {5, "c2", 1200, 2}}, lastID: 7, entries: 3},
	})
	cz := g.Consumer("cz")
	if cz == nil || cz.SeenMs != 1050 || cz.ActiveMs != -1 {
		t.Fatalf("cz = %+v, want seen 1050 and never active", cz)
	}
	if c2 := g.Consumer("c2"); c2.ActiveMs != 12000 {
		t.Fatalf("c2 active %d", c2.ActiveMs)
	}
}

// TestAutoClaim follows a session checked against redis-server 7.0.15.
func TestAutoClaim(t *testing.T) {
	s := newStream(1, 2, 3, 4, 5, 6)
	var set Set
	g := set.Create("g", streams.MinID, 0)
	g.ReadNew(s, "c1", 0, false, 100)
	s.Delete(id(2))
	s.Delete(id(4))
	tests := []struct {
		name          string
		start         uint64
		count         int64
		justID        bool
		next          uint64
		claimed, gone []streams.ID
	}{
		{"count 1", 0, 1, false, 2, []streams.ID{id(1)}, []streams.ID{}},
		{"deleted IDs count toward COUNT", 2, 2, false, 4, []streams.ID{id(3)}, []streams.ID{id(2)}},
		{"to the end: cursor 0-0", 4, 100, true, 0, []streams.ID{id(5), id(6)}, []streams.ID{id(4)}},
	}
	for _, tc := range tests {
		r := g.AutoClaim(s, "c2", 0, id(tc.start), tc.count, tc.justID, 200)
		if r.Next != id(tc.next) || !equalIDs(entryIDs(r.Claimed), tc.claimed) || !equalIDs(r.Deleted, tc.gone) {
			t.Fatalf("%s: next %s claimed %v deleted %v", tc.name, r.Next, entryIDs(r.Claimed), r.Deleted)
		}
		if err := g.Check(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	want := []pending{{1, "c2", 200, 2}, {3, "c2", 200, 2}, {5, "c2", 200, 1}, {6, "c2", 200, 1}}
	if got := pelOf(g); !equalPending(got, want) {
		t.Fatalf("PEL %v, want %v", got, want)
	}
}

// TestAutoClaimAttempts checks the COUNT × 10 scan bound: with nothing idle
// enough and COUNT 1, ten PEL entries are scanned and the cursor is the
// eleventh.
func TestAutoClaimAttempts(t *testing.T) {
	var ms []uint64
	for i := uint64(1); i <= 24; i++ {
		ms = append(ms, i)
	}
	s := newStream(ms...)
	var set Set
	g := set.Create("g", streams.MinID, 0)
	g.ReadNew(s, "c1", 0, false, 100)
	s.Delete(id(2))
	s.Delete(id(4))
	g.Ack([]streams.ID{id(2), id(4)})
	r := g.AutoClaim(s, "c3", 100000, streams.MinID, 1, false, 200)
	if r.Next != id(13) || len(r.Claimed) != 0 || len(r.Deleted) != 0 {
		t.Fatalf("got next %s claimed %d deleted %d", r.Next, len(r.Claimed), len(r.Deleted))
	}
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
}

func equalIDs(a, b []streams.ID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalPending(a, b []pending) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
