package main

// Raft log suffix truncation on the real binary (issue 9): a leader that
// appended writes it could not commit is deposed, rejoins as a follower and
// has its log tail cleared ("clearing log suffix"); the next SIGKILL and
// restart of that node must still start. TestClusterFaultRounds repeats
// leader kills, leader pauses and follower kills under XADD / XREADGROUP /
// XACK load. Waiting is polling with a deadline; a sleep is only ever a
// fault's deliberate duration.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

var (
	faultRounds = flag.Int("fault.rounds", 3, "TestClusterFaultRounds fault rounds")
	faultSeed   = flag.Int64("fault.seed", 0, "TestClusterFaultRounds seed (0: time-based)")
	faultStore  = flag.String("fault.store", "wal", "TestClusterFaultRounds --log-store (wal or bolt)")
)

// suffixClearLine is what raft logs (at WARN) when it truncates the tail
// of a follower's log that conflicts with the leader's.
const suffixClearLine = "clearing log suffix"

// TestClusterSuffixTruncationRestart: the leader of shard 0 appends XADDs
// while both followers are paused (SIGSTOP), so they stay uncommitted in
// its log; it is SIGKILLed, the followers are SIGKILLed while paused and
// restarted (see below why not SIGCONT) and elect a new leader that takes
// more XADDs and XREADGROUP / XACK. The old leader restarts, must clear its
// log suffix, catches up, and is SIGKILLed and restarted once more: that
// restart must start and rejoin (raft-wal v0.4.0 left a sealed segment
// without an index block and refused it). Then every acknowledged XADD is
// present once, with its ID, through every node, and the consumer group
// reads the same everywhere. Runs on both log stores.
func TestClusterSuffixTruncationRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	for _, store := range []string{"wal", "bolt"} {
		t.Run(store, func(t *testing.T) { suffixTruncationRestart(t, store) })
	}
}

// suffixTruncationRestart is TestClusterSuffixTruncationRestart on one
// log store.
func suffixTruncationRestart(t *testing.T, store string) {
	nodes := start3Nodes(t, "--log-store", store)
	ctx := ctxT(t)
	acked := map[string]string{} // value → ID of every acknowledged XADD
	xadd := func(c *redis.Client, prefix string, n int) {
		t.Helper()
		for i := range n {
			v := prefix + strconv.Itoa(i)
			id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"v", v}}).Result()
			if err != nil {
				t.Fatalf("XADD %s: %v", v, err)
			}
			acked[v] = id
		}
	}
	old := leaderOf(t, nodes, 0)
	lc := newClient(t, old.port, 0)
	do(t, lc, "XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
	xadd(lc, "a", 50)
	readAndAck(t, lc, "c1", 20, 10)

	// Both followers paused: the leader appends the next XADDs to its own
	// log but can't commit them (each one's outcome is unknown).
	var followers []*clusterNode
	for _, n := range nodes {
		if n != old {
			followers = append(followers, n)
			pause(t, n.p)
		}
	}
	mc := redis.NewClient(&redis.Options{Addr: old.p.addr(), Protocol: 2, DisableIdentity: true,
		MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 5 * time.Second, PoolSize: 8})
	defer mc.Close()
	maybe := make([]error, 5) // the replies to XADD m0..m4: may or may not be applied
	var wg sync.WaitGroup
	for i := range maybe {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			maybe[i] = mc.XAdd(cctx, &redis.XAddArgs{Stream: "s", Values: []any{"v", "m" + strconv.Itoa(i)}}).Err()
		}()
	}
	var commit, last uint64
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		var err error
		if commit, last, err = raftTail(old.port); err != nil {
			return err
		}
		if last <= commit {
			return fmt.Errorf("%s: last-log-index %d not above commit-index %d: no uncommitted tail", old.id, last, commit)
		}
		return nil
	})
	old.p.kill()
	wg.Wait()
	t.Logf("%s (leader) had log entries %d-%d uncommitted when SIGKILLed; XADD replies: %v", old.id, commit+1, last, maybe)
	for i, err := range maybe {
		if err == nil {
			t.Errorf("XADD m%d acknowledged while both followers were paused", i)
		}
	}
	// The paused followers' kernels hold the tail's AppendEntries: after
	// SIGCONT a follower may read and adopt it before its election timeout
	// fires (it did in the first runs of this test), and then there is nothing for
	// the old leader to clear. SIGKILL and restart them instead, so that the
	// tail is in the old leader's log only.
	for _, f := range followers {
		f.p.kill()
	}
	for _, f := range followers {
		f.p = startServer(t, f.port, f.dir, f.args()...)
	}
	for _, f := range followers {
		f.p.waitReady(60 * time.Second)
	}

	leader := leaderOf(t, followers, 0)
	nc := newClient(t, leader.port, 0)
	xadd(nc, "b", 50)
	readAndAck(t, nc, "c2", 30, 15)

	old.p = startReady(t, old.port, old.dir, old.args()...)
	waitVoters(t, nodes, 3)
	testutil.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		if !strings.Contains(old.p.logs(), suffixClearLine) {
			return fmt.Errorf("%s rejoined but never logged %q: its uncommitted tail was not truncated, "+
				"so the path under test was not exercised", old.id, suffixClearLine)
		}
		return nil
	})
	t.Logf("%s cleared its log suffix after rejoining %s's cluster", old.id, leader.id)
	xadd(nc, "c", 10)
	waitApplied(t, nodes)

	// The restart that raft-wal v0.4.0 refused ("sealed log segment damaged").
	old.p.kill()
	old.p = startReady(t, old.port, old.dir, old.args()...)
	waitVoters(t, nodes, 3)
	xadd(newClient(t, old.port, 0), "d", 10) // through the restarted node
	waitApplied(t, nodes)
	checkStreams(t, nodes, acked)
}

// readAndAck reads up to count new entries for consumer in group g of s
// (XREADGROUP ... >) and XACKs the first ack of them.
func readAndAck(t *testing.T, c *redis.Client, consumer string, count int64, ack int) {
	t.Helper()
	ctx := ctxT(t)
	res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: consumer,
		Streams: []string{"s", ">"}, Count: count, Block: -1}).Result()
	if err != nil {
		t.Fatalf("XREADGROUP %s: %v", consumer, err)
	}
	for i, m := range res[0].Messages {
		if i == ack {
			break
		}
		if err := c.XAck(ctx, "s", "g", m.ID).Err(); err != nil {
			t.Fatalf("XACK %s: %v", m.ID, err)
		}
	}
}

// pause stops p with SIGSTOP; test cleanup resumes it (SIGCONT) so that
// the kill at cleanup and the output logging behave as for a running one.
func pause(t *testing.T, p *proc) {
	t.Helper()
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %d: %v", p.cmd.Process.Pid, err)
	}
	t.Cleanup(func() { resume(p) })
}

// resume sends SIGCONT to p unless it has exited.
func resume(p *proc) {
	if !p.exited() {
		syscall.Kill(p.cmd.Process.Pid, syscall.SIGCONT)
	}
}

// raftTail returns shard 0's commit index and last log index on the node
// at port (the shard0 line of RAFT INFO).
func raftTail(port int) (commit, last uint64, err error) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2,
		DisableIdentity: true, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 5 * time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := c.Do(ctx, "RAFT", "INFO").Text()
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "shard0:")
		if !ok {
			continue
		}
		f := map[string]string{}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		commit, errC := strconv.ParseUint(f["commit_index"], 10, 64)
		last, errL := strconv.ParseUint(f["last_log_index"], 10, 64)
		if err := errors.Join(errC, errL); err != nil {
			return 0, 0, fmt.Errorf("RAFT INFO %q: %v", line, err)
		}
		return commit, last, nil
	}
	return 0, 0, fmt.Errorf("RAFT INFO has no shard0 line: %q", info)
}

// waitApplied waits until every node answers RAFT SHARDS with the same
// applied-index on every shard.
func waitApplied(t *testing.T, nodes []*clusterNode) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, 50*time.Millisecond, func() error {
		applied := map[string][]any{}
		for _, n := range nodes {
			shards, err := raftShards(n.port)
			if err != nil {
				return fmt.Errorf("%s: %v", n.id, err)
			}
			for _, sh := range shards {
				applied[n.id] = append(applied[n.id], sh["applied-index"])
			}
		}
		for _, n := range nodes[1:] {
			if !reflect.DeepEqual(applied[n.id], applied[nodes[0].id]) {
				return fmt.Errorf("applied indexes differ: %v", applied)
			}
		}
		return nil
	})
}

// checkStreams checks through every node that stream s holds every
// acknowledged XADD (value → ID) exactly once under its ID, no value twice,
// and that XINFO GROUPS and XPENDING (without idle times) are equal on all
// nodes.
func checkStreams(t *testing.T, nodes []*clusterNode, acked map[string]string) {
	t.Helper()
	ctx := ctxT(t)
	var groups0, pending0 any
	for i, n := range nodes {
		c := newClient(t, n.port, 0)
		all, err := c.XRange(ctx, "s", "-", "+").Result()
		if err != nil {
			t.Fatalf("XRANGE via %s: %v", n.id, err)
		}
		seen := map[string][]string{} // value → IDs
		for _, m := range all {
			v := fmt.Sprint(m.Values["v"])
			seen[v] = append(seen[v], m.ID)
		}
		var bad []string
		for v, ids := range seen {
			if len(ids) != 1 {
				bad = append(bad, fmt.Sprintf("%s present as %v", v, ids))
			}
		}
		for v, id := range acked {
			if ids := seen[v]; len(ids) != 1 || ids[0] != id {
				bad = append(bad, fmt.Sprintf("acknowledged %s (ID %s) present as %v", v, id, ids))
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("via %s: %d problems in %d entries, first: %v", n.id, len(bad), len(all), bad[:min(len(bad), 10)])
		}
		groups := do(t, c, "XINFO", "GROUPS", "s")
		pending := dropIdle(do(t, c, "XPENDING", "s", "g", "-", "+", "10000000"))
		t.Logf("via %s: %d entries, %d acknowledged XADDs, %d pending", n.id, len(all), len(acked), len(asList(t, "XPENDING", pending)))
		if i == 0 {
			groups0, pending0 = groups, pending
			continue
		}
		if !reflect.DeepEqual(groups, groups0) {
			t.Errorf("XINFO GROUPS via %s = %v, want %v (via %s)", n.id, groups, groups0, nodes[0].id)
		}
		if !reflect.DeepEqual(pending, pending0) {
			t.Errorf("XPENDING via %s differs from %s's (%d and %d entries)", n.id, nodes[0].id,
				len(asList(t, "XPENDING", pending)), len(asList(t, "XPENDING", pending0)))
		}
	}
}

// faultLoad is TestClusterFaultRounds's client load and what it was told.
type faultLoad struct {
	stop  chan struct{}
	wg    sync.WaitGroup
	sent  atomic.Int64 // XADDs sent
	fails atomic.Int64 // XADDs with an error (outcome unknown or not applied)
	reads atomic.Int64 // entries delivered by answered XREADGROUPs
	acks  atomic.Int64 // answered XACKs

	mu       sync.Mutex
	acked    map[string]string // value → ID of every acknowledged XADD
	errKinds map[string]int    // "COMMAND kind" → count
	errFirst []string          // the first error of each kind
}

// note counts err of command cmd by kind: errKind, or for a plain ERR
// reply its text up to the colon ("ERR outcome unknown").
func (l *faultLoad) note(cmd string, err error) {
	k := errKind(err)
	if k == "ERR" {
		k, _, _ = strings.Cut(err.Error(), ":")
	}
	k = cmd + " " + k
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.errKinds[k]++; l.errKinds[k] == 1 {
		l.errFirst = append(l.errFirst, cmd+": "+err.Error())
	}
}

// ackedCount is the number of acknowledged XADDs.
func (l *faultLoad) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// run is client w's loop on c until stop: XADD of a new value every time
// (a failed one is never sent again), and now and then XREADGROUP COUNT 10
// as consumer c<w> with XACK of about half of what it read.
func (l *faultLoad) run(ctx context.Context, w int, c *redis.Client, rng *rand.Rand) {
	defer l.wg.Done()
	consumer := "c" + strconv.Itoa(w)
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		v := fmt.Sprintf("w%d-%d", w, i)
		l.sent.Add(1)
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		id, err := c.XAdd(cctx, &redis.XAddArgs{Stream: "s", Values: []any{"v", v}}).Result()
		failed := err != nil
		if failed {
			l.fails.Add(1)
			l.note("XADD", err)
		} else {
			l.mu.Lock()
			l.acked[v] = id
			l.mu.Unlock()
			if rng.Intn(4) == 0 {
				failed = !l.readAndAck(cctx, c, consumer, rng)
			}
		}
		cancel()
		if failed { // back off: during an election every attempt fails at once
			select {
			case <-l.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// readAndAck is one XREADGROUP COUNT 10 and the XACKs of about half of
// the entries read; it reports whether every command was answered.
func (l *faultLoad) readAndAck(ctx context.Context, c *redis.Client, consumer string, rng *rand.Rand) bool {
	res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: consumer,
		Streams: []string{"s", ">"}, Count: 10, Block: -1}).Result()
	if errors.Is(err, redis.Nil) {
		return true
	}
	if err != nil {
		l.note("XREADGROUP", err)
		return false
	}
	for _, m := range res[0].Messages {
		l.reads.Add(1)
		if rng.Intn(2) == 0 {
			continue
		}
		if err := c.XAck(ctx, "s", "g", m.ID).Err(); err != nil {
			l.note("XACK", err)
			return false
		}
		l.acks.Add(1)
	}
	return true
}

// TestClusterFaultRounds: eight go-redis clients, each on a random node,
// XADD unique values and XREADGROUP / XACK, while each round SIGKILLs the
// leader of shard 0 and restarts it after 0-1s, pauses it (SIGSTOP) for
// 0.5-3s so that it is deposed and later has its uncommitted tail
// truncated, or SIGKILLs a follower and restarts it. After each round every
// node runs, has three voters, and new XADDs are acknowledged. At the end
// every acknowledged XADD is present exactly once through every node and
// the group state is equal everywhere. -fault.rounds, -fault.seed and
// -fault.store (the --log-store) tune it; 50 rounds take about 80s.
func TestClusterFaultRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	seed := *faultSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (-fault.seed), %d rounds (-fault.rounds), log store %s (-fault.store)", seed, *faultRounds, *faultStore)
	rng := rand.New(rand.NewSource(seed))
	nodes := start3Nodes(t, "--log-store", *faultStore)
	began := time.Now()
	ctx, cancel := context.WithCancel(context.Background()) // no 5-minute bound: -fault.rounds may be large
	t.Cleanup(cancel)
	do(t, newClient(t, nodes[0].port, 0), "XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")

	ld := &faultLoad{stop: make(chan struct{}), acked: map[string]string{}, errKinds: map[string]int{}}
	for w := range 8 {
		c := newClient(t, nodes[rng.Intn(len(nodes))].port, 0)
		ld.wg.Add(1)
		go ld.run(ctx, w, c, rand.New(rand.NewSource(seed+int64(w)+1)))
	}
	var stopOnce sync.Once
	stopLoad := func() { stopOnce.Do(func() { close(ld.stop); ld.wg.Wait() }) }
	t.Cleanup(stopLoad)
	waitProgress := func(n int) {
		t.Helper()
		testutil.Eventually(t, 60*time.Second, 10*time.Millisecond, func() error {
			if got := ld.ackedCount(); got < n {
				return fmt.Errorf("%d acknowledged XADDs (%d failed), want %d", got, ld.fails.Load(), n)
			}
			return nil
		})
	}
	waitProgress(100)

	var oldProcs []*proc // the runs before each restart, for their logs
	restart := func(n *clusterNode) {
		t.Helper()
		oldProcs = append(oldProcs, n.p)
		n.p = startReady(t, n.port, n.dir, n.args()...)
	}
	kinds := map[string]int{}
	for r := range *faultRounds {
		leader := leaderOf(t, nodes, 0)
		var kind, victim string
		switch rng.Intn(3) {
		case 0:
			kind, victim = "kill-leader", leader.id
			d := time.Duration(rng.Int63n(int64(time.Second)))
			leader.p.kill()
			time.Sleep(d) // the fault's duration
			restart(leader)
		case 1:
			kind, victim = "pause-leader", leader.id
			d := 500*time.Millisecond + time.Duration(rng.Int63n(int64(2500*time.Millisecond)))
			pause(t, leader.p)
			time.Sleep(d) // the fault's duration
			resume(leader.p)
		default:
			f := nodes[(slices.Index(nodes, leader)+1+rng.Intn(len(nodes)-1))%len(nodes)]
			kind, victim = "kill-follower", f.id
			d := time.Duration(rng.Int63n(int64(time.Second)))
			f.p.kill()
			time.Sleep(d) // the fault's duration
			restart(f)
		}
		kinds[kind]++
		waitVoters(t, nodes, 3)
		waitProgress(ld.ackedCount() + 50)
		t.Logf("round %d: %s %s; %d XADDs acknowledged so far", r+1, kind, victim, ld.ackedCount())
	}

	stopLoad()
	waitApplied(t, nodes)
	checkStreams(t, nodes, ld.acked)
	clears := 0
	for _, n := range nodes {
		oldProcs = append(oldProcs, n.p)
	}
	for _, p := range oldProcs {
		clears += strings.Count(p.logs(), suffixClearLine)
	}
	t.Logf("%d rounds %v in %v; XADDs: %d sent, %d acknowledged, %d failed; %d entries read, %d XACKed; "+
		"errors %v; %q logged %d times", *faultRounds, kinds, time.Since(began).Round(time.Millisecond),
		ld.sent.Load(), ld.ackedCount(), ld.fails.Load(), ld.reads.Load(), ld.acks.Load(), ld.errKinds,
		suffixClearLine, clears)
	for _, e := range ld.errFirst {
		t.Logf("first of its kind: %s", e)
	}
}
