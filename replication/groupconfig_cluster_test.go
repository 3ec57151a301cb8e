package replication

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

// TestClusterDeadLetterVisibility: XGROUP CONFIG's VISIBILITY and
// MAXDELIVERIES/DEADLETTER through a 3-node cluster, with consumers that
// never acknowledge (a failing handler) reading through plain XREADGROUP
// while the leader is killed: every entry ends in the dead-letter stream
// exactly once (none lost, none dead-lettered twice: dead-lettering and the
// acknowledgement are one log entry), on every replica, and the replicas
// end with the same state after the old leader rejoins.
func TestClusterDeadLetterVisibility(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.leader()
	const n = 24
	b := wire.Base{Key: "{q}s"}
	for i := 0; i < n; i++ {
		propose(t, l.shard, xadd("{q}s", "i", fmt.Sprint(i)))
	}
	propose(t, l.shard, wire.XGroupCreate{Base: b, Group: "g", EntriesRead: -1})
	propose(t, l.shard, wire.XGroupConfig{Base: b, Group: "g", SetMaxDeliveries: true, MaxDeliveries: 2,
		SetDeadLetter: true, DeadLetter: "{q}dlq", SetVisibility: true, VisibilityMs: 1})

	var current atomic.Pointer[Shard]
	current.Store(l.shard)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tick := time.NewTicker(2 * time.Millisecond) // pacing, not a wait for state
			defer tick.Stop()
			read := wire.XReadGroup{Group: "g", Consumer: fmt.Sprint("c", w), Count: 2,
				Streams: []wire.ReadStream{{Key: "{q}s", New: true}}}
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				// Errors (the leader went away, outcome unknown) are
				// what the test is about: the state machine decides.
				_, _ = current.Load().Propose(read)
			}
		}(w)
	}
	dlqLen := func(s *Shard) int64 {
		res, err := s.Query(wire.XLen{Base: wire.Base{Key: "{q}dlq"}})
		if err != nil {
			return -1
		}
		return res.(int64)
	}
	testutil.Eventually(t, 20*time.Second, 5*time.Millisecond, func() error {
		if got := dlqLen(l.shard); got < 4 {
			return fmt.Errorf("dead-letter stream has %d entries", got)
		}
		return nil
	})
	old := l
	c.kill(old)
	l = c.leader()
	current.Store(l.shard)
	testutil.Eventually(t, 30*time.Second, 10*time.Millisecond, func() error {
		if got := dlqLen(l.shard); got != n {
			return fmt.Errorf("dead-letter stream has %d of %d entries", got, n)
		}
		return nil
	})
	close(stop)
	wg.Wait()
	c.restart(old)
	c.converge()
	for _, nd := range c.alive() {
		res, err := nd.shard.Query(wire.XRange{Base: wire.Base{Key: "{q}dlq"}, Start: streams.MinID, End: streams.MaxID, Count: -1})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, e := range res.([]streams.Entry) {
			f := e.Fields
			if len(f) != 12 || string(f[0]) != "stream" || string(f[1]) != "{q}s" || string(f[4]) != "group" ||
				string(f[8]) != "deliveries" || string(f[9]) != "2" || string(f[10]) != "i" {
				t.Fatalf("%s: dead letter %s has fields %q", nd.id, e.ID, f)
			}
			seen[string(f[3])]++
		}
		if len(seen) != n {
			t.Errorf("%s: %d distinct entries dead-lettered, want %d", nd.id, len(seen), n)
		}
		for id, k := range seen {
			if k != 1 {
				t.Errorf("%s: %s dead-lettered %d times", nd.id, id, k)
			}
		}
		gi, err := nd.shard.Query(wire.XInfoGroups{Base: b})
		if err != nil {
			t.Fatal(err)
		}
		g := gi.([]state.GroupInfo)[0]
		if g.Pending != 0 || g.DeadLettered != n || g.Config.VisibilityMs != 1 || g.Config.DeadLetterKey != "{q}dlq" {
			t.Errorf("%s: group %+v", nd.id, g)
		}
	}
}
