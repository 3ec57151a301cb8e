package main

// Multi-process cluster tests on the real binary (issue 4): three streamd
// processes on loopback, n1 bootstrapping and n2, n3 joining through n1's
// client port. Waiting is polling with a deadline, never a bare sleep.

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// clusterTiming makes failover quick on loopback (the defaults are 1s).
var clusterTiming = []string{
	"--raft-heartbeat-timeout", "300ms", "--raft-election-timeout", "300ms", "--raft-lease-timeout", "150ms",
	"--quorum-timeout", "3s",
}

// clusterNode is one member: its process, ports, directory and the flags it
// was started with (without bootstrap/join, for a restart).
type clusterNode struct {
	id       string
	port     int
	raftPort int
	dir      string
	extra    []string
	p        *proc
}

func (n *clusterNode) raftAddr() string { return "127.0.0.1:" + strconv.Itoa(n.raftPort) }

func (n *clusterNode) args(more ...string) []string {
	a := append([]string{"--node-id", n.id, "--raft-addr", n.raftAddr()}, clusterTiming...)
	a = append(a, n.extra...)
	return append(a, more...)
}

// start3Nodes starts n1 with --bootstrap and n2, n3 with --join n1, each
// with extra flags, and waits until every node sees every shard with a
// leader and three voters.
func start3Nodes(t *testing.T, extra ...string) []*clusterNode {
	t.Helper()
	return start3NodesWith(t, func(int) []string { return extra })
}

// start3NodesWith is start3Nodes with node i's extra flags from extra(i).
func start3NodesWith(t *testing.T, extra func(i int) []string) []*clusterNode {
	t.Helper()
	streamdBinary(t) // build before the clock starts
	base := t.TempDir()
	nodes := make([]*clusterNode, 3)
	for i := range nodes {
		nodes[i] = &clusterNode{id: "n" + strconv.Itoa(i+1), port: pickPort(t), raftPort: pickPort(t),
			dir: filepath.Join(base, "n"+strconv.Itoa(i+1)), extra: extra(i)}
	}
	n1 := nodes[0]
	n1.p = startReady(t, n1.port, n1.dir, n1.args("--bootstrap")...)
	for _, n := range nodes[1:] {
		n.p = startServer(t, n.port, n.dir, n.args("--join", "127.0.0.1:"+strconv.Itoa(n1.port))...)
	}
	for _, n := range nodes {
		n.p.waitReady(60 * time.Second)
	}
	waitVoters(t, nodes, 3)
	return nodes
}

// waitVoters waits until every running node reports every shard with a
// known leader and want voters.
func waitVoters(t *testing.T, nodes []*clusterNode, want int) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, 50*time.Millisecond, func() error {
		for _, n := range nodes {
			if n.p.exited() {
				continue
			}
			shards, err := raftShardsAuth(n.port, n.p.pass)
			if err != nil {
				return fmt.Errorf("%s: %v", n.id, err)
			}
			for _, sh := range shards {
				if sh["leader"] == "" || sh["voters"] != int64(want) {
					return fmt.Errorf("%s: shard %v leader %q voters %v", n.id, sh["shard"], sh["leader"], sh["voters"])
				}
			}
		}
		return nil
	})
}

// raftShards runs RAFT SHARDS on port: one map per shard.
func raftShards(port int) ([]map[string]any, error) { return raftShardsAuth(port, "") }

// raftShardsAuth is raftShards with AUTH pass first (when set).
func raftShardsAuth(port int, pass string) ([]map[string]any, error) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2, Password: pass,
		DisableIdentity: true, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 5 * time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := c.Do(ctx, "RAFT", "SHARDS").Slice()
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, e := range v {
		kv, ok := e.([]any)
		if !ok || len(kv)%2 != 0 {
			return nil, fmt.Errorf("RAFT SHARDS entry %v", e)
		}
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[fmt.Sprint(kv[i])] = kv[i+1]
		}
		out = append(out, m)
	}
	return out, nil
}

// leaderOf returns the node leading shard i (as the first running node
// sees it).
func leaderOf(t *testing.T, nodes []*clusterNode, i int) *clusterNode {
	t.Helper()
	var leader *clusterNode
	testutil.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		for _, n := range nodes {
			if n.p.exited() {
				continue
			}
			shards, err := raftShardsAuth(n.port, n.p.pass)
			if err != nil {
				return err
			}
			for _, m := range nodes {
				if m.id == shards[i]["leader"] && !m.p.exited() {
					leader = m
					return nil
				}
			}
			return fmt.Errorf("shard %d leader %q not running", i, shards[i]["leader"])
		}
		return errors.New("no node running")
	})
	return leader
}

// TestClusterFailoverE2E: go-redis XADD load through a follower (a plain
// client: the follower forwards to the leader), SIGKILL of the leader
// mid-load, writes continue on the new leader, the killed node restarts and
// catches up; then every acknowledged XADD is present exactly once through
// every node, every node applied the same log, and the consumer group reads
// the same (XINFO GROUPS, XPENDING) through every node.
func TestClusterFailoverE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	nodes := start3Nodes(t)
	leader := leaderOf(t, nodes, 0)
	var via *clusterNode // a follower the load goes through, kept alive
	for _, n := range nodes {
		if n != leader {
			via = n
			break
		}
	}
	wc := newClient(t, via.port, 0)
	ctx := ctxT(t)
	do(t, wc, "XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")

	var (
		mu    sync.Mutex
		acked = map[string]string{} // value → ID
		sent  atomic.Int64
		fails atomic.Int64
		stop  = make(chan struct{})
		done  = make(chan struct{})
		errs  errTally
	)
	const writers = 4
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// A new value for every attempt: a failed attempt (outcome
				// unknown, connection lost) may or may not have been
				// applied, so it is never sent again.
				v := fmt.Sprintf("w%d-%d", w, i)
				sent.Add(1)
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				id, err := wc.XAdd(cctx, &redis.XAddArgs{Stream: "s", Values: []any{"v", v}}).Result()
				cancel()
				if err != nil {
					fails.Add(1)
					errs.note(err)
					// Back off a little: during the election every
					// attempt fails at once (CLUSTERDOWN).
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
					}
					continue
				}
				mu.Lock()
				acked[v] = id
				mu.Unlock()
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	ackedCount := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	waitAcked := func(n int) {
		t.Helper()
		testutil.Eventually(t, 60*time.Second, 10*time.Millisecond, func() error {
			if got := ackedCount(); got < n {
				return fmt.Errorf("%d acknowledged XADDs (%d failed), want %d", got, fails.Load(), n)
			}
			return nil
		})
	}

	waitAcked(300)
	// Deliver some entries to the group and acknowledge part of them, so
	// the PEL, delivery counts and last-delivered-id travel too.
	rc := newClient(t, via.port, 0)
	if _, err := rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"s", ">"}, Count: 50}).Result(); err != nil {
		t.Fatal(err)
	}
	msgs, err := rc.XRangeN(ctx, "s", "-", "+", 20).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := rc.XAck(ctx, "s", "g", m.ID).Err(); err != nil {
			t.Fatal(err)
		}
	}

	killedAt := ackedCount()
	leader.p.kill()
	t.Logf("killed leader %s after %d acknowledged XADDs", leader.id, killedAt)
	waitAcked(killedAt + 300)
	// The group keeps working on the new leader.
	if _, err := rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c2", Streams: []string{"s", ">"}, Count: 30}).Result(); err != nil {
		t.Fatalf("XREADGROUP after failover: %v", err)
	}
	if err := rc.XClaim(ctx, &redis.XClaimArgs{Stream: "s", Group: "g", Consumer: "c2", Messages: []string{msgs[0].ID, msgs[len(msgs)-1].ID}}).Err(); err != nil {
		t.Fatalf("XCLAIM after failover: %v", err)
	}

	// Restart the killed node (a member's restart needs no bootstrap/join).
	leader.p = startReady(t, leader.port, leader.dir, leader.args()...)
	waitVoters(t, nodes, 3)
	restartAt := ackedCount()
	waitAcked(restartAt + 200)
	close(stop)
	<-done
	t.Logf("%d XADDs sent, %d acknowledged, %d failed %v", sent.Load(), ackedCount(), fails.Load(), &errs)
	errs.logFirst(t)

	// Every node applied the same log.
	testutil.Eventually(t, 60*time.Second, 50*time.Millisecond, func() error {
		var applied []any
		for _, n := range nodes {
			shards, err := raftShards(n.port)
			if err != nil {
				return err
			}
			applied = append(applied, shards[0]["applied-index"])
		}
		if applied[0] != applied[1] || applied[1] != applied[2] {
			return fmt.Errorf("applied indexes %v", applied)
		}
		return nil
	})

	var groups0, pending0 any
	for _, n := range nodes {
		c := newClient(t, n.port, 0)
		all, err := c.XRange(ctx, "s", "-", "+").Result()
		if err != nil {
			t.Fatalf("XRANGE via %s: %v", n.id, err)
		}
		seen := map[string]int{}
		for _, m := range all {
			seen[fmt.Sprint(m.Values["v"])]++
		}
		for v, n2 := range seen {
			if n2 != 1 {
				t.Errorf("via %s: value %s present %d times", n.id, v, n2)
			}
		}
		mu.Lock()
		for v, id := range acked {
			if seen[v] != 1 {
				t.Errorf("via %s: acknowledged XADD %s (id %s) present %d times", n.id, v, id, seen[v])
			}
		}
		mu.Unlock()
		groups := do(t, c, "XINFO", "GROUPS", "s")
		pending := do(t, c, "XPENDING", "s", "g", "-", "+", "1000")
		pendingNoIdle := dropIdle(pending)
		if groups0 == nil {
			groups0, pending0 = groups, pendingNoIdle
			continue
		}
		if !reflect.DeepEqual(groups, groups0) {
			t.Errorf("XINFO GROUPS via %s = %v, want %v", n.id, groups, groups0)
		}
		if !reflect.DeepEqual(pendingNoIdle, pending0) {
			t.Errorf("XPENDING via %s = %v, want %v", n.id, pendingNoIdle, pending0)
		}
	}
}

// errTally counts a concurrent load's errors by kind (errKind) and keeps
// the first error of each kind, for the test's summary.
type errTally struct {
	mu    sync.Mutex
	kinds map[string]int
	first []string
}

// note counts err.
func (e *errTally) note(err error) {
	k := errKind(err)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.kinds == nil {
		e.kinds = map[string]int{}
	}
	if e.kinds[k]++; e.kinds[k] == 1 {
		e.first = append(e.first, err.Error())
	}
}

// String is the counts by kind, as a map prints.
func (e *errTally) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return fmt.Sprint(e.kinds)
}

// logFirst logs the first error of each kind.
func (e *errTally) logFirst(t *testing.T) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, msg := range e.first {
		t.Logf("first of its kind: %s", msg)
	}
}

// errKind is an error's first word (its Redis code, or the Go error's
// start) for the test's summary.
func errKind(err error) string {
	k, _, _ := strings.Cut(err.Error(), " ")
	return k
}

// dropIdle removes the idle time (field 2, it moves with the clock) from
// each XPENDING extended-form entry.
func dropIdle(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, e := range list {
		if f, ok := e.([]any); ok && len(f) == 4 {
			out[i] = []any{f[0], f[1], f[3]}
		} else {
			out[i] = e
		}
	}
	return out
}

// TestClusterModeE2E: with --cluster-enabled yes and three shards (their
// leadership spread over the nodes), go-redis's ClusterClient routes itself
// from CLUSTER SLOTS / MOVED, a plain client gets MOVED for a key led
// elsewhere, and redis-cli -c follows MOVED.
func TestClusterModeE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	nodes := start3Nodes(t, "--cluster-enabled", "yes", "--shards", "3")
	ctx := ctxT(t)
	// Balance spreads the three shards' leadership over the three nodes.
	testutil.Eventually(t, 60*time.Second, 100*time.Millisecond, func() error {
		shards, err := raftShards(nodes[0].port)
		if err != nil {
			return err
		}
		leaders := map[any]bool{}
		for _, sh := range shards {
			leaders[sh["leader"]] = true
		}
		if len(leaders) != 3 {
			return fmt.Errorf("shard leaders %v", shards)
		}
		return nil
	})
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(n.port))
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Protocol: 2, DisableIdentity: true,
		ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { cc.Close() })
	keys := []string{"a", "b", "c", "d", "e", "f", "{user1}.x", "{user1}.y"}
	for i, k := range keys {
		for j := range 3 {
			if err := cc.XAdd(ctx, &redis.XAddArgs{Stream: k, ID: fmt.Sprintf("%d-%d", i+1, j+1), Values: []any{"n", j}}).Err(); err != nil {
				t.Fatalf("ClusterClient XADD %s: %v", k, err)
			}
		}
	}
	for i, k := range keys {
		got, err := cc.XRange(ctx, k, "-", "+").Result()
		if err != nil || len(got) != 3 || got[0].ID != fmt.Sprintf("%d-1", i+1) {
			t.Fatalf("ClusterClient XRANGE %s = %v, %v", k, got, err)
		}
	}
	// CLUSTER SLOTS covers every slot once, each range led by a node.
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	covered := 0
	for _, s := range slots {
		covered += s.End - s.Start + 1
		if len(s.Nodes) != 3 {
			t.Errorf("slot range %d-%d has nodes %v, want a leader and 2 replicas", s.Start, s.End, s.Nodes)
		}
	}
	if covered != 16384 {
		t.Errorf("CLUSTER SLOTS covers %d slots: %v", covered, slots)
	}

	// A plain client on a node that does not lead key's shard gets MOVED.
	slot := keySlot(t, nodes[0].port, "a")
	var other *clusterNode
	shards, err := raftShards(nodes[0].port)
	if err != nil {
		t.Fatal(err)
	}
	leaderID := ""
	for _, sh := range shards {
		r := sh["slots"].([]any)
		if int64(slot) >= r[0].(int64) && int64(slot) <= r[1].(int64) {
			leaderID = sh["leader"].(string)
		}
	}
	var leader *clusterNode
	for _, n := range nodes {
		if n.id == leaderID {
			leader = n
		} else if other == nil {
			other = n
		}
	}
	pc := newClient(t, other.port, 0)
	err = pc.XLen(ctx, "a").Err()
	want := fmt.Sprintf("MOVED %d 127.0.0.1:%d", slot, leader.port)
	if err == nil || err.Error() != want {
		t.Fatalf("plain XLEN a via %s: %v, want %s", other.id, err, want)
	}

	// redis-cli -c follows MOVED.
	cli := testutil.RequireTool(t, "redis-cli")
	out, err := exec.Command(cli, "-c", "-p", strconv.Itoa(other.port), "XLEN", "a").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "3" {
		t.Fatalf("redis-cli -c XLEN a via %s: %q, %v", other.id, out, err)
	}
	out, err = exec.Command(cli, "-c", "-p", strconv.Itoa(other.port), "XADD", "a", "9-1", "n", "x").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "9-1" {
		t.Fatalf("redis-cli -c XADD a via %s: %q, %v", other.id, out, err)
	}
	// CLUSTER NODES names every member, one of them myself.
	nodesText := do(t, pc, "CLUSTER", "NODES").(string)
	masters := 0
	for _, line := range strings.Split(strings.TrimSpace(nodesText), "\n") {
		if f := strings.Fields(line); len(f) >= 9 && strings.Contains(f[2], "master") {
			masters++
		}
	}
	if strings.Count(nodesText, "\n") != 3 || strings.Count(nodesText, "myself") != 1 || masters != 3 {
		t.Errorf("CLUSTER NODES (%d masters):\n%s", masters, nodesText)
	}
	for _, n := range nodes {
		if !strings.Contains(nodesText, n.id+" 127.0.0.1:"+strconv.Itoa(n.port)+"@"+strconv.Itoa(n.raftPort)+" ") {
			t.Errorf("CLUSTER NODES lacks %s:\n%s", n.id, nodesText)
		}
	}
}

// keySlot asks the node for CLUSTER KEYSLOT key.
func keySlot(t *testing.T, port int, key string) int {
	t.Helper()
	c := newClient(t, port, 0)
	n, err := c.ClusterKeySlot(ctxT(t), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}
