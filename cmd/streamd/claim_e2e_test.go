package main

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// TestClaimNackFailoverE2E: three streamd processes; a group's pending
// entries, an XNACK zone and an idle entry are built through a follower;
// the leader is SIGKILLed; on the new leader XREADGROUP ... CLAIM serves
// the NACKed entries first (in NACK order), then the idle one, then new
// entries; the killed node restarts and every node then reports the same
// PEL and XINFO STREAM FULL.
func TestClaimNackFailoverE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	nodes := start3Nodes(t)
	leader := leaderOf(t, nodes, 0)
	var via *clusterNode
	for _, n := range nodes {
		if n != leader {
			via = n
			break
		}
	}
	c := newClient(t, via.port, 0)
	ctx := ctxT(t)
	for _, id := range []string{"1-0", "2-0", "3-0", "4-0", "5-0"} {
		do(t, c, "XADD", "cs", id, "f", id)
	}
	do(t, c, "XGROUP", "CREATE", "cs", "g", "0")
	do(t, c, "XREADGROUP", "GROUP", "g", "c1", "COUNT", "4", "STREAMS", "cs", ">")
	if n := asInt(t, "XNACK", do(t, c, "XNACK", "cs", "g", "FAIL", "IDS", "2", "3-0", "1-0")); n != 2 {
		t.Fatalf("XNACK answered %d", n)
	}
	do(t, c, "XCLAIM", "cs", "g", "c1", "0", "2-0", "IDLE", "100000", "JUSTID")
	waitSameApplied(t, nodes)

	leader.p.kill()
	t.Logf("killed leader %s", leader.id)
	// A read through the follower succeeds once a new leader serves it
	// (reads may be retried: they change nothing).
	testutil.Eventually(t, 60*time.Second, 20*time.Millisecond, func() error {
		return c.XPending(ctx, "cs", "g").Err()
	})
	res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c2", Streams: []string{"cs", ">"},
		Claim: 50 * time.Second, Block: -1}).Result()
	if err != nil {
		t.Fatalf("XREADGROUP CLAIM after the failover: %v", err)
	}
	var got []string
	for _, m := range res[0].Messages {
		got = append(got, fmt.Sprintf("%s:%d", m.ID, m.DeliveredCount))
	}
	// 3-0 and 1-0 from the zone (FAIL kept their count 1), then 2-0 (idle
	// 100 s, count 1), then the new 5-0 (0).
	if want := []string{"3-0:1", "1-0:1", "2-0:1", "5-0:0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("claimed after the failover %v, want %v", got, want)
	}

	leader.p = startReady(t, leader.port, leader.dir, leader.args()...)
	waitVoters(t, nodes, 3)
	waitSameApplied(t, nodes)
	var pending0, full0 any
	for _, n := range nodes {
		nc := newClient(t, n.port, 0)
		pending := dropIdle(do(t, nc, "XPENDING", "cs", "g", "-", "+", "10"))
		full := do(t, nc, "XINFO", "STREAM", "cs", "FULL")
		if pending0 == nil {
			pending0, full0 = pending, full
			continue
		}
		if !reflect.DeepEqual(pending, pending0) || !reflect.DeepEqual(full, full0) {
			t.Errorf("via %s: XPENDING %v / XINFO STREAM FULL %v, want %v / %v", n.id, pending, full, pending0, full0)
		}
	}
}

// waitSameApplied waits until every running node applied the same index
// of shard 0.
func waitSameApplied(t *testing.T, nodes []*clusterNode) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, 50*time.Millisecond, func() error {
		var applied []any
		for _, n := range nodes {
			if n.p.exited() {
				continue
			}
			shards, err := raftShards(n.port)
			if err != nil {
				return err
			}
			applied = append(applied, shards[0]["applied-index"])
		}
		for _, a := range applied[1:] {
			if a != applied[0] {
				return fmt.Errorf("applied indexes %v", applied)
			}
		}
		return nil
	})
}
