package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// dlqRun is the shared record of TestDeadLetterLeaderKillE2E's producers
// and consumers.
type dlqRun struct {
	mu      sync.Mutex
	acked   map[string]string // value → ID of an acknowledged XADD
	unknown map[string]bool   // values of XADDs that failed (maybe applied)
	seen    map[string]string // ID → value, of entries a consumer was given
	redeliv int               // entries a consumer was given again
	ackOK   map[string]bool   // IDs an XACK acknowledged (answered 1)
	errs    errTally
}

// poison reports whether a value's entry is one consumers never acknowledge.
func poison(v string) bool { return strings.HasSuffix(v, "x") }

// TestDeadLetterLeaderKillE2E: three streamd processes; a stream with
// retention (XCFGSET MAXLEN, ACKED policy) and a group with MAXDELIVERIES
// 2, DEADLETTER and a short VISIBILITY. Producers XADD through the two
// followers; consumers read with plain XREADGROUP … > and acknowledge
// every entry but the "poison" ones, which come back by visibility and
// are then dead-lettered. The leader is SIGKILLed with redeliveries and
// dead-lettering in flight, work goes on with the new leader, the killed
// node restarts. Then, exactly: every entry the stream ever had (its
// entries-added) was given to a consumer or dead-lettered, every
// acknowledged XADD among them; every acknowledged poison entry is in the
// dead-letter stream, once, after 2 deliveries; no entry both acknowledged
// and dead-lettered; the group has nothing pending, retention trimmed the
// stream to MAXLEN once nothing was needed; and every node, made the
// leader in turn, gives the same XINFO STREAM FULL and XRANGE of both
// streams.
func TestDeadLetterLeaderKillE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	const (
		key, dlq, group = "{k}s", "{k}dlq", "g"
		maxlen          = 5
	)
	nodes := start3Nodes(t)
	leader := leaderOf(t, nodes, 0)
	var vias []*clusterNode // the followers: clients stay on them
	for _, n := range nodes {
		if n != leader {
			vias = append(vias, n)
		}
	}
	ctx := ctxT(t)
	admin := newClient(t, vias[0].port, 0)
	do(t, admin, "XGROUP", "CREATE", key, group, "$", "MKSTREAM")
	do(t, admin, "XCFGSET", key, "MAXLEN", maxlen)
	do(t, admin, "XGROUP", "CONFIG", key, group, "MAXDELIVERIES", 2, "DEADLETTER", dlq, "VISIBILITY", 300)

	r := &dlqRun{acked: map[string]string{}, unknown: map[string]bool{}, seen: map[string]string{}, ackOK: map[string]bool{}}
	stopProd, stopCons := make(chan struct{}), make(chan struct{})
	var prodWG, consWG sync.WaitGroup
	pause := func(stop chan struct{}) bool {
		select {
		case <-stop:
			return false
		case <-time.After(10 * time.Millisecond):
			return true
		}
	}
	for w := range 2 {
		prodWG.Add(1)
		c := newClient(t, vias[w].port, 0)
		go func() {
			defer prodWG.Done()
			for i := 0; ; i++ {
				select {
				case <-stopProd:
					return
				default:
				}
				v := fmt.Sprintf("p%d-%d", w, i)
				if i%4 == 0 {
					v += "x"
				}
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				id, err := c.XAdd(cctx, &redis.XAddArgs{Stream: key, Values: []any{"v", v}}).Result()
				cancel()
				r.mu.Lock()
				if err != nil {
					r.unknown[v] = true
					r.errs.note(err)
				} else {
					r.acked[v] = id
				}
				r.mu.Unlock()
				if !pause(stopProd) { // a steady pace (and a back-off after an error)
					return
				}
			}
		}()
	}
	var readErrs atomic.Int64
	for k := range 3 {
		consWG.Add(1)
		c := newClient(t, vias[k%2].port, 0)
		name := fmt.Sprintf("c%d", k)
		go func() {
			defer consWG.Done()
			for {
				select {
				case <-stopCons:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				res, err := c.XReadGroup(cctx, &redis.XReadGroupArgs{Group: group, Consumer: name,
					Streams: []string{key, ">"}, Count: 10, Block: 100 * time.Millisecond}).Result()
				cancel()
				if errors.Is(err, redis.Nil) {
					continue
				}
				if err != nil {
					readErrs.Add(1)
					r.mu.Lock()
					r.errs.note(err)
					r.mu.Unlock()
					if !pause(stopCons) {
						return
					}
					continue
				}
				var ack []string
				r.mu.Lock()
				for _, m := range res[0].Messages {
					v := fmt.Sprint(m.Values["v"])
					if old, ok := r.seen[m.ID]; ok {
						r.redeliv++
						if old != v {
							t.Errorf("entry %s given as %q, then %q", m.ID, old, v)
						}
					}
					r.seen[m.ID] = v
					if !poison(v) {
						ack = append(ack, m.ID)
					}
				}
				r.mu.Unlock()
				if len(ack) == 0 {
					continue
				}
				for _, id := range ack {
					// One by one, so each XACK's answer names its entry.
					cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					n, err := c.XAck(cctx, key, group, id).Result()
					cancel()
					r.mu.Lock()
					if err != nil {
						r.errs.note(err)
					} else if n == 1 {
						r.ackOK[id] = true
					}
					r.mu.Unlock()
				}
			}
		}()
	}
	counts := func() (acked, redeliv int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.acked), r.redeliv
	}
	dlqLen := func() int64 {
		n, err := admin.XLen(ctx, dlq).Result()
		if err != nil {
			return -1
		}
		return n
	}
	// The most entries retention was seen holding back for the group, and
	// the longest the stream was seen.
	var maxHeld, maxLen int64
	noteLen := func() {
		v, err := admin.Do(ctx, "XINFO", "STREAM", key).Slice()
		if err != nil {
			return
		}
		for i := 0; i+1 < len(v); i += 2 {
			n, _ := v[i+1].(int64)
			switch v[i] {
			case "retention-held":
				maxHeld = max(maxHeld, n)
			case "length":
				maxLen = max(maxLen, n)
			}
		}
	}

	// waitFor waits until at least more XADDs were acknowledged, the
	// consumers saw redeliveries and the dead-letter stream grew.
	waitFor := func(what string, more int) {
		t.Helper()
		a0, r0 := counts()
		var d0 int64
		testutil.Eventually(t, 30*time.Second, 10*time.Millisecond, func() error {
			if d0 = dlqLen(); d0 < 0 {
				return errors.New("XLEN of the dead-letter stream failed")
			}
			return nil
		})
		testutil.Eventually(t, 30*time.Second, 10*time.Millisecond, func() error {
			noteLen()
			a, rd := counts()
			if d := dlqLen(); a < a0+more || rd <= r0 || d <= d0 {
				return fmt.Errorf("%s: %d acknowledged XADDs (from %d), %d redeliveries (from %d), %d dead-lettered (from %d)",
					what, a, a0, rd, r0, d, d0)
			}
			return nil
		})
	}
	waitFor("before the kill", 100)
	// Retention holds entries back while more than MAXLEN are needed (the
	// poison entries stay pending for two visibility periods): seen
	// before the kill, however slow the machine makes the producers.
	testutil.Eventually(t, 30*time.Second, 10*time.Millisecond, func() error {
		if noteLen(); maxHeld == 0 {
			return fmt.Errorf("retention-held still 0 (stream up to %d entries, MAXLEN %d)", maxLen, maxlen)
		}
		return nil
	})
	leader.p.kill()
	t.Logf("killed leader %s", leader.id)
	waitFor("after the kill", 100)
	leader.p = startReady(t, leader.port, leader.dir, leader.args()...)
	waitVoters(t, nodes, 3)
	waitFor("after the restart", 50)
	close(stopProd)
	prodWG.Wait()

	// The consumers go on until the group has nothing left: every entry
	// read, nothing pending (poison entries dead-lettered).
	testutil.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		p, err := admin.XPending(ctx, key, group).Result()
		if err != nil {
			return err
		}
		g, err := admin.XInfoGroups(ctx, key).Result()
		if err != nil {
			return err
		}
		if p.Count != 0 || g[0].Lag != 0 {
			return fmt.Errorf("%d pending, lag %d", p.Count, g[0].Lag)
		}
		return nil
	})
	close(stopCons)
	consWG.Wait() // r is the test's alone from here
	t.Logf("%d XADDs acknowledged, %d failed; %d entries given to consumers, %d again; errors %v; stream up to %d entries (MAXLEN %d), up to %d held back",
		len(r.acked), len(r.unknown), len(r.seen), r.redeliv, &r.errs, maxLen, maxlen, maxHeld)
	r.errs.logFirst(t)
	if n := r.errs.kinds["NOGROUP"]; n > 0 {
		t.Errorf("%d reads answered NOGROUP: the group always existed", n)
	}

	// The dead-letter stream: each entry once, after 2 deliveries.
	dead := map[string]string{} // ID in the stream → value
	dl, err := admin.XRange(ctx, dlq, "-", "+").Result()
	if err != nil {
		t.Fatalf("XRANGE dlq: %v", err)
	}
	for _, m := range dl {
		id, v := fmt.Sprint(m.Values["id"]), fmt.Sprint(m.Values["v"])
		if _, twice := dead[id]; twice {
			t.Errorf("entry %s dead-lettered twice", id)
		}
		dead[id] = v
		if m.Values["stream"] != key || m.Values["group"] != group || m.Values["deliveries"] != "2" {
			t.Errorf("dead letter %s: %v", m.ID, m.Values)
		}
		if r.ackOK[id] {
			t.Errorf("entry %s (%s) acknowledged and dead-lettered", id, v)
		}
		if aid, ok := r.acked[v]; (ok && aid != id) || (!ok && !r.unknown[v]) {
			t.Errorf("dead letter for entry %s has value %q (XADD answered %q)", id, v, aid)
		}
	}
	// Every entry the stream ever had was consumed or dead-lettered.
	all := map[string]string{}
	for id, v := range r.seen {
		all[id] = v
	}
	for id, v := range dead {
		all[id] = v
	}
	byValue := map[string]string{}
	for id, v := range all {
		if other, dup := byValue[v]; dup {
			t.Errorf("value %s applied twice: %s and %s", v, other, id)
		}
		byValue[v] = id
		if _, ok := dead[id]; poison(v) && !ok {
			t.Errorf("poison entry %s (%s) not dead-lettered", id, v)
		}
	}
	info, err := admin.XInfoStream(ctx, key).Result()
	if err != nil {
		t.Fatalf("XINFO STREAM: %v", err)
	}
	if info.EntriesAdded != int64(len(all)) {
		t.Errorf("the stream had %d entries; %d were consumed or dead-lettered", info.EntriesAdded, len(all))
	}
	for v, id := range r.acked {
		if byValue[v] != id {
			t.Errorf("acknowledged XADD %s (%s) neither consumed nor dead-lettered (found as %q)", v, id, byValue[v])
		}
	}
	gi, err := admin.XInfoGroups(ctx, key).Result()
	if err != nil {
		t.Fatalf("XINFO GROUPS: %v", err)
	}
	if gi[0].LastDeliveredID != info.LastGeneratedID || gi[0].EntriesRead != info.EntriesAdded {
		t.Errorf("group at %s (%d read), stream at %s (%d added)", gi[0].LastDeliveredID, gi[0].EntriesRead,
			info.LastGeneratedID, info.EntriesAdded)
	}
	if nd := deadLettered(t, admin, key); nd != int64(len(dl)) {
		t.Errorf("XINFO GROUPS dead-lettered %d, dead-letter stream has %d", nd, len(dl))
	}

	// Retention: nothing is needed any more, so the stream comes down to
	// MAXLEN (on the next sweep). What it keeps are entries it had, intact;
	// not necessarily the newest: an ACKED trim skips referenced entries
	// and goes on past them, up to the newest unreferenced one.
	testutil.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		if n := admin.XLen(ctx, key).Val(); n != maxlen {
			return fmt.Errorf("XLEN %d, want %d", n, maxlen)
		}
		return nil
	})
	kept, err := admin.XRange(ctx, key, "-", "+").Result()
	if err != nil {
		t.Fatalf("XRANGE: %v", err)
	}
	for _, m := range kept {
		if v := fmt.Sprint(m.Values["v"]); all[m.ID] != v {
			t.Errorf("kept entry %s has %q; consumed or dead-lettered as %q", m.ID, v, all[m.ID])
		}
	}
	if maxHeld == 0 {
		t.Errorf("retention never held an entry back (retention-held stayed 0)")
	}

	// Every node, as the leader, holds the same state. The balancer may
	// hand the leadership back (every 2 s): a node's reads count only if
	// it led the shard, by its own account, before and after them.
	waitSameApplied(t, nodes)
	leads := func(n *clusterNode) bool {
		shards, err := raftShards(n.port)
		return err == nil && shards[0]["leader"] == n.id
	}
	var want []any
	for _, n := range nodes {
		c := newClient(t, n.port, 0)
		var got []any
		testutil.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
			if !leads(n) {
				cur := leaderOf(t, nodes, 0)
				err := newClient(t, cur.port, 0).Do(ctx, "RAFT", "TRANSFER", 0, n.id).Err()
				return fmt.Errorf("%s does not lead (transfer from %s: %v)", n.id, cur.id, err)
			}
			got = []any{do(t, c, "XINFO", "STREAM", key, "FULL"), do(t, c, "XRANGE", key, "-", "+"),
				do(t, c, "XINFO", "STREAM", dlq, "FULL"), do(t, c, "XRANGE", dlq, "-", "+")}
			if !leads(n) {
				return fmt.Errorf("%s stopped leading during the reads", n.id)
			}
			return nil
		})
		if want == nil {
			want = got
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("state on %s:\n%v\nwant (on %s):\n%v", n.id, got, nodes[0].id, want)
		}
	}
}

// deadLettered is the group's dead-lettered count in XINFO GROUPS.
func deadLettered(t *testing.T, c *redis.Client, key string) int64 {
	t.Helper()
	groups := asList(t, "XINFO GROUPS", do(t, c, "XINFO", "GROUPS", key))
	return asInt(t, "dead-lettered", field(t, "XINFO GROUPS", asList(t, "group", groups[0]), "dead-lettered"))
}
