package pel

import (
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"streamd/streams"
)

// pelModel is the reference for PEL: its NACKs by ID.
type pelModel map[streams.ID]NACK

// sorted returns the model's NACKs in ID order, those of consumer only
// when consumer is not empty.
func (m pelModel) sorted(consumer string) []NACK {
	out := []NACK{}
	for _, n := range m {
		if consumer == "" || n.Consumer == consumer {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID.Less(out[j].ID) })
	return out
}

// TestPELAgainstModel runs random deliveries (mostly in ID order, as
// XREADGROUP makes them), acknowledgements, claims and consumer deletions
// on a PEL and on a map, with small tree nodes, and compares every view
// after each step; Check runs after each step, and clones taken on the way
// must keep their contents.
func TestPELAgainstModel(t *testing.T) {
	defer func(l, i int) { leafMax, innerMax = l, i }(leafMax, innerMax)
	leafMax, innerMax = 8, 4
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	consumers := []string{"alice", "bob", "carol", "dave"}
	p, m := New(), pelModel{}
	type pair struct {
		p *PEL
		m pelModel
	}
	var clones []pair
	next := uint64(1)
	for step := 0; step < 5000; step++ {
		c := consumers[r.Intn(len(consumers))]
		id := streams.ID{Ms: uint64(r.Int63n(int64(next)))}
		switch op := r.Intn(10); {
		case op < 4: // deliver new entries
			for k := r.Intn(5); k >= 0; k-- {
				n := NACK{ID: streams.ID{Ms: next}, Consumer: c, DeliveryMs: int64(step), DeliveryCount: 1}
				next++
				p.Put(n)
				m[n.ID] = n
			}
		case op < 7: // XACK
			n, ok := p.Remove(id)
			want, wok := m[id]
			delete(m, id)
			if ok != wok || n != want {
				t.Fatalf("step %d: Remove(%s) = %+v %v, want %+v %v", step, id, n, ok, want, wok)
			}
		case op == 7: // XCLAIM (delivery update, maybe to a new owner)
			if old, ok := m[id]; ok {
				n := NACK{ID: id, Consumer: c, DeliveryMs: int64(step), DeliveryCount: old.DeliveryCount + 1}
				if prev, replaced := p.Put(n); !replaced || prev != old {
					t.Fatalf("step %d: Put replaced %+v %v, want %+v", step, prev, replaced, old)
				}
				m[id] = n
			} else if p.Transfer(id, c) {
				t.Fatalf("step %d: Transfer of %s, not pending, succeeded", step, id)
			}
		case op == 8: // XGROUP DELCONSUMER, now and then
			if r.Intn(10) == 0 {
				want := len(m.sorted(c))
				if got := p.RemoveConsumer(c); got != want {
					t.Fatalf("step %d: RemoveConsumer(%s) = %d, want %d", step, c, got, want)
				}
				for k, n := range m {
					if n.Consumer == c {
						delete(m, k)
					}
				}
			}
		default: // snapshot
			if step%7 == 0 && len(clones) < 10 {
				cm := pelModel{}
				for k, n := range m {
					cm[k] = n
				}
				clones = append(clones, pair{p.Clone(), cm})
			}
		}
		if err := p.Check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		comparePEL(t, step, p, m, consumers)
	}
	for i, c := range clones {
		if err := c.p.Check(); err != nil {
			t.Fatalf("clone %d: %v", i, err)
		}
		comparePEL(t, -1-i, c.p, c.m, consumers)
	}
}

func comparePEL(t *testing.T, step int, p *PEL, m pelModel, consumers []string) {
	t.Helper()
	if got, want := p.Range(streams.MinID, streams.MaxID, 0), m.sorted(""); p.Len() != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
		t.Fatalf("step %d: group has %d entries, model %d", step, p.Len(), len(want))
	}
	for _, c := range consumers {
		got, want := p.ConsumerRange(c, streams.MinID, streams.MaxID, 0), m.sorted(c)
		if p.ConsumerLen(c) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("step %d: consumer %s has %d entries, model %d", step, c, p.ConsumerLen(c), len(want))
		}
	}
}
