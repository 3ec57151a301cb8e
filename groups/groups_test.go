package groups

import (
	"reflect"
	"testing"

	"streamd/streams"
)

func id(ms uint64) streams.ID { return streams.ID{Ms: ms} }

// newStream returns a stream with entries ms-0 for each ms, field f = v<ms>.
func newStream(ms ...uint64) *streams.Stream {
	s := streams.New()
	for _, m := range ms {
		s.Append(id(m), [][]byte{[]byte("f"), []byte("v")})
	}
	return s
}

func entryIDs(es []streams.Entry) []streams.ID {
	out := []streams.ID{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// pending is a compact NACK for expectations: ID ms, owner, time, count.
type pending struct {
	ms    uint64
	owner string
	at    int64
	count int64
}

func pelOf(g *Group) []pending {
	out := []pending{}
	for _, n := range g.PEL.Range(streams.MinID, streams.MaxID, 0) {
		out = append(out, pending{n.ID.Ms, n.Consumer, n.DeliveryMs, n.DeliveryCount})
	}
	return out
}

// groupStep is one operation on a group at a given time and what must hold
// after it. The group invariant is checked after every step.
type groupStep struct {
	name    string
	now     int64
	do      func(g *Group, s *streams.Stream, now int64) any
	want    any       // answer (nil: not checked)
	pel     []pending // the group PEL after the step (nil: not checked)
	lastID  uint64
	entries int64 // entries-read after the step
}

func runSteps(t *testing.T, g *Group, s *streams.Stream, steps []groupStep) {
	t.Helper()
	for _, st := range steps {
		got := st.do(g, s, st.now)
		if st.want != nil && !reflect.DeepEqual(got, st.want) {
			t.Fatalf("%s: got %#v, want %#v", st.name, got, st.want)
		}
		if err := g.Check(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.pel != nil && !reflect.DeepEqual(pelOf(g), st.pel) {
			t.Fatalf("%s: PEL %v, want %v", st.name, pelOf(g), st.pel)
		}
		if g.LastID != id(st.lastID) || g.EntriesRead != st.entries {
			t.Fatalf("%s: last-delivered-id %s entries-read %d, want %d-0 and %d",
				st.name, g.LastID, g.EntriesRead, st.lastID, st.entries)
		}
	}
}

// TestReadGroup follows a session checked against redis-server: ">" reads,
// history reads (which count as deliveries), deleted entries in history.
func TestReadGroup(t *testing.T) {
	s := newStream(1, 2, 3)
	var set Set
	g := set.Create("g", streams.MinID, EntriesReadInvalid)
	runSteps(t, g, s, []groupStep{
		{name: "> count 2", now: 1000,
			do:   func(g *Group, s *streams.Stream, now int64) any { return entryIDs(g.ReadNew(s, "c1", 2, false, now)) },
			want: []streams.ID{id(1), id(2)},
			pel:  []pending{{1, "c1", 1000, 1}, {2, "c1", 1000, 1}}, lastID: 2, entries: 2},
		{name: "history from 0 redelivers", now: 1500,
			do: func(g *Group, s *streams.Stream, now int64) any {
				return entryIDs(g.ReadHistory(s, "c1", id(0), 0, now))
			},
			want: []streams.ID{id(1), id(2)},
			pel:  []pending{{1, "c1", 1500, 2}, {2, "c1", 1500, 2}}, lastID: 2, entries: 2},
		{name: "history is exclusive of the ID", now: 1600,
			do: func(g *Group, s *streams.Stream, now int64) any {
				return entryIDs(g.ReadHistory(s, "c1", id(1), 0, now))
			},
			want: []streams.ID{id(2)},
			pel:  []pending{{1, "c1", 1500, 2}, {2, "c1", 1600, 3}}, lastID: 2, entries: 2},
		{name: "history of a consumer with nothing is empty, not nil", now: 1700,
			do:   func(g *Group, s *streams.Stream, now int64) any { return g.ReadHistory(s, "c2", id(0), 0, now) },
			want: []streams.Entry{}, lastID: 2, entries: 2},
		{name: "> with NOACK delivers without a NACK", now: 1800,
			do:   func(g *Group, s *streams.Stream, now int64) any { return entryIDs(g.ReadNew(s, "c2", 0, true, now)) },
			want: []streams.ID{id(3)},
			pel:  []pending{{1, "c1", 1500, 2}, {2, "c1", 1600, 3}}, lastID: 3, entries: 3},
		{name: "> with nothing new is nil", now: 1900,
			do:   func(g *Group, s *streams.Stream, now int64) any { return g.ReadNew(s, "c3", 0, false, now) == nil },
			want: true, lastID: 3, entries: 3},
		{name: "deleted entry comes back with nil fields, NACK untouched", now: 2000,
			do: func(g *Group, s *streams.Stream, now int64) any {
				s.Delete(id(1))
				es := g.ReadHistory(s, "c1", id(0), 0, now)
				return []bool{es[0].Fields == nil, es[1].Fields != nil}
			},
			want: []bool{true, true},
			pel:  []pending{{1, "c1", 1500, 2}, {2, "c1", 2000, 4}}, lastID: 3, entries: 3},
		{name: "SETID backwards: > takes over another consumer's NACK", now: 3000,
			do: func(g *Group, s *streams.Stream, now int64) any {
				g.SetID(id(0), EntriesReadInvalid)
				return entryIDs(g.ReadNew(s, "c2", 1, false, now))
			},
			want: []streams.ID{id(2)},
			// entries-read is re-estimated: 2-0 is the first live entry and the
			// only tombstone (1-0) is before it, so it is the 2nd ever added.
			pel: []pending{{1, "c1", 1500, 2}, {2, "c2", 3000, 1}}, lastID: 2, entries: 2},
	})
	// Consumers: created by every read, seen at each read, active when a
	// read added to the PEL.
	want := []Consumer{{"c1", 2000, 1000}, {"c2", 3000, 3000}, {"c3", 1900, -1}}
	var got []Consumer
	for _, c := range g.Consumers() {
		got = append(got, *c)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("consumers %+v, want %+v", got, want)
	}
}

func TestAckAndDeleteConsumer(t *testing.T) {
	s := newStream(1, 2, 3, 4)
	var set Set
	g := set.Create("g", streams.MinID, 0)
	runSteps(t, g, s, []groupStep{
		{name: "deliver two each", now: 10,
			do: func(g *Group, s *streams.Stream, now int64) any {
				g.ReadNew(s, "a", 2, false, now)
				g.ReadNew(s, "b", 2, false, now)
				return nil
			},
			pel: []pending{{1, "a", 10, 1}, {2, "a", 10, 1}, {3, "b", 10, 1}, {4, "b", 10, 1}}, lastID: 4, entries: 4},
		{name: "ack counts each pending ID once", now: 20,
			do: func(g *Group, s *streams.Stream, now int64) any {
				return g.Ack([]streams.ID{id(1), id(1), id(9), id(3)})
			},
			want: int64(2),
			pel:  []pending{{2, "a", 10, 1}, {4, "b", 10, 1}}, lastID: 4, entries: 4},
		{name: "delete consumer drops its NACKs", now: 30,
			do: func(g *Group, s *streams.Stream, now int64) any {
				n, ok := g.DeleteConsumer("b")
				return []any{n, ok}
			},
			want: []any{int64(1), true},
			pel:  []pending{{2, "a", 10, 1}}, lastID: 4, entries: 4},
		{name: "delete unknown consumer", now: 40,
			do: func(g *Group, s *streams.Stream, now int64) any {
				n, ok := g.DeleteConsumer("zz")
				return []any{n, ok}
			},
			want: []any{int64(0), false},
			pel:  []pending{{2, "a", 10, 1}}, lastID: 4, entries: 4},
	})
	if g.CreateConsumer("a", 50) != nil || g.CreateConsumer("b", 50) == nil {
		t.Fatal("CreateConsumer must refuse an existing consumer and create a new one")
	}
}

func TestSetOrder(t *testing.T) {
	var s Set
	for _, n := range []string{"m", "a", "z", "b"} {
		if s.Create(n, streams.MinID, -1) == nil {
			t.Fatalf("create %s", n)
		}
	}
	if s.Create("a", streams.MinID, -1) != nil {
		t.Fatal("BUSYGROUP expected")
	}
	if !s.Destroy("m") || s.Destroy("m") {
		t.Fatal("Destroy")
	}
	var names []string
	for _, g := range s.All() {
		names = append(names, g.Name)
	}
	if !reflect.DeepEqual(names, []string{"a", "b", "z"}) || s.Len() != 3 {
		t.Fatalf("order %v", names)
	}
	c := s.Clone()
	s.Get("a").CreateConsumer("x", 1)
	if len(c.Get("a").Consumers()) != 0 {
		t.Fatal("clone shares consumers")
	}
}

func TestPendingRange(t *testing.T) {
	s := newStream(1, 2, 3, 4, 5)
	var set Set
	g := set.Create("g", streams.MinID, 0)
	g.ReadNew(s, "a", 2, false, 100) // 1, 2 at 100
	g.ReadNew(s, "b", 3, false, 200) // 3, 4, 5 at 200
	tests := []struct {
		name       string
		start, end uint64
		count      int64
		consumer   string
		minIdle    int64
		want       []streams.ID
	}{
		{"all", 0, 99, 10, "", 0, []streams.ID{id(1), id(2), id(3), id(4), id(5)}},
		{"count", 0, 99, 2, "", 0, []streams.ID{id(1), id(2)}},
		{"count 0", 0, 99, 0, "", 0, []streams.ID{}},
		{"bounds", 2, 4, 10, "", 0, []streams.ID{id(2), id(3), id(4)}},
		{"consumer", 0, 99, 10, "b", 0, []streams.ID{id(3), id(4), id(5)}},
		{"unknown consumer", 0, 99, 10, "zz", 0, []streams.ID{}},
		{"idle filter then count", 0, 99, 1, "", 150, []streams.ID{id(1)}},
		{"idle filter excludes recent", 3, 99, 10, "", 150, []streams.ID{}},
	}
	for _, tc := range tests {
		var got []streams.ID
		for _, n := range g.PendingRange(id(tc.start), id(tc.end), tc.count, tc.consumer, tc.minIdle, 250) {
			got = append(got, n.ID)
		}
		if got == nil {
			got = []streams.ID{}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
