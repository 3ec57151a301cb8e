package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// txPair runs MULTI, XADD key c=id seq=n part=a, XADD key … part=b, EXEC
// through c and returns the two IDs EXEC answered.
func txPair(ctx context.Context, c redis.Cmdable, key, id string, n int) ([2]string, error) {
	var ids [2]string
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, part := range []string{"a", "b"} {
			p.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{"c", id, "seq", strconv.Itoa(n), "part", part}})
		}
		return nil
	})
	if err != nil {
		return ids, err
	}
	for i, cmd := range cmds {
		ids[i] = cmd.(*redis.StringCmd).Val()
	}
	return ids, nil
}

// TestClusterTransferHoldsExec: clients running MULTI/XADD/XADD/EXEC in a
// loop, on the leader and on a follower, while RAFT TRANSFER moves the
// shard around see no error: every transaction is applied exactly once,
// its two entries adjacent, with the IDs EXEC answered; EXECs refused
// during the transfers were held (on both clients' nodes), none failed.
func TestClusterTransferHoldsExec(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	at := []*cnode{leaderOf(nodes, 0), followersOf(nodes, 0)[0]}
	clients := []*redis.Client{noRetryClient(t, at[0].addr), noRetryClient(t, at[1].addr)}
	stop := make(chan struct{})
	type result struct {
		ids [][2]string // by seq
		err error
	}
	res := make([]result, len(clients))
	var acked [2]atomic.Int64
	var ended [2]atomic.Bool
	var wg sync.WaitGroup
	ctx := context.Background()
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ended[i].Store(true)
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				ids, err := txPair(ctx, c, "tx", strconv.Itoa(i), n)
				if err != nil {
					res[i].err = fmt.Errorf("EXEC seq %d: %w", n, err)
					return
				}
				res[i].ids = append(res[i].ids, ids)
				acked[i].Store(int64(n + 1))
			}
		}()
	}
	progress := waitsForProgress(t, acked[:], ended[:], 10, func(i int) error { return res[i].err })
	heldAt := func(cn *cnode) int64 { return cn.srv.stats.TransferHold.Held.Load() }
	progress()
	transferUntil(t, ctx, nodes, 40, progress, func() bool { return heldAt(at[0]) > 0 && heldAt(at[1]) > 0 })
	close(stop)
	wg.Wait()
	for i, r := range res {
		if r.err != nil {
			t.Fatalf("client %d: %v", i, r.err)
		}
	}
	if heldAt(at[0]) == 0 || heldAt(at[1]) == 0 {
		t.Fatalf("EXECs held: %d on %s, %d on %s; want some on both", heldAt(at[0]), at[0].id, heldAt(at[1]), at[1].id)
	}
	if _, failed := heldWrites(nodes); failed != 0 {
		t.Fatalf("%d held EXECs failed", failed)
	}
	msgs, err := clients[0].XRange(ctx, "tx", "-", "+").Result()
	must(t, "XRANGE", err)
	if want := 2 * (len(res[0].ids) + len(res[1].ids)); len(msgs) != want {
		t.Fatalf("%d entries, want %d (2 per acknowledged EXEC)", len(msgs), want)
	}
	next := [2]int{}
	for j := 0; j < len(msgs); j += 2 {
		a, b := msgs[j], msgs[j+1]
		i, _ := strconv.Atoi(fmt.Sprint(a.Values["c"]))
		seq := strconv.Itoa(next[i])
		if a.Values["part"] != "a" || b.Values["part"] != "b" || b.Values["c"] != a.Values["c"] ||
			a.Values["seq"] != seq || b.Values["seq"] != seq {
			t.Fatalf("entries %d, %d: %v, %v; want client %d's seq %s parts a, b adjacent", j, j+1, a.Values, b.Values, i, seq)
		}
		if ids := res[i].ids[next[i]]; ids != [2]string{a.ID, b.ID} {
			t.Fatalf("client %d seq %s: EXEC answered %v, applied as %s %s", i, seq, ids, a.ID, b.ID)
		}
		next[i]++
	}
	t.Logf("transactions: %d via %s, %d via %s; held %d and %d",
		len(res[0].ids), at[0].id, len(res[1].ids), at[1].id, heldAt(at[0]), heldAt(at[1]))
}

// stalledTransfer is a cluster whose shard 0 leader can be made to hand
// leadership to a stopped node: the transfer lasts until raft gives up,
// and the leader keeps leading.
type stalledTransfer struct {
	t                *testing.T
	lead, fol, down  *cnode
	onLead, onFollow *redis.Client
}

// newStalledTransfer starts 3 nodes and stops a follower.
func newStalledTransfer(t *testing.T) *stalledTransfer {
	nodes := startCluster(t, 3, 1, false)
	fs := followersOf(nodes, 0)
	st := &stalledTransfer{t: t, lead: leaderOf(nodes, 0), fol: fs[0], down: fs[1]}
	st.onLead, st.onFollow = noRetryClient(t, st.lead.addr), noRetryClient(t, st.fol.addr)
	st.down.srv.Close()
	st.down.node.Close(false)
	return st
}

// during runs fn once the leader is handing shard 0 over to the stopped
// node, then waits for the transfer to fail. What fn sends may still reach
// the leader after the transfer ended: callers check the held counters or
// the replies.
func (st *stalledTransfer) during(fn func()) {
	st.t.Helper()
	var done chan error
	testutil.Eventually(st.t, 20*time.Second, time.Millisecond, func() error {
		done = make(chan error, 1)
		go func() { done <- st.lead.node.TransferLeader(0, st.down.id) }()
		for !st.lead.node.Shard(0).Transferring() {
			select {
			case err := <-done:
				return fmt.Errorf("transfer ended (%v) before it was seen", err)
			default:
				time.Sleep(time.Millisecond)
			}
		}
		return nil
	})
	fn()
	if err := <-done; err == nil {
		st.t.Fatal("transfer to a stopped node succeeded")
	}
}

// counts returns cn's held and held-then-failed counters.
func counts(cn *cnode) (held, failed int64) {
	return cn.srv.stats.TransferHold.Held.Load(), cn.srv.stats.TransferHold.Failed.Load()
}

// TestClusterTransferExecHeldHere: an EXEC sent during a transfer that
// fails (the target is down) is held and, the old leader leading again,
// proposed there: applied once, on the leader and through a follower
// (whose forwarded EXEC the leader refused). With a WATCH on the leader and
// another client writing the watched key during the hold, exactly one of
// the two orders happened: the EXEC applied before the write, or it
// aborted.
func TestClusterTransferExecHeldHere(t *testing.T) {
	st := newStalledTransfer(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		at   *cnode
		c    *redis.Client
	}{{"leader", st.lead, st.onLead}, {"follower", st.fol, st.onFollow}} {
		held := false
		for n := 0; n < 20 && !held; n++ {
			h0, _ := counts(tc.at)
			var ids [2]string
			var err error
			st.during(func() { ids, err = txPair(ctx, tc.c, "s-"+tc.name, tc.name, n) })
			must(t, tc.name+" EXEC", err)
			h1, _ := counts(tc.at)
			held = h1 > h0
			msgs, err := st.onLead.XRange(ctx, "s-"+tc.name, "-", "+").Result()
			must(t, "XRANGE", err)
			if len(msgs) != 2*(n+1) || msgs[2*n].ID != ids[0] || msgs[2*n+1].ID != ids[1] {
				t.Fatalf("%s: %d entries after %d EXECs (last answered %v)", tc.name, len(msgs), n+1, ids)
			}
		}
		if !held {
			t.Fatalf("%s: no EXEC held in 20 transfers", tc.name)
		}
	}

	// WATCH on the leader; the key written by another client meanwhile.
	must(t, "XADD", st.onLead.XAdd(ctx, &redis.XAddArgs{Stream: "w", ID: "1-1", Values: []string{"who", "init"}}).Err())
	seen := false
	for n := 0; n < 20 && !seen; n++ {
		h0, _ := counts(st.lead)
		execDone := make(chan error, 1)
		st.during(func() {
			go func() {
				execDone <- st.onLead.Watch(ctx, func(tx *redis.Tx) error {
					_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.XAdd(ctx, &redis.XAddArgs{Stream: "w", Values: []string{"who", "tx" + strconv.Itoa(n)}})
						return nil
					})
					return err
				}, "w")
			}()
			// Once the EXEC is held (or done), write the key.
			testutil.Eventually(t, 10*time.Second, time.Millisecond, func() error {
				if h, _ := counts(st.lead); h > h0 || len(execDone) > 0 {
					return nil
				}
				return errors.New("EXEC neither held nor done")
			})
			seen = len(execDone) == 0
			must(t, "touch", st.onLead.XAdd(ctx, &redis.XAddArgs{Stream: "w", Values: []string{"who", "touch" + strconv.Itoa(n)}}).Err())
		})
		err := <-execDone
		if err != nil && !errors.Is(err, redis.TxFailedErr) {
			t.Fatalf("watched EXEC: %v", err)
		}
		msgs, rerr := st.onLead.XRevRangeN(ctx, "w", "+", "-", 2).Result()
		must(t, "XREVRANGE", rerr)
		last := msgs[0].Values["who"]
		if last != "touch"+strconv.Itoa(n) {
			t.Fatalf("last entry %v, want the touching write", last)
		}
		prev := msgs[1].Values["who"]
		if err == nil && prev != "tx"+strconv.Itoa(n) {
			t.Fatalf("EXEC applied, but the entry before the touch is %v", prev)
		}
		if err != nil && prev == "tx"+strconv.Itoa(n) {
			t.Fatal("EXEC aborted, but its entry is there")
		}
	}
	if !seen {
		t.Fatal("no watched EXEC held in 20 transfers")
	}
	if _, failed := counts(st.lead); failed != 0 {
		t.Fatalf("%d held writes failed", failed)
	}
}

// TestClusterTransferExecBoundAndOff: an EXEC held past
// transfer-hold-timeout fails with the transaction's TRYAGAIN and nothing
// of it is applied (on the leader and through a follower); with
// transfer-hold-timeout 0 it gets the old refusal at once (each queued
// write answers the transfer's TRYAGAIN), not applied either. A forwarded
// EXEC whose WATCH went to the leader that refused it aborts (its WATCH
// ended with the refused EXEC).
func TestClusterTransferExecBoundAndOff(t *testing.T) {
	st := newStalledTransfer(t)
	ctx := context.Background()
	const old = "TRYAGAIN leadership of the shard is being transferred; the write was not applied"
	type client struct {
		name string
		at   *cnode
		c    *redis.Client
	}
	for _, cl := range []client{{"leader", st.lead, st.onLead}, {"follower", st.fol, st.onFollow}} {
		for _, tc := range []struct {
			timeout string
			want    string
		}{{"10ms", string(errTransferHoldTx)}, {"0", old}} {
			must(t, "CONFIG SET", cl.c.ConfigSet(ctx, "transfer-hold-timeout", tc.timeout).Err())
			key := "s-" + cl.name + "-" + tc.timeout
			applied := 0
			var got error
			for n := 0; n < 20 && got == nil; n++ {
				st.during(func() { _, got = txPair(ctx, cl.c, key, cl.name, n) })
				if got == nil {
					applied++ // sent after the transfer ended
				}
			}
			if got == nil || got.Error() != tc.want {
				t.Fatalf("%s, transfer-hold-timeout %s: EXEC answered %v, want %q", cl.name, tc.timeout, got, tc.want)
			}
			if n := st.onLead.XLen(ctx, key).Val(); n != int64(2*applied) {
				t.Fatalf("%s, transfer-hold-timeout %s: XLEN %d, want %d (the refused EXEC not applied)", cl.name, tc.timeout, n, 2*applied)
			}
		}
		held, failed := counts(cl.at)
		// (A held EXEC may also have been applied: the transfer ended
		// within 10ms.)
		if failed != 1 || held < failed {
			t.Fatalf("%s: held %d, failed %d; want one failed", cl.name, held, failed)
		}
		must(t, "CONFIG SET", cl.c.ConfigSet(ctx, "transfer-hold-timeout", "2s").Err())
	}

	// A WATCH forwarded to the leader: the refused EXEC unwatched it there.
	aborted := false
	for n := 0; n < 20 && !aborted; n++ {
		var err error
		st.during(func() {
			err = st.onFollow.Watch(ctx, func(tx *redis.Tx) error {
				_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.XAdd(ctx, &redis.XAddArgs{Stream: "rw", Values: []string{"n", strconv.Itoa(n)}})
					return nil
				})
				return err
			}, "rw")
		})
		switch {
		case errors.Is(err, redis.TxFailedErr):
			aborted = true
			if ln := st.onLead.XLen(ctx, "rw").Val(); ln != int64(n) {
				t.Fatalf("aborted EXEC: XLEN %d, want %d", ln, n)
			}
		case err != nil:
			t.Fatalf("EXEC with a forwarded WATCH: %v", err)
		}
	}
	if !aborted {
		t.Fatal("no EXEC with a forwarded WATCH hit a transfer in 20 transfers")
	}
}

// TestClusterTransferExecWatchMoved: an EXEC held on the leader while the
// shard's leadership moves to another node, with keys WATCHed on the old
// leader, aborts (the new leader cannot check them); every EXEC that
// answered was applied exactly once.
func TestClusterTransferExecWatchMoved(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	ctx := context.Background()
	home := leaderOf(nodes, 0)
	c := noRetryClient(t, home.addr)
	must(t, "XADD", c.XAdd(ctx, &redis.XAddArgs{Stream: "w", ID: "1-1", Values: []string{"n", "init"}}).Err())
	applied := map[string]bool{}
	heldAborts := 0
	for k := 0; k < 30 && heldAborts == 0; k++ {
		var lead *cnode
		testutil.Eventually(t, 10*time.Second, time.Millisecond, func() error {
			if lead = leaderOf(nodes, 0); lead.node == nil {
				return errors.New("no leader yet")
			}
			return nil
		})
		if lead != home {
			must(t, "transfer back", lead.node.TransferLeader(0, home.id))
			testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
				if !home.node.Shard(0).IsLeader() || home.node.Shard(0).Transferring() {
					return errors.New("not back")
				}
				return nil
			})
		}
		stop := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				tag := fmt.Sprintf("%d-%d", k, n)
				h0, _ := counts(home)
				err := c.Watch(ctx, func(tx *redis.Tx) error {
					_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.XAdd(ctx, &redis.XAddArgs{Stream: "w", Values: []string{"n", tag}})
						return nil
					})
					return err
				}, "w")
				h1, _ := counts(home)
				switch {
				case err == nil:
					if h1 > h0 {
						done <- fmt.Errorf("EXEC %s held while the shard moved, then applied", tag)
						return
					}
					applied[tag] = true
				case errors.Is(err, redis.TxFailedErr):
					if h1 > h0 {
						heldAborts++
					}
				default:
					done <- fmt.Errorf("EXEC %s: %w", tag, err)
					return
				}
			}
		}()
		must(t, "transfer", home.node.TransferLeader(0, followersOf(nodes, 0)[k%2].id))
		close(stop)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if heldAborts == 0 {
		t.Fatal("no watched EXEC held during 30 transfers")
	}
	msgs, err := c.XRange(ctx, "w", "-", "+").Result()
	must(t, "XRANGE", err)
	for _, m := range msgs[1:] {
		tag := fmt.Sprint(m.Values["n"])
		if !applied[tag] {
			t.Fatalf("entry %s applied but its EXEC did not answer it (or twice)", tag)
		}
		delete(applied, tag)
	}
	if len(applied) != 0 {
		t.Fatalf("%d acknowledged EXECs missing", len(applied))
	}
}

// TestClusterModeTransferHoldsExec: in cluster mode an EXEC held on the
// leader during a transfer is answered MOVED to the new leader, as a
// single write is, not TRYAGAIN.
func TestClusterModeTransferHoldsExec(t *testing.T) {
	nodes := startCluster(t, 3, 1, true)
	ctx := context.Background()
	for k := 0; k < 30; k++ {
		held0, _ := heldWrites(nodes)
		from := leaderOf(nodes, 0)
		to := followersOf(nodes, 0)[k%2]
		w := noRetryClient(t, from.addr)
		errc := make(chan error, 1)
		go func() {
			for n := 0; ; n++ {
				if _, err := txPair(ctx, w, "s", "w", n); err != nil {
					errc <- err
					return
				}
			}
		}()
		must(t, "transfer", from.node.TransferLeader(0, to.id))
		err := <-errc // MOVED once the new leader leads
		if strings.HasPrefix(err.Error(), "EXECABORT ") {
			// The shard moved before this transaction's XADDs were
			// queued: each was answered MOVED, so EXEC aborts, as in
			// Redis Cluster. No EXEC was held this time (a CI run
			// under load once got here); try the next transfer.
			continue
		}
		if !strings.HasPrefix(err.Error(), "MOVED ") || !strings.HasSuffix(err.Error(), leaderOf(nodes, 0).addr) {
			t.Fatalf("EXEC during a transfer in cluster mode: %v, want MOVED to %s", err, leaderOf(nodes, 0).addr)
		}
		if held, _ := heldWrites(nodes); held > held0 {
			return
		}
	}
	t.Fatal("no EXEC held in 30 transfers")
}

// TestClusterForwardedTxAtFormerLeader: a transaction another node forwards
// to a node that no longer leads its shard (the leadership moved after the
// forwarder routed it) is queued there and refused unrun at EXEC —
// TRYAGAIN, which the forwarder routes again — not failed as EXECABORT.
func TestClusterForwardedTxAtFormerLeader(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	lead := leaderOf(nodes, 0)
	fs := followersOf(nodes, 0)
	// An internal connection (what a forwarding node's upstream is) to a
	// follower, as to a leader that has just handed the shard over.
	nc, err := lead.node.DialRESP(fs[0].node.RaftAddr())
	if err != nil {
		t.Fatal(err)
	}
	in := &respConn{nc: nc, r: bufio.NewReader(nc)}
	t.Cleanup(func() { in.Close() })
	runSteps(t, in, []step{
		{[]string{"STREAMD.AUTHAS", "default"}, "+OK"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"XADD", "tx", "*", "f", "v"}, "+QUEUED"},
	})
	v, err := in.Do("EXEC")
	if err != nil || !strings.HasPrefix(v.String(), "(error) TRYAGAIN this node does not lead the shard") {
		t.Fatalf("EXEC at a follower = %s %v, want TRYAGAIN (not run)", v, err)
	}
	if n, err := noRetryClient(t, lead.addr).XLen(context.Background(), "tx").Result(); err != nil || n != 0 {
		t.Fatalf("XLEN tx at the leader = %d %v, want 0", n, err)
	}
}
