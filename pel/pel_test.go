package pel

import (
	"reflect"
	"testing"

	"streamd/streams"
)

func id(ms uint64) streams.ID { return streams.ID{Ms: ms} }

func ids(ns []NACK) []streams.ID {
	out := []streams.ID{}
	for _, n := range ns {
		out = append(out, n.ID)
	}
	return out
}

// step is one operation on a PEL followed by the state expected after it.
type step struct {
	name string
	do   func(p *PEL) any // returns the operation's answer
	want any              // expected answer (nil: not checked)
	// After the step: the group's IDs and each named consumer's IDs.
	group     []streams.ID
	consumers map[string][]streams.ID
}

func TestPELSteps(t *testing.T) {
	steps := []step{
		{name: "add three to alice",
			do: func(p *PEL) any {
				for _, ms := range []uint64{3, 1, 2} {
					p.Put(NACK{ID: id(ms), Consumer: "alice", DeliveryMs: 100, DeliveryCount: 1})
				}
				return p.Len()
			},
			want:      3,
			group:     []streams.ID{id(1), id(2), id(3)},
			consumers: map[string][]streams.ID{"alice": {id(1), id(2), id(3)}, "bob": {}}},
		{name: "put same owner updates in place",
			do: func(p *PEL) any {
				prev, replaced := p.Put(NACK{ID: id(2), Consumer: "alice", DeliveryMs: 200, DeliveryCount: 2})
				return []any{prev.DeliveryCount, replaced}
			},
			want:      []any{int64(1), true},
			group:     []streams.ID{id(1), id(2), id(3)},
			consumers: map[string][]streams.ID{"alice": {id(1), id(2), id(3)}}},
		{name: "put with new owner moves the index",
			do: func(p *PEL) any {
				p.Put(NACK{ID: id(3), Consumer: "bob", DeliveryMs: 300, DeliveryCount: 1})
				return p.ConsumerLen("bob")
			},
			want:      1,
			group:     []streams.ID{id(1), id(2), id(3)},
			consumers: map[string][]streams.ID{"alice": {id(1), id(2)}, "bob": {id(3)}}},
		{name: "transfer keeps delivery data",
			do: func(p *PEL) any {
				ok := p.Transfer(id(1), "bob")
				n, _ := p.Get(id(1))
				return []any{ok, n}
			},
			want:      []any{true, NACK{ID: id(1), Consumer: "bob", DeliveryMs: 100, DeliveryCount: 1}},
			group:     []streams.ID{id(1), id(2), id(3)},
			consumers: map[string][]streams.ID{"alice": {id(2)}, "bob": {id(1), id(3)}}},
		{name: "transfer of a missing ID",
			do:        func(p *PEL) any { return p.Transfer(id(9), "bob") },
			want:      false,
			group:     []streams.ID{id(1), id(2), id(3)},
			consumers: map[string][]streams.ID{"alice": {id(2)}, "bob": {id(1), id(3)}}},
		{name: "remove (XACK)",
			do: func(p *PEL) any {
				_, ok1 := p.Remove(id(2))
				_, ok2 := p.Remove(id(2))
				return []bool{ok1, ok2}
			},
			want:      []bool{true, false},
			group:     []streams.ID{id(1), id(3)},
			consumers: map[string][]streams.ID{"alice": {}, "bob": {id(1), id(3)}}},
		{name: "remove consumer drops its NACKs",
			do: func(p *PEL) any {
				p.Put(NACK{ID: id(5), Consumer: "carol", DeliveryMs: 1, DeliveryCount: 1})
				return p.RemoveConsumer("bob")
			},
			want:      2,
			group:     []streams.ID{id(5)},
			consumers: map[string][]streams.ID{"bob": {}, "carol": {id(5)}}},
		{name: "remove unknown consumer",
			do:        func(p *PEL) any { return p.RemoveConsumer("nobody") },
			want:      0,
			group:     []streams.ID{id(5)},
			consumers: map[string][]streams.ID{"carol": {id(5)}}},
	}
	p := New()
	for _, s := range steps {
		got := s.do(p)
		if s.want != nil && !reflect.DeepEqual(got, s.want) {
			t.Fatalf("%s: got %v, want %v", s.name, got, s.want)
		}
		if err := p.Check(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if g := ids(p.Range(streams.MinID, streams.MaxID, 0)); !reflect.DeepEqual(g, s.group) {
			t.Fatalf("%s: group %v, want %v", s.name, g, s.group)
		}
		for name, want := range s.consumers {
			g := ids(p.ConsumerRange(name, streams.MinID, streams.MaxID, 0))
			if !reflect.DeepEqual(g, want) || p.ConsumerLen(name) != len(want) {
				t.Fatalf("%s: consumer %s has %v (len %d), want %v", s.name, name, g, p.ConsumerLen(name), want)
			}
		}
	}
}

func TestPELRanges(t *testing.T) {
	p := New()
	for ms := uint64(1); ms <= 10; ms++ {
		owner := "a"
		if ms%2 == 0 {
			owner = "b"
		}
		p.Put(NACK{ID: id(ms), Consumer: owner, DeliveryMs: int64(ms), DeliveryCount: 1})
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		consumer   string
		start, end uint64
		count      int
		want       []streams.ID
	}{
		{"all", "", 0, 100, 0, []streams.ID{id(1), id(2), id(3), id(4), id(5), id(6), id(7), id(8), id(9), id(10)}},
		{"bounded", "", 3, 5, 0, []streams.ID{id(3), id(4), id(5)}},
		{"count", "", 4, 100, 2, []streams.ID{id(4), id(5)}},
		{"empty", "", 11, 100, 0, []streams.ID{}},
		{"consumer a", "a", 0, 100, 0, []streams.ID{id(1), id(3), id(5), id(7), id(9)}},
		{"consumer b from 5 count 2", "b", 5, 100, 2, []streams.ID{id(6), id(8)}},
		{"consumer b bounded", "b", 3, 7, 0, []streams.ID{id(4), id(6)}},
		{"unknown consumer", "z", 0, 100, 0, []streams.ID{}},
	}
	for _, tc := range tests {
		var got []NACK
		if tc.consumer == "" {
			got = p.Range(id(tc.start), id(tc.end), tc.count)
		} else {
			got = p.ConsumerRange(tc.consumer, id(tc.start), id(tc.end), tc.count)
		}
		if g := ids(got); !reflect.DeepEqual(g, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, g, tc.want)
		}
	}
	if f, _ := p.First(); f.ID != id(1) {
		t.Errorf("First = %v", f.ID)
	}
	if l, _ := p.Last(); l.ID != id(10) {
		t.Errorf("Last = %v", l.ID)
	}
}

func TestPELCloneIsIndependent(t *testing.T) {
	p := New()
	p.Put(NACK{ID: id(1), Consumer: "a", DeliveryCount: 1})
	c := p.Clone()
	p.Transfer(id(1), "b")
	p.Put(NACK{ID: id(2), Consumer: "a", DeliveryCount: 1})
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Get(id(1)); n.Consumer != "a" || c.Len() != 1 || c.ConsumerLen("b") != 0 {
		t.Fatalf("clone changed: %+v len %d", n, c.Len())
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFindsCorruption(t *testing.T) {
	p := New()
	p.Put(NACK{ID: id(1), Consumer: "a", DeliveryCount: 1})
	// Corrupt on purpose: index the ID under a second consumer.
	p.owners[p.slot("b")].ids.set(id(1), struct{}{})
	if err := p.Check(); err == nil {
		t.Fatal("Check missed an ID indexed by the wrong consumer")
	}
	q := New()
	q.Put(NACK{ID: id(1), Consumer: "a", DeliveryCount: 1})
	q.owners[q.slots["a"]].ids.delete(id(1))
	if err := q.Check(); err == nil {
		t.Fatal("Check missed a NACK absent from its owner's index")
	}
}

// TestPELDeliveryCountsOutsideEntry covers counts that do not fit an entry
// (XCLAIM RETRYCOUNT 2^32 and more, or a negative count from a snapshot):
// they come back exactly, move with their entry and go with it.
func TestPELDeliveryCountsOutsideEntry(t *testing.T) {
	p := New()
	counts := []int64{0, 1, countBig - 1, countBig, countBig + 1, 1 << 40, -1, -1 << 62}
	for i, c := range counts {
		p.Put(NACK{ID: id(uint64(i + 1)), Consumer: "a", DeliveryMs: int64(i), DeliveryCount: c})
	}
	check := func(step string) {
		t.Helper()
		if err := p.Check(); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	check("put")
	for i, c := range counts {
		if n, ok := p.Get(id(uint64(i + 1))); !ok || n.DeliveryCount != c || n.Consumer != "a" {
			t.Fatalf("count %d came back as %+v", c, n)
		}
	}
	c := p.Clone()
	// A big count replaced by a small one, and the other way round.
	p.Put(NACK{ID: id(5), Consumer: "b", DeliveryCount: 7})
	p.Put(NACK{ID: id(2), Consumer: "a", DeliveryCount: 1 << 33})
	check("replace")
	if n, _ := p.Get(id(5)); n.DeliveryCount != 7 || n.Consumer != "b" {
		t.Fatalf("id 5: %+v", n)
	}
	if n, _ := p.Get(id(2)); n.DeliveryCount != 1<<33 {
		t.Fatalf("id 2: %+v", n)
	}
	if n, _ := c.Get(id(5)); n.DeliveryCount != countBig+1 || n.Consumer != "a" {
		t.Fatalf("clone changed: %+v", n)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	p.Remove(id(6))
	check("remove")
	p.RemoveConsumer("a")
	check("remove consumer")
	if p.Len() != 1 || len(p.bigCounts) != 0 {
		t.Fatalf("left %d entries, %d counts aside", p.Len(), len(p.bigCounts))
	}
}

// TestPELSlotsAreReused checks that consumers whose last entry went give
// their slot back, and that a reused slot names the new consumer.
func TestPELSlotsAreReused(t *testing.T) {
	p := New()
	for i, name := range []string{"a", "b", "c"} {
		p.Put(NACK{ID: id(uint64(i + 1)), Consumer: name, DeliveryCount: 1})
	}
	p.Remove(id(2))        // b leaves
	p.Transfer(id(1), "c") // a leaves
	p.Put(NACK{ID: id(9), Consumer: "d", DeliveryCount: 1})
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if len(p.owners) != 3 || len(p.free) != 1 {
		t.Fatalf("%d slots, %d free", len(p.owners), len(p.free))
	}
	got := map[streams.ID]string{}
	p.Ascend(streams.MinID, func(n NACK) bool { got[n.ID] = n.Consumer; return true })
	want := map[streams.ID]string{id(1): "c", id(3): "c", id(9): "d"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("owners %v, want %v", got, want)
	}
	if p.ConsumerLen("a") != 0 || p.ConsumerLen("b") != 0 || p.ConsumerLen("c") != 2 || p.ConsumerLen("d") != 1 {
		t.Fatal("consumer lengths wrong")
	}
}
