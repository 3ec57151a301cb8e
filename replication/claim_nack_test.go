package replication

import (
	"testing"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

// TestClaimNackReplicated: XNACK's zone (and its order), CLAIM reads with
// MAXCOUNT and the time index survive a snapshot + restart of a follower
// and a leader failover on a 3-node cluster; every replica ends with the
// same state hash, and the new leader serves the NACK zone in the order the
// old one built it.
func TestClaimNackReplicated(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.leader()
	must := func(cmd wire.Command) any { // on the current leader
		t.Helper()
		return propose(t, l.shard, cmd)
	}
	const key = "cn"
	b := wire.Base{Key: key}
	var ids []streams.ID
	for range 8 {
		ids = append(ids, must(wire.XAdd{Base: b, ID: streams.IDSpec{Auto: true}, Trim: wire.Trim{Limit: -1},
			Fields: [][]byte{[]byte("f"), []byte("v")}}).(streams.ID))
	}
	must(wire.XGroupCreate{Base: b, Group: "g", EntriesRead: -1})
	must(wire.XReadGroup{Group: "g", Consumer: "alice", Count: 6, Streams: []wire.ReadStream{{Key: key, New: true}}})
	must(wire.XNack{Base: b, Group: "g", Mode: wire.NackFail, IDs: []streams.ID{ids[3], ids[1]}, RetryCount: -1})
	must(wire.XNack{Base: b, Group: "g", Mode: wire.NackFatal, IDs: []streams.ID{ids[7], ids[0]}, RetryCount: -1, Force: true})
	// CLAIM with MAXCOUNT 1 takes the zone's head (ids[3]) only.
	res := must(wire.XReadGroup{Group: "g", Consumer: "bob", Claim: true, MinIdleMs: 0, MaxCount: 1,
		Streams: []wire.ReadStream{{Key: key, New: true}}}).([]state.KeyEntries)
	if len(res) != 1 || len(res[0].Entries) != 1 || res[0].Entries[0].ID != ids[3] || res[0].Claim == nil {
		t.Fatalf("CLAIM MAXCOUNT 1: %+v", res)
	}

	f := c.followers()[0]
	for _, n := range c.alive() {
		if err := n.shard.Save(); err != nil {
			t.Fatalf("snapshot on %s: %v", n.id, err)
		}
	}
	c.kill(f)
	c.restart(f)
	c.converge()
	before := readGroup(t, l.shard, key)
	c.kill(l)
	nl := c.leader()
	if after := readGroup(t, nl.shard, key); before.String() != after.String() {
		t.Fatalf("group state changed across the failover:\nbefore %v\nafter  %v", before, after)
	}
	l = nl
	// The zone left: ids[1], ids[7], ids[0], in NACK order, before any
	// idle entry.
	res = must(wire.XReadGroup{Group: "g", Consumer: "carol", Claim: true, MinIdleMs: 0, Count: 3,
		Streams: []wire.ReadStream{{Key: key, New: true}}}).([]state.KeyEntries)
	var got []streams.ID
	for _, e := range res[0].Entries {
		got = append(got, e.ID)
	}
	if len(got) != 3 || got[0] != ids[1] || got[1] != ids[7] || got[2] != ids[0] {
		t.Fatalf("zone order after the failover: %v (ids %v)", got, ids)
	}
	c.converge()
}
