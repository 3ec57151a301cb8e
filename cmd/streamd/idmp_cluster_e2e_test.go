package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// TestClusterIDMPRetryE2E is issue 14's "done when" test on three real
// streamd processes: producers send XADD … IDMP pid iid and, on any error
// (outcome unknown, TRYAGAIN, CLUSTERDOWN, a lost connection), send the
// same pair again, to the next node, until one answers; meanwhile the
// leader is SIGKILLed and later restarted. Afterwards every pair is in the
// stream exactly once, under the ID its producer was answered, and a
// second replica (after the then-leader is killed too) holds the same
// entries and IDMP counters.
//
// Consumers of a group read with XREADGROUP … CLAIM through the same
// failover and acknowledge (claimConsumers): at-least-once, every entry is
// delivered, none is lost, and at the end the group's PEL is empty on
// every replica.
func TestClusterIDMPRetryE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	nodes := start3Nodes(t)
	ctx := ctxT(t)
	leader := leaderOf(t, nodes, 0)
	clients := make([]*redis.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = newClient(t, n.port, 0)
	}
	first := clients[0]
	do(t, first, "XADD", "s", "*", "init", "1")
	// Long enough that no iid expires during the test, whatever the pace.
	do(t, first, "XCFGSET", "s", "IDMP-DURATION", "86400", "IDMP-MAXSIZE", "10000")
	do(t, first, "XGROUP", "CREATE", "s", "g", "0")

	var (
		mu       sync.Mutex
		answered = map[string]string{} // "pid/iid" → the ID answered
		retries  atomic.Int64
		stop     = make(chan struct{})
		errs     errTally
	)
	const producers = 4
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pid := fmt.Sprintf("producer-%d", p)
			node := p % len(clients) // some start on the leader, which dies
			for i := 0; ; i++ {
				iid := fmt.Sprintf("msg-%d", i)
				for {
					select {
					case <-stop:
						return
					default:
					}
					cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
					id, err := clients[node].XAdd(cctx, &redis.XAddArgs{Stream: "s", ProducerID: pid, IdempotentID: iid,
						Values: []any{"v", pid + "/" + iid}}).Result()
					cancel()
					if err == nil {
						mu.Lock()
						answered[pid+"/"+iid] = id
						mu.Unlock()
						break
					}
					// The outcome is unknown: send the same pair again,
					// through the next node.
					retries.Add(1)
					errs.note(err)
					node = (node + 1) % len(clients)
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
					}
				}
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(answered) }
	waitAnswered := func(n int) {
		t.Helper()
		testutil.Eventually(t, 90*time.Second, 10*time.Millisecond, func() error {
			if got := count(); got < n {
				return fmt.Errorf("%d pairs answered (%d retries), want %d", got, retries.Load(), n)
			}
			return nil
		})
	}

	consumers := startClaimConsumers(t, ctx, nodes, 2)
	waitAnswered(200)
	killedAt := count()
	leader.p.kill()
	t.Logf("killed leader %s after %d answered pairs", leader.id, killedAt)
	waitAnswered(killedAt + 200)
	leader.p = startReady(t, leader.port, leader.dir, leader.args()...)
	waitVoters(t, nodes, 3)
	waitAnswered(count() + 100)
	close(stop)
	wg.Wait()
	t.Logf("%d pairs answered, %d retries %v", count(), retries.Load(), &errs)
	errs.logFirst(t)
	consumers.finish(t, ctx, clients[0])

	// check reads the stream through every running node: every answered
	// pair once, under its answered ID, nothing else but the first entry;
	// it returns the IDMP fields of XINFO STREAM.
	check := func(what string) string {
		t.Helper()
		var fields0 string
		for i, n := range nodes {
			if n.p.exited() {
				continue
			}
			all, err := clients[i].XRange(ctx, "s", "-", "+").Result()
			if err != nil {
				t.Fatalf("%s: XRANGE via %s: %v", what, n.id, err)
			}
			seen := map[string]string{}
			for _, m := range all[1:] {
				v := fmt.Sprint(m.Values["v"])
				if prev, dup := seen[v]; dup {
					t.Errorf("%s via %s: %s added twice (%s, %s)", what, n.id, v, prev, m.ID)
				}
				seen[v] = m.ID
			}
			mu.Lock()
			for k, id := range answered {
				if seen[k] != id {
					t.Errorf("%s via %s: %s answered %s, in the stream as %q", what, n.id, k, id, seen[k])
				}
			}
			if len(seen) != len(answered) {
				// A pair whose every attempt failed may still have been
				// added; its producer then retried it to an answer, so
				// none can be left unanswered but the last per producer.
				for k := range seen {
					if _, ok := answered[k]; !ok {
						t.Logf("%s via %s: %s added, never answered (its producer stopped)", what, n.id, k)
					}
				}
			}
			mu.Unlock()
			checkGroupDrained(t, ctx, what+" via "+n.id, clients[i])
			info, err := clients[i].XInfoStream(ctx, "s").Result()
			if err != nil {
				t.Fatal(err)
			}
			fields := fmt.Sprintf("duration %d maxsize %d pids %d iids %d added %d duplicates %d", info.IDMPDuration,
				info.IDMPMaxSize, info.PIDsTracked, info.IIDsTracked, info.IIDsAdded, info.IIDsDuplicates)
			if fields0 == "" {
				fields0 = fields
			} else if fields != fields0 {
				t.Errorf("%s via %s: XINFO %s, want %s", what, n.id, fields, fields0)
			}
			if info.IIDsAdded != int64(len(seen)) || info.IIDsTracked != int64(len(seen)) {
				t.Errorf("%s via %s: %s for %d entries", what, n.id, fields, len(seen))
			}
		}
		return fields0
	}
	before := check("after the load")
	t.Logf("XINFO STREAM: %s", before)
	// Reads are the leader's: kill it so that another replica answers.
	l2 := leaderOf(t, nodes, 0)
	l2.p.kill()
	leaderOf(t, nodes, 0)
	if after := check("on another replica"); after != before {
		t.Errorf("XINFO on another replica %s, want %s", after, before)
	}
	if !strings.Contains(before, "pids 4 ") {
		t.Errorf("XINFO %s: want 4 producers", before)
	}
}
