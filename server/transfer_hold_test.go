package server

import (
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

	"streamd/config"
	"streamd/internal/testutil"
)

// noRetryClient is a go-redis client that never retries (go-redis retries
// TRYAGAIN by itself): every reply the server gives is seen.
func noRetryClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// transferWriter XADDs seq=0,1,2... to stream key through c, batch at a
// time in a pipeline, until stop is closed; it returns how many were
// acknowledged and the first error, and counts them in acked (when set) as
// they come.
func transferWriter(c *redis.Client, key string, batch int, stop <-chan struct{}, acked *atomic.Int64) (int, error) {
	ctx := context.Background()
	for n := 0; ; n += batch {
		if acked != nil {
			acked.Store(int64(n))
		}
		select {
		case <-stop:
			return n, nil
		default:
		}
		cmds, _ := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j := range batch {
				p.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{"seq", strconv.Itoa(n + j)}})
			}
			return nil
		})
		for j, cmd := range cmds {
			if err := cmd.Err(); err != nil {
				return n + j, fmt.Errorf("XADD seq %d: %w", n+j, err)
			}
		}
	}
}

// heldWrites sums the nodes' held and held-then-failed counters.
// waitsForProgress returns a function that waits until each of the
// workers has acknowledged step more operations (acked[i]) than when it
// was called, failing the test if one stopped (ended[i]; errOf(i) says
// why).
func waitsForProgress(t *testing.T, acked []atomic.Int64, ended []atomic.Bool, step int64, errOf func(int) error) func() {
	return func() {
		from := make([]int64, len(acked))
		for i := range acked {
			from[i] = acked[i].Load()
		}
		testutil.Eventually(t, 20*time.Second, 5*time.Millisecond, func() error {
			for i := range acked {
				if ended[i].Load() {
					t.Fatalf("worker %d stopped: %v", i, errOf(i))
				}
				if n := acked[i].Load(); n < from[i]+step {
					return fmt.Errorf("worker %d at %d operations", i, n)
				}
			}
			return nil
		})
	}
}

func heldWrites(nodes []*cnode) (held, failed int64) {
	for _, cn := range nodes {
		held += cn.srv.stats.TransferHold.Held.Load()
		failed += cn.srv.stats.TransferHold.Failed.Load()
	}
	return held, failed
}

// transferUntil moves shard 0's leadership between the two followers, at
// least 3 times and at most max, until enough says so; progress runs
// after each transfer (and is the caller's wait for its writers).
func transferUntil(t *testing.T, ctx context.Context, nodes []*cnode, max int, progress func(), enough func() bool) {
	t.Helper()
	for k := 0; k < max; k++ {
		if k >= 3 && enough() {
			return
		}
		from := leaderOf(nodes, 0)
		to := followersOf(nodes, 0)[k%2]
		must(t, "RAFT TRANSFER", noRetryClient(t, from.addr).Do(ctx, "RAFT", "TRANSFER", "0", to.id).Err())
		testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
			if leaderOf(nodes, 0).id != to.id {
				return errors.New("transfer not done")
			}
			return nil
		})
		progress()
	}
}

// TestClusterTransferHoldsWrites: clients writing continuously, on the
// leader and on a follower, one write at a time and pipelined, while RAFT TRANSFER moves the shard around
// see no TRYAGAIN: every write succeeds, in order, none duplicated; the
// writes refused during the transfers were held (counted) and none failed.
func TestClusterTransferHoldsWrites(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	lead := leaderOf(nodes, 0)
	fol := followersOf(nodes, 0)[0]
	clients := []*redis.Client{noRetryClient(t, lead.addr), noRetryClient(t, fol.addr),
		noRetryClient(t, lead.addr), noRetryClient(t, fol.addr)}
	batches := []int{1, 1, 10, 10}
	wl := clients[0]
	stop := make(chan struct{})
	type result struct {
		n   int
		err error
	}
	res := make([]result, len(clients))
	var acked [4]atomic.Int64
	var ended [4]atomic.Bool // the writer returned
	// progress waits until every writer made 20 more writes.
	progress := waitsForProgress(t, acked[:], ended[:], 20, func(i int) error { return res[i].err })
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].n, res[i].err = transferWriter(c, "s"+strconv.Itoa(i), batches[i], stop, &acked[i])
			ended[i].Store(true)
		}()
	}
	// Transfer until writes were held (each transfer's window is short),
	// at least three times, through the RAFT TRANSFER command.
	ctx := context.Background()
	progress()
	transferUntil(t, ctx, nodes, 30, progress, func() bool {
		held, _ := heldWrites(nodes)
		return held > 0
	})
	close(stop)
	wg.Wait()
	held, failed := heldWrites(nodes)
	if held == 0 || failed != 0 {
		t.Fatalf("held %d writes, %d failed; want some held, none failed", held, failed)
	}
	for i, r := range res {
		if r.err != nil {
			t.Fatalf("writer %d: %v", i, r.err)
		}
		msgs, err := wl.XRange(ctx, "s"+strconv.Itoa(i), "-", "+").Result()
		must(t, "XRANGE", err)
		if len(msgs) != r.n {
			t.Fatalf("writer %d: %d entries, %d writes acknowledged", i, len(msgs), r.n)
		}
		for j, m := range msgs {
			if m.Values["seq"] != strconv.Itoa(j) {
				t.Fatalf("writer %d: entry %d has seq %v (out of order or duplicated)", i, j, m.Values["seq"])
			}
		}
	}
	t.Logf("writes: %d on the leader, %d on a follower, pipelined %d and %d; held %d",
		res[0].n, res[1].n, res[2].n, res[3].n, held)
}

// TestClusterTransferHoldOff: with transfer-hold-timeout 0 a write made on
// the leader during a transfer fails at once with the old TRYAGAIN.
func TestClusterTransferHoldOff(t *testing.T) {
	nodes := startClusterWith(t, 3, 1, false, func(i int, cfg *config.Config) { cfg.TransferHoldTimeout = 0 })
	const want = "TRYAGAIN leadership of the shard is being transferred; the write was not applied"
	seen := false
	for k := 0; k < 30 && !seen; k++ {
		from := leaderOf(nodes, 0)
		to := followersOf(nodes, 0)[k%2]
		w := noRetryClient(t, from.addr)
		stop := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			_, err := transferWriter(w, "s", 1, stop, nil)
			errc <- err
		}()
		must(t, "transfer", from.node.TransferLeader(0, to.id))
		close(stop)
		if err := <-errc; err != nil {
			if !strings.HasSuffix(err.Error(), want) {
				t.Fatalf("write during transfer: %v, want %q", err, want)
			}
			seen = true
		}
	}
	if !seen {
		t.Fatal("no write hit a transfer in 30 transfers")
	}
	if held, _ := heldWrites(nodes); held != 0 {
		t.Fatalf("%d writes held with transfer-hold-timeout 0", held)
	}
}

// TestClusterTransferHoldTimesOut: a write held longer than
// transfer-hold-timeout (the transfer's target is down, so the transfer
// lasts until raft gives up) fails with the hold's TRYAGAIN, not applied.
func TestClusterTransferHoldTimesOut(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	ctx := context.Background()
	lead := leaderOf(nodes, 0)
	down := followersOf(nodes, 0)[0]
	c := noRetryClient(t, lead.addr)
	must(t, "CONFIG SET", c.ConfigSet(ctx, "transfer-hold-timeout", "10ms").Err())
	must(t, "XADD", c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"a", "b"}}).Err())
	down.srv.Close()
	down.node.Close(false)
	var got error
	applied := int64(1) // writes acknowledged
	testutil.Eventually(t, 20*time.Second, time.Millisecond, func() error {
		done := make(chan error, 1)
		go func() { done <- lead.node.TransferLeader(0, down.id) }()
		for !lead.node.Shard(0).Transferring() {
			select {
			case err := <-done:
				return fmt.Errorf("transfer ended (%v) before a write was made", err)
			default:
				time.Sleep(time.Millisecond)
			}
		}
		got = c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"c", "d"}}).Err()
		<-done
		if got == nil {
			applied++
			return errors.New("write made after the transfer ended")
		}
		return nil
	})
	if got.Error() != string(errTransferHold) {
		t.Fatalf("held write: %v, want %q", got, errTransferHold)
	}
	if n := c.XLen(ctx, "s").Val(); n != applied {
		t.Fatalf("XLEN %d after the failed write, want %d (not applied)", n, applied)
	}
	if held, failed := heldWrites(nodes); held < 1 || failed < 1 {
		t.Fatalf("held %d, failed %d; want both counted", held, failed)
	}
}

// TestClusterModeTransferHoldsWrites: in cluster mode a write held on the
// leader during a transfer is answered MOVED to the new leader, not
// TRYAGAIN.
func TestClusterModeTransferHoldsWrites(t *testing.T) {
	nodes := startCluster(t, 3, 1, true)
	for k := 0; k < 30; k++ {
		held0, _ := heldWrites(nodes)
		from := leaderOf(nodes, 0)
		to := followersOf(nodes, 0)[k%2]
		w := noRetryClient(t, from.addr)
		errc := make(chan error, 1)
		go func() {
			_, err := transferWriter(w, "s", 1, nil, nil)
			errc <- err
		}()
		must(t, "transfer", from.node.TransferLeader(0, to.id))
		err := <-errc // MOVED once the new leader leads
		if !strings.Contains(err.Error(), "MOVED ") {
			t.Fatalf("write during a transfer in cluster mode: %v, want MOVED", err)
		}
		if held, _ := heldWrites(nodes); held > held0 {
			return
		}
	}
	t.Fatal("no write held in 30 transfers")
}
