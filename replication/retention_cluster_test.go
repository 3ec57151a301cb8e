package replication

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

// sweepRetention is one pass of the server's retention sweep on shard s (a
// leader): the query, then the ops it proposes.
func sweepRetention(t *testing.T, s *Shard) (trimmed int64, expired wire.ExpiredGroups) {
	t.Helper()
	sc := s.RetentionDue(0, 0, 1000, true)
	if len(sc.Trim) > 0 {
		trimmed = propose(t, s, wire.RetentionSweep{Names: sc.Trim, Full: true}).(int64)
	}
	if len(sc.ExpireKeys) > 0 {
		expired = propose(t, s, wire.GroupsExpired{Names: sc.ExpireKeys, Groups: sc.ExpireGroups}).(wire.ExpiredGroups)
	}
	return trimmed, expired
}

func retentionInfoOf(t *testing.T, s *Shard, key string) state.RetentionInfo {
	t.Helper()
	res, err := s.Query(wire.XInfoStream{Base: wire.Base{Key: key}})
	if err != nil {
		t.Fatal(err)
	}
	return *res.(state.StreamInfo).Ret
}

// TestClusterRetentionLeaderKill: retention and GROUP-IDLE-EXPIRE through a
// 3-node cluster whose leader is killed: the activity times and settings
// are replicated, so the new leader's sweep expires the orphan group (and
// not the active one), retention never drops an entry a group needs, and
// every replica ends with the same state.
func TestClusterRetentionLeaderKill(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.leader()
	b := wire.Base{Key: "s"}
	old := uint64(time.Now().UnixMilli() - 60_000)
	var ids []streams.ID
	for i := range 10 {
		x := xadd("s", "i", fmt.Sprint(i))
		x.ID = streams.IDSpec{ID: streams.ID{Ms: old + uint64(i)}}
		ids = append(ids, propose(t, l.shard, x).(streams.ID))
	}
	propose(t, l.shard, wire.XGroupCreate{Base: b, Group: "keep", EntriesRead: -1})
	propose(t, l.shard, wire.XGroupCreate{Base: b, Group: "orphan", Dollar: true, EntriesRead: -1})
	propose(t, l.shard, wire.XCfgSet{Base: b, Ret: wire.RetentionSet{SetMaxAge: true, MaxAgeMs: 30_000,
		SetIdleExpire: true, IdleExpireMs: 1500}})
	propose(t, l.shard, wire.XReadGroup{Group: "keep", Consumer: "c", Count: 5,
		Streams: []wire.ReadStream{{Key: "s", New: true}}})
	propose(t, l.shard, wire.XAck{Base: b, Group: "keep", IDs: ids[:3]})
	// The acked old entries go; the pending and undelivered ones stay.
	if n, _ := sweepRetention(t, l.shard); n != 3 {
		t.Fatalf("sweep trimmed %d, want 3", n)
	}
	if got := retentionInfoOf(t, l.shard, "s"); got.Held != 7 {
		t.Fatalf("held %d, want 7", got.Held)
	}

	c.kill(l)
	nl := c.leader()
	// "keep" stays active on the new leader; "orphan" expires by the
	// activity times the old leader's entries recorded.
	var expired []string
	testutil.Eventually(t, 20*time.Second, 50*time.Millisecond, func() error {
		propose(t, nl.shard, wire.XAck{Base: b, Group: "keep", IDs: ids[:1]})
		_, x := sweepRetention(t, nl.shard)
		expired = append(expired, x.Groups...)
		if len(expired) == 0 {
			return fmt.Errorf("no group expired yet")
		}
		return nil
	})
	if !reflect.DeepEqual(expired, []string{"orphan"}) {
		t.Fatalf("expired %v, want [orphan]", expired)
	}
	// Everything read and acknowledged: retention frees the old entries.
	propose(t, nl.shard, wire.XReadGroup{Group: "keep", Consumer: "c", Streams: []wire.ReadStream{{Key: "s", New: true}}})
	propose(t, nl.shard, wire.XAck{Base: b, Group: "keep", IDs: ids})
	last := propose(t, nl.shard, xadd("s", "i", "new")).(streams.ID)
	c.restart(l)
	c.converge()
	for _, nd := range c.alive() {
		checkEntries(t, nd, []streams.ID{last})
		got := retentionInfoOf(t, nd.shard, "s")
		if want := (state.RetentionInfo{MaxLen: -1, MaxAgeMs: 30_000, Policy: "acked", GroupIdleExpire: 1500,
			GroupsExpired: 1}); got != want {
			t.Fatalf("%s: %+v, want %+v", nd.id, got, want)
		}
	}
}
