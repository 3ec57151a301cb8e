package state

import (
	"testing"

	"streamd/replication/wire"
)

// TestCounters: reads Redis counts as lookups count a hit per existing key
// and a miss per absent one; LastIDs (XREAD's "$") and writes do not;
// expired keys are counted when a write or the sweep deletes them; a clone
// and a restored keyspace keep the counters they are given.
func TestCounters(t *testing.T) {
	ks := New()
	mustApply(t, ks, xadd("s", "1-1"), 10)
	mustApply(t, ks, xadd("e", "1-1"), 10)
	mustApply(t, ks, xadd("f", "1-1"), 10)
	c := ks.Counters()
	mustQuery(t, ks, wire.XLen{Base: base("s")}, 10)
	mustQuery(t, ks, wire.XLen{Base: base("nope")}, 10)
	mustQuery(t, ks, wire.Exists{Names: []string{"s", "e", "nope"}}, 10)
	mustQuery(t, ks, wire.LastIDs{Names: []string{"s", "nope"}}, 10)
	mustQuery(t, ks, wire.Type{Base: base("nope")}, 10)
	if h, m := c.Hits.Load(), c.Misses.Load(); h != 3 || m != 3 {
		t.Errorf("hits %d misses %d, want 3 3", h, m)
	}
	mustApply(t, ks, wire.Expire{Base: base("e"), Ms: 20}, 10)
	mustApply(t, ks, wire.Expire{Base: base("f"), Ms: 20}, 10)
	mustApply(t, ks, xadd("e", "2-1"), 30) // deletes the expired e first
	mustApply(t, ks, wire.Expired{Names: []string{"f", "s"}}, 30)
	if n := c.Expired.Load(); n != 2 {
		t.Errorf("expired %d, want 2", n)
	}
	if ks.Clone().Counters() == c {
		t.Error("a clone shares the live counters")
	}
	other := New()
	other.SetCounters(c)
	mustQuery(t, other, wire.XLen{Base: base("s")}, 40)
	if c.Misses.Load() != 4 {
		t.Error("SetCounters: the keyspace does not count into the given counters")
	}
}
