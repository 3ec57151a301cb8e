package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// claimIdle is the consumers' CLAIM min-idle-time: a delivered entry whose
// consumer never acknowledged it is claimed by the next read after it.
const claimIdle = 2 * time.Second

// claimConsumers are TestClusterIDMPRetryE2E's consumer side: consumers of
// group g on stream s that read with XREADGROUP … CLAIM through any node
// (the next one after an error: outcome unknown, UNBLOCKED, a lost
// connection), and acknowledge what they got, across the leader kill. A
// fresh delivery of an entry whose iid ends in 7 is deliberately left
// unacknowledged (a consumer "crashing" on it), so that CLAIM has idle
// entries to take over besides those whose reply or XACK was lost.
type claimConsumers struct {
	mu        sync.Mutex
	delivered map[string]int // entry ID → deliveries seen
	claimed   int            // deliveries that were claims (count > 0)
	dropped   int            // fresh deliveries left unacknowledged on purpose
	errKinds  map[string]int
	stop      chan struct{}
	wg        sync.WaitGroup
}

// startClaimConsumers starts n consumers, each with a client per node.
func startClaimConsumers(t *testing.T, ctx context.Context, nodes []*clusterNode, n int) *claimConsumers {
	cc := &claimConsumers{delivered: map[string]int{}, errKinds: map[string]int{}, stop: make(chan struct{})}
	for ci := range n {
		clients := make([]*redis.Client, len(nodes))
		for i, nd := range nodes {
			clients[i] = newClient(t, nd.port, 0)
		}
		cc.wg.Add(1)
		go func() {
			defer cc.wg.Done()
			cc.consume(ctx, clients, fmt.Sprintf("consumer-%d", ci), ci%len(clients))
		}()
	}
	return cc
}

// consume is one consumer's loop until stop.
func (cc *claimConsumers) consume(ctx context.Context, clients []*redis.Client, name string, node int) {
	fail := func(err error) {
		cc.mu.Lock()
		cc.errKinds[errKind(err)]++
		cc.mu.Unlock()
		node = (node + 1) % len(clients)
		select {
		case <-cc.stop:
		case <-time.After(10 * time.Millisecond):
		}
	}
	for {
		select {
		case <-cc.stop:
			return
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		res, err := clients[node].XReadGroup(cctx, &redis.XReadGroupArgs{Group: "g", Consumer: name,
			Streams: []string{"s", ">"}, Count: 20, Block: 300 * time.Millisecond, Claim: claimIdle}).Result()
		cancel()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			fail(err)
			continue
		}
		var ack []string
		cc.mu.Lock()
		for _, st := range res {
			for _, m := range st.Messages {
				cc.delivered[m.ID]++
				if m.DeliveredCount > 0 {
					cc.claimed++
				} else if v, _ := m.Values["v"].(string); strings.HasSuffix(v, "7") {
					cc.dropped++
					continue // "crashed" on it: CLAIM hands it to someone later
				}
				ack = append(ack, m.ID)
			}
		}
		cc.mu.Unlock()
		if len(ack) == 0 {
			continue
		}
		cctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		err = clients[node].XAck(cctx, "s", "g", ack...).Err()
		cancel()
		if err != nil {
			// Not retried: what stays pending is claimed after claimIdle.
			fail(err)
		}
	}
}

// finish waits until every entry of the stream (read through c) was
// delivered to a consumer and the group's PEL is empty, then stops the
// consumers.
func (cc *claimConsumers) finish(t *testing.T, ctx context.Context, c *redis.Client) {
	t.Helper()
	testutil.Eventually(t, 120*time.Second, 50*time.Millisecond, func() error {
		all, err := c.XRange(ctx, "s", "-", "+").Result()
		if err != nil {
			return err
		}
		cc.mu.Lock()
		missing := 0
		for _, m := range all {
			if cc.delivered[m.ID] == 0 {
				missing++
			}
		}
		cc.mu.Unlock()
		if missing > 0 {
			return fmt.Errorf("%d of %d entries never delivered", missing, len(all))
		}
		p, err := c.XPending(ctx, "s", "g").Result()
		if err != nil {
			return err
		}
		if p.Count != 0 {
			return fmt.Errorf("%d entries still pending", p.Count)
		}
		return nil
	})
	close(cc.stop)
	cc.wg.Wait()
	cc.mu.Lock()
	defer cc.mu.Unlock()
	again := 0
	for _, n := range cc.delivered {
		if n > 1 {
			again++
		}
	}
	t.Logf("consumers: %d entries delivered (%d more than once), %d claims, %d left unacknowledged on purpose, errors %v",
		len(cc.delivered), again, cc.claimed, cc.dropped, cc.errKinds)
	if cc.dropped == 0 || cc.claimed < cc.dropped {
		t.Errorf("%d claims for %d entries left unacknowledged: CLAIM did not take them over", cc.claimed, cc.dropped)
	}
}

// checkGroupDrained checks, through c, that group g has nothing pending
// and was delivered up to the stream's last entry.
func checkGroupDrained(t *testing.T, ctx context.Context, what string, c *redis.Client) {
	t.Helper()
	p, err := c.XPending(ctx, "s", "g").Result()
	if err != nil {
		t.Fatalf("%s: XPENDING: %v", what, err)
	}
	groups, err := c.XInfoGroups(ctx, "s").Result()
	if err != nil {
		t.Fatalf("%s: XINFO GROUPS: %v", what, err)
	}
	info, err := c.XInfoStream(ctx, "s").Result()
	if err != nil {
		t.Fatal(err)
	}
	if p.Count != 0 || len(groups) != 1 || groups[0].LastDeliveredID != info.LastGeneratedID ||
		groups[0].Lag != 0 || groups[0].EntriesRead != info.EntriesAdded {
		t.Errorf("%s: XPENDING %d, groups %+v, stream last ID %s entries-added %d", what, p.Count, groups,
			info.LastGeneratedID, info.EntriesAdded)
	}
}
