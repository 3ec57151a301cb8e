package pel

import (
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"streamd/streams"
)

// timeOrder is the model of AscendByTime: the zone in FIFO order, then the
// other entries by delivery time and ID.
func timeOrder(p *PEL, zone []streams.ID) []streams.ID {
	inZone := map[streams.ID]bool{}
	out := append([]streams.ID{}, zone...)
	for _, z := range zone {
		inZone[z] = true
	}
	var rest []NACK
	p.Ascend(streams.MinID, func(n NACK) bool {
		if !inZone[n.ID] {
			rest = append(rest, n)
		}
		return true
	})
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].DeliveryMs < rest[j].DeliveryMs })
	for _, n := range rest {
		out = append(out, n.ID)
	}
	return out
}

func byTimeIDs(p *PEL) []streams.ID {
	out := []streams.ID{}
	p.AscendByTime(func(n NACK) bool {
		out = append(out, n.ID)
		return true
	})
	return out
}

func TestNackZoneSteps(t *testing.T) {
	p := New()
	for ms := uint64(1); ms <= 4; ms++ {
		p.Put(NACK{ID: id(ms), Consumer: "alice", DeliveryMs: int64(100 - ms), DeliveryCount: 1})
	}
	if got := byTimeIDs(p); !reflect.DeepEqual(got, []streams.ID{id(4), id(3), id(2), id(1)}) {
		t.Fatalf("time order %v", got)
	}
	p.Nack(id(2), 5)
	p.Nack(id(3), 0)
	p.Nack(id(2), 6) // re-NACK moves it to the zone tail
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if got := byTimeIDs(p); !reflect.DeepEqual(got, []streams.ID{id(3), id(2), id(4), id(1)}) {
		t.Fatalf("time order after NACKs %v", got)
	}
	n, _ := p.Get(id(2))
	if n.Consumer != "" || n.DeliveryMs != 0 || n.DeliveryCount != 6 || !p.Nacked(id(2)) || p.NackedLen() != 2 {
		t.Fatalf("NACKed entry %+v nacked=%v len=%d", n, p.Nacked(id(2)), p.NackedLen())
	}
	if p.ConsumerLen("alice") != 2 {
		t.Fatalf("alice keeps %d", p.ConsumerLen("alice"))
	}
	// A claim (owner change) ends the NACK.
	p.Put(NACK{ID: id(3), Consumer: "bob", DeliveryMs: 200, DeliveryCount: 1})
	if p.Nacked(id(3)) || p.NackedLen() != 1 {
		t.Fatal("claimed entry still NACKed")
	}
	if got := byTimeIDs(p); !reflect.DeepEqual(got, []streams.ID{id(2), id(4), id(1), id(3)}) {
		t.Fatalf("time order after claim %v", got)
	}
	if ms, ok := p.OldestDelivery(nil); !ok || ms != 0 {
		t.Fatalf("oldest %d %v", ms, ok)
	}
	p.Remove(id(2))
	if ms, ok := p.OldestDelivery(nil); !ok || ms != 96 {
		t.Fatalf("oldest after ack %d %v", ms, ok)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	// Entries not live (deleted from the stream) are passed over, with or
	// without the time index.
	notLive := func(x streams.ID) bool { return x != id(4) }
	for _, q := range []*PEL{p, func() *PEL {
		c := New()
		c.Put(NACK{ID: id(4), Consumer: "a", DeliveryMs: 96})
		c.Put(NACK{ID: id(1), Consumer: "a", DeliveryMs: 99})
		return c
	}()} {
		if ms, ok := q.OldestDelivery(notLive); !ok || ms != 99 {
			t.Fatalf("oldest live %d %v", ms, ok)
		}
	}
}

// TestNackZoneRandom runs random operations against a model of the zone
// and checks the invariant, the time order and clone independence.
func TestNackZoneRandom(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	p := New()
	var zone []streams.ID
	unzone := func(x streams.ID) {
		for i, z := range zone {
			if z == x {
				zone = append(zone[:i], zone[i+1:]...)
				return
			}
		}
	}
	owners := []string{"a", "b", "c"}
	var snap *PEL
	var snapOrder []streams.ID
	for step := 0; step < 3000; step++ {
		x := id(uint64(rng.Intn(40)))
		switch r := rng.Intn(10); {
		case r < 4:
			p.Put(NACK{ID: x, Consumer: owners[rng.Intn(3)], DeliveryMs: int64(rng.Intn(20)), DeliveryCount: 1})
			unzone(x)
		case r < 6:
			p.Remove(x)
			unzone(x)
		case r < 8:
			p.Nack(x, int64(rng.Intn(3)))
			unzone(x)
			zone = append(zone, x)
		case r < 9:
			o := owners[rng.Intn(3)]
			var gone []streams.ID
			p.AscendConsumer(o, streams.MinID, func(n NACK) bool { gone = append(gone, n.ID); return true })
			p.RemoveConsumer(o)
			for _, g := range gone {
				unzone(g)
			}
		default:
			if snap == nil {
				snap = p.Clone()
				snapOrder = timeOrder(snap, append([]streams.ID{}, zone...))
			}
			if got, want := byTimeIDs(p), timeOrder(p, zone); !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: time order %v, want %v", step, got, want)
			}
		}
		if err := p.Check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	if got, want := byTimeIDs(p), timeOrder(p, zone); !reflect.DeepEqual(got, want) {
		t.Fatalf("final time order %v, want %v", got, want)
	}
	if snap != nil {
		if err := snap.Check(); err != nil {
			t.Fatalf("clone: %v", err)
		}
		if got := byTimeIDs(snap); !reflect.DeepEqual(got, snapOrder) {
			t.Fatalf("clone time order %v, want %v", got, snapOrder)
		}
	}
}
