package replication

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"streamd/internal/testutil"
	"streamd/replication/wire"
)

// testCluster is an in-process cluster of shards joined by raft's
// in-memory transports: one Raft group, one shard per node, each with its
// own data directory. Tests kill, restart, partition and grow it, and end
// with converge (every live replica holds the same state).
type testCluster struct {
	t     *testing.T
	nodes []*testNode
	opts  func(*Options)
}

// testNode is one member of a testCluster.
type testNode struct {
	id    string
	addr  raft.ServerAddress
	dir   string
	trans *raft.InmemTransport
	shard *Shard
	alive bool
}

// testTiming is fast raft timing for in-process clusters: a dead leader is
// noticed within 150-300ms. Not faster: under -race on two busy cores a
// 50ms lease loses leadership to scheduling stalls, and raft bounds a
// leadership transfer by Election.
var testTiming = Timing{Heartbeat: 150 * time.Millisecond, Election: 300 * time.Millisecond, LeaderLease: 150 * time.Millisecond}

// newTestCluster starts n voters "n1".."nN" (data in t.TempDir(), fast
// Timing, in-memory transports all connected), bootstrapped together, and
// waits for a leader. opts, if set, adjusts each node's Options before it
// opens (also on restart and addNode). t.Cleanup closes every live node.
func newTestCluster(t *testing.T, n int, opts func(*Options)) *testCluster {
	t.Helper()
	c := &testCluster{t: t, opts: opts}
	var members []Member
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("n%d", i)
		addr, trans := raft.NewInmemTransport(raft.ServerAddress(id))
		c.nodes = append(c.nodes, &testNode{id: id, addr: addr, dir: t.TempDir(), trans: trans})
		members = append(members, Member{ID: id, RaftAddr: string(addr), Voter: true})
	}
	c.connectAll()
	t.Cleanup(c.closeAll)
	for _, nd := range c.nodes {
		c.open(nd, members)
	}
	c.leader()
	return c
}

// options returns the Options node nd opens with.
func (c *testCluster) options(nd *testNode, bootstrap []Member) Options {
	o := Options{
		Dir:       nd.dir,
		NodeID:    nd.id,
		Transport: nd.trans,
		Bootstrap: bootstrap,
		Timing:    testTiming,
		Logger:    slog.New(slog.NewTextHandler(testLogWriter{c.t, nd.id}, &slog.HandlerOptions{Level: slog.LevelError})),
	}
	if c.opts != nil {
		c.opts(&o)
	}
	return o
}

// open opens nd's shard and marks it alive.
func (c *testCluster) open(nd *testNode, bootstrap []Member) {
	c.t.Helper()
	s, err := Open(c.options(nd, bootstrap))
	if err != nil {
		c.t.Fatalf("open %s: %v", nd.id, err)
	}
	nd.shard, nd.alive = s, true
}

// connectAll connects every pair of live-or-new nodes' transports (both
// directions).
func (c *testCluster) connectAll() {
	for _, a := range c.nodes {
		for _, b := range c.nodes {
			if a != b {
				a.trans.Connect(b.addr, b.trans)
			}
		}
	}
}

// closeAll closes every live node (test cleanup).
func (c *testCluster) closeAll() {
	for _, nd := range c.nodes {
		if nd.alive {
			nd.alive = false
			nd.trans.DisconnectAll()
			if err := nd.shard.Close(false); err != nil {
				c.t.Errorf("close %s: %v", nd.id, err)
			}
		}
	}
}

// alive returns the live nodes.
func (c *testCluster) alive() []*testNode {
	var out []*testNode
	for _, nd := range c.nodes {
		if nd.alive {
			out = append(out, nd)
		}
	}
	return out
}

// node returns the node with the given id (nil if none).
func (c *testCluster) node(id string) *testNode {
	for _, nd := range c.nodes {
		if nd.id == id {
			return nd
		}
	}
	return nil
}

// leader waits (10s) until exactly one live node reports IsLeader and
// returns it.
func (c *testCluster) leader() *testNode {
	c.t.Helper()
	var l *testNode
	testutil.Eventually(c.t, 10*time.Second, 5*time.Millisecond, func() error {
		var leaders []string
		l = nil
		for _, nd := range c.alive() {
			if nd.shard.IsLeader() {
				leaders = append(leaders, nd.id)
				l = nd
			}
		}
		if len(leaders) != 1 {
			return fmt.Errorf("want exactly one leader among live nodes, have %v", leaders)
		}
		return nil
	})
	return l
}

// followers returns the live nodes other than the current leader.
func (c *testCluster) followers() []*testNode {
	c.t.Helper()
	l := c.leader()
	var out []*testNode
	for _, nd := range c.alive() {
		if nd != l {
			out = append(out, nd)
		}
	}
	return out
}

// kill crashes nd: its shard closes without a snapshot and its transport
// is cut from everyone.
func (c *testCluster) kill(nd *testNode) {
	c.t.Helper()
	if !nd.alive {
		c.t.Fatalf("kill %s: not alive", nd.id)
	}
	nd.alive = false
	nd.trans.DisconnectAll()
	for _, o := range c.nodes {
		if o != nd {
			o.trans.Disconnect(nd.addr)
		}
	}
	if err := nd.shard.Close(false); err != nil {
		c.t.Logf("kill %s: close: %v", nd.id, err)
	}
}

// restart reopens a killed node from its directory with a fresh transport
// connected (both directions) to the live nodes.
func (c *testCluster) restart(nd *testNode) {
	c.t.Helper()
	if nd.alive {
		c.t.Fatalf("restart %s: still alive", nd.id)
	}
	nd.addr, nd.trans = raft.NewInmemTransport(nd.addr)
	for _, o := range c.alive() {
		nd.trans.Connect(o.addr, o.trans)
		o.trans.Connect(nd.addr, nd.trans)
	}
	c.open(nd, nil)
}

// partition cuts every link between side and the other nodes (both
// directions); links within each side stay.
func (c *testCluster) partition(side []*testNode) {
	in := map[*testNode]bool{}
	for _, nd := range side {
		in[nd] = true
	}
	for _, a := range c.nodes {
		for _, b := range c.nodes {
			if in[a] != in[b] {
				a.trans.Disconnect(b.addr)
			}
		}
	}
}

// heal reconnects every pair of live nodes.
func (c *testCluster) heal() {
	for _, a := range c.alive() {
		for _, b := range c.alive() {
			if a != b {
				a.trans.Connect(b.addr, b.trans)
			}
		}
	}
}

// addNode starts a new empty node (no bootstrap: it waits to be added),
// connected to every live node; the caller adds it with AddVoter.
func (c *testCluster) addNode() *testNode {
	c.t.Helper()
	id := fmt.Sprintf("n%d", len(c.nodes)+1)
	addr, trans := raft.NewInmemTransport(raft.ServerAddress(id))
	nd := &testNode{id: id, addr: addr, dir: c.t.TempDir(), trans: trans}
	for _, o := range c.alive() {
		nd.trans.Connect(o.addr, o.trans)
		o.trans.Connect(nd.addr, nd.trans)
	}
	c.nodes = append(c.nodes, nd)
	c.open(nd, nil)
	return nd
}

// converge waits (20s) until every live node has applied the same index and
// holds the same state (equal StateHash sums); it fails the test with each
// node's view otherwise.
func (c *testCluster) converge() {
	c.t.Helper()
	testutil.Eventually(c.t, 20*time.Second, 10*time.Millisecond, func() error {
		var (
			first    [32]byte
			firstIdx uint64
			views    []string
			differ   bool
		)
		for i, nd := range c.alive() {
			idx, sum := nd.shard.StateHash()
			info := nd.shard.Info()
			views = append(views, fmt.Sprintf("%s: applied %d hash %x (%s, commit %d, raft applied %d)",
				nd.id, idx, sum[:6], info.Role, info.CommitIndex, info.AppliedIndex))
			if i == 0 {
				first, firstIdx = sum, idx
			} else if sum != first || idx != firstIdx {
				differ = true
			}
		}
		if differ {
			return fmt.Errorf("replicas differ:\n%s", strings.Join(views, "\n"))
		}
		return nil
	})
}

// proposeHealed proposes cmd on the leader of a cluster just healed from a
// partition until it is acknowledged (within 20 s). Right after the heal
// the leader's replicators may still be backing off from the failures of
// the partition, so a first write may miss a short quorum timeout (outcome
// unknown) or meet a leader that is stepping down; retrying may apply cmd
// more than once, which the callers (an "after" marker) allow.
func (c *testCluster) proposeHealed(cmd wire.Command) {
	c.t.Helper()
	testutil.Eventually(c.t, 20*time.Second, 10*time.Millisecond, func() error {
		_, err := c.leader().shard.Propose(cmd)
		return err
	})
}

// testLogWriter sends a node's log lines to the test log.
type testLogWriter struct {
	t  *testing.T
	id string
}

// Write logs one record.
func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s: %s", w.id, bytes.TrimSpace(p))
	return len(p), nil
}
