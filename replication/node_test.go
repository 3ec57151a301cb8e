package replication

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"streamd/internal/mux"
	"streamd/internal/testutil"
	"streamd/replication/wire"
)

// nodeFastTiming makes elections and failure detection quick on loopback.
var nodeFastTiming = Timing{Heartbeat: 100 * time.Millisecond, Election: 100 * time.Millisecond, LeaderLease: 100 * time.Millisecond}

// tnode is a cluster node under test with what it takes to restart it.
type tnode struct {
	t    *testing.T
	opts NodeOptions
	n    *Node
}

// startTestNode opens a cluster node with its data in dir, listening on addr
// ("" = a fresh loopback port); mod adjusts the options.
func startTestNode(t *testing.T, id, dir, addr string, mod func(*NodeOptions)) *tnode {
	t.Helper()
	if addr == "" {
		addr = fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	}
	o := NodeOptions{
		Dir: dir, NodeID: id, RaftAddr: addr, ClientAddr: "client-of-" + id,
		Timing: nodeFastTiming, QuorumTimeout: 2 * time.Second, Logger: nodeTestLogger(t),
	}
	if mod != nil {
		mod(&o)
	}
	tn := &tnode{t: t, opts: o}
	tn.open()
	t.Cleanup(func() { tn.close() })
	return tn
}

func (tn *tnode) open() {
	tn.t.Helper()
	n, err := OpenNode(tn.opts)
	if err != nil {
		tn.t.Fatalf("open %s: %v", tn.opts.NodeID, err)
	}
	tn.n = n
}

// crash stops the node without handing its leaderships over.
func (tn *tnode) crash() {
	if tn.n != nil {
		tn.n.noHandOver = true
	}
	tn.close()
}

func (tn *tnode) close() {
	if tn.n != nil {
		if err := tn.n.Close(false); err != nil {
			tn.t.Errorf("close %s: %v", tn.opts.NodeID, err)
		}
		tn.n = nil
	}
}

// nodeTestLogger keeps raft's warnings out of the test output unless -v.
func nodeTestLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.Default()
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// nodeKeyOfShard returns a key that lives in shard i of n.
func nodeKeyOfShard(t *testing.T, i, n int) string {
	for k := 0; k < 100000; k++ {
		key := fmt.Sprintf("key%d", k)
		if ShardOfSlot(KeySlot(key), n) == i {
			return key
		}
	}
	t.Fatalf("no key for shard %d of %d", i, n)
	return ""
}

// nodeLeaderOf waits until the live nodes agree on a leader of shard i that
// is ready to serve, and returns it.
func nodeLeaderOf(t *testing.T, i int, nodes ...*tnode) *tnode {
	t.Helper()
	var lead *tnode
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		lead = nil
		for _, tn := range nodes {
			if tn.n != nil && tn.n.Shard(i).IsLeader() {
				lead = tn
			}
		}
		if lead == nil {
			return fmt.Errorf("shard %d: no ready leader", i)
		}
		for _, tn := range nodes {
			if tn.n == nil {
				continue
			}
			if id, _ := tn.n.Leader(i); id != lead.opts.NodeID {
				return fmt.Errorf("shard %d: %s sees leader %q, want %s", i, tn.opts.NodeID, id, lead.opts.NodeID)
			}
		}
		return nil
	})
	return lead
}

// nodeConverged waits until every live node holds the same state of every shard.
func nodeConverged(t *testing.T, nodes ...*tnode) {
	t.Helper()
	testutil.Eventually(t, 15*time.Second, 20*time.Millisecond, func() error {
		for i := 0; i < nodes[0].n.NumShards(); i++ {
			var first [32]byte
			var firstID string
			for _, tn := range nodes {
				if tn.n == nil {
					continue
				}
				_, sum := tn.n.Shard(i).StateHash()
				if firstID == "" {
					first, firstID = sum, tn.opts.NodeID
				} else if sum != first {
					return fmt.Errorf("shard %d: state of %s differs from %s", i, tn.opts.NodeID, firstID)
				}
			}
		}
		return nil
	})
}

// nodeWantVoters waits until every live node sees want as shard i's voters.
func nodeWantVoters(t *testing.T, want string, nodes ...*tnode) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, tn := range nodes {
			for i := 0; i < tn.n.NumShards(); i++ {
				ms, err := tn.n.Shard(i).Members()
				if err != nil {
					return err
				}
				var ids []string
				for _, m := range ms {
					if m.Voter {
						ids = append(ids, m.ID)
					}
				}
				if got := strings.Join(ids, ","); got != want {
					return fmt.Errorf("%s shard %d: voters %s, want %s", tn.opts.NodeID, i, got, want)
				}
			}
		}
		return nil
	})
}

// nodePropose writes on shard i at its leader and returns the entry's index.
func nodePropose(t *testing.T, lead *tnode, i int, key string, fv ...string) uint64 {
	t.Helper()
	p := lead.n.Shard(i).ProposeAsync(xadd(key, fv...))
	if _, err := p.Wait(); err != nil {
		t.Fatalf("xadd %s on %s: %v", key, lead.opts.NodeID, err)
	}
	return p.Index()
}

func nodeXLen(t *testing.T, s *Shard, key string) int64 {
	t.Helper()
	res, err := s.Query(wire.XLen{Base: wire.Base{Key: key}})
	if err != nil {
		t.Fatal(err)
	}
	return res.(int64)
}

// TestNodeJoinReplicateBalance builds a cluster the --join way (bootstrap
// one node, add the others) with two shards over one raft port per node,
// and checks replication, leader spreading, follower reads, WAIT's count
// and the peer info RPC.
func TestNodeJoinReplicateBalance(t *testing.T) {
	bal := func(o *NodeOptions) { o.Shards, o.Balance = 2, true }
	n1 := startTestNode(t, "n1", t.TempDir(), "", func(o *NodeOptions) { bal(o); o.Bootstrap = true })
	n2 := startTestNode(t, "n2", t.TempDir(), "", bal)
	n3 := startTestNode(t, "n3", t.TempDir(), "", bal)
	all := []*tnode{n1, n2, n3}

	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if r := n1.n.Ready(); r != "" {
			return errors.New(r)
		}
		return nil
	})
	if r := n2.n.Ready(); r == "" {
		t.Fatalf("n2 is ready before it joined")
	}
	// Refused joins: wrong id, other shard count, nobody there.
	odd := startTestNode(t, "n4", "", "", nil)
	for _, c := range []struct{ id, addr, want string }{
		{"nX", n2.n.RaftAddr(), "is n2, not nX"},
		{"n4", odd.n.RaftAddr(), "runs 1 shard(s), this cluster 2"},
		{"n5", "127.0.0.1:1", "unreachable"},
	} {
		if err := n1.n.AddNode(c.id, c.addr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("add %s at %s: %v, want %q", c.id, c.addr, err, c.want)
		}
	}
	odd.close()
	for _, tn := range []*tnode{n2, n3} {
		if err := n1.n.AddNode(tn.opts.NodeID, tn.n.RaftAddr()); err != nil {
			t.Fatalf("add %s: %v", tn.opts.NodeID, err)
		}
	}
	// Idempotent, and works from a node that leads nothing yet.
	if err := n2.n.AddNode("n3", n3.n.RaftAddr()); err != nil {
		t.Fatalf("add n3 again (through n2): %v", err)
	}
	nodeWantVoters(t, "n1,n2,n3", all...)
	for _, tn := range all {
		if r := tn.n.Ready(); r != "" {
			t.Fatalf("%s not ready: %s", tn.opts.NodeID, r)
		}
		ms, err := tn.n.Members()
		if err != nil || len(ms) != 3 || ms[0].ID != "n1" || ms[2].RaftAddr != n3.n.RaftAddr() {
			t.Fatalf("%s members = %v, %v", tn.opts.NodeID, ms, err)
		}
	}

	// Balance: shard 0 prefers n1, shard 1 prefers n2.
	testutil.Eventually(t, 20*time.Second, 50*time.Millisecond, func() error {
		id0, _ := n1.n.Leader(0)
		id1, _ := n1.n.Leader(1)
		if id0 != "n1" || id1 != "n2" {
			return fmt.Errorf("leaders %q, %q; want n1, n2", id0, id1)
		}
		return nil
	})

	for i := 0; i < 2; i++ {
		key := nodeKeyOfShard(t, i, 2)
		lead := nodeLeaderOf(t, i, all...)
		var idx uint64
		for j := 0; j < 20; j++ {
			idx = nodePropose(t, lead, i, key, "j", fmt.Sprint(j))
		}
		// A follower's read barrier makes the acknowledged write visible
		// there at once.
		for _, tn := range all {
			if tn == lead {
				continue
			}
			if err := tn.n.ReadBarrier(i); err != nil {
				t.Fatalf("read barrier on %s: %v", tn.opts.NodeID, err)
			}
			if got := nodeXLen(t, tn.n.Shard(i), key); got != 20 {
				t.Fatalf("%s shard %d after read barrier: nodeXLen %d, want 20", tn.opts.NodeID, i, got)
			}
		}
		if err := lead.n.ReadBarrier(i); err != nil {
			t.Fatalf("read barrier on leader: %v", err)
		}
		testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
			if got := lead.n.ReplicasHolding(i, idx); got != 2 {
				return fmt.Errorf("replicas holding %d: %d, want 2", idx, got)
			}
			return nil
		})
		if got := lead.n.ReplicasHolding(i, idx+1000); got != 0 {
			t.Fatalf("replicas holding a future index: %d", got)
		}
	}
	nodeConverged(t, all...)

	for _, from := range all {
		for _, to := range all {
			ca, err := from.n.ClientAddrOf(to.n.RaftAddr())
			if err != nil || ca != "client-of-"+to.opts.NodeID {
				t.Fatalf("%s: client addr of %s = %q, %v", from.opts.NodeID, to.opts.NodeID, ca, err)
			}
			id, err := from.n.NodeIDOf(to.n.RaftAddr())
			if err != nil || id != to.opts.NodeID {
				t.Fatalf("%s: node id of %s = %q, %v", from.opts.NodeID, to.opts.NodeID, id, err)
			}
		}
	}
	if _, err := n1.n.ClientAddrOf("127.0.0.1:1"); err == nil {
		t.Fatal("client addr of a dead address: no error")
	}

	// Kill shard 1's leader (n2): the others elect a new one, reads and
	// writes go on, and WAIT's count drops to the one live replica.
	n2addr := n2.n.RaftAddr()
	n2.crash()
	live := []*tnode{n1, n3}
	key := nodeKeyOfShard(t, 1, 2)
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error { return n1.n.ReadBarrier(1) })
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error { return n3.n.ReadBarrier(1) })
	lead := nodeLeaderOf(t, 1, live...)
	idx := nodePropose(t, lead, 1, key, "after", "failover")
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if got := lead.n.ReplicasHolding(1, idx); got != 1 {
			return fmt.Errorf("replicas holding %d: %d, want 1", idx, got)
		}
		return nil
	})
	for _, tn := range live {
		if err := tn.n.ReadBarrier(1); err != nil {
			t.Fatal(err)
		}
		if got := nodeXLen(t, tn.n.Shard(1), key); got != 21 {
			t.Fatalf("%s after failover: xlen %d, want 21", tn.opts.NodeID, got)
		}
	}
	// A dead member's cached client address is still known.
	if ca, err := n1.n.ClientAddrOf(n2addr); err != nil || ca != "client-of-n2" {
		t.Fatalf("client addr of the dead n2: %q, %v", ca, err)
	}
	nodeConverged(t, live...)
}

// TestNodePeersTransferRestartRemove starts a static-peers cluster, moves a
// leader, restarts a node from its directory (it catches up) and removes a
// node.
func TestNodePeersTransferRestartRemove(t *testing.T) {
	var peers []Member
	addrs := map[string]string{}
	for _, id := range []string{"n1", "n2", "n3"} {
		addrs[id] = fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
		peers = append(peers, Member{ID: id, RaftAddr: addrs[id], Voter: true})
	}
	var all []*tnode
	for _, id := range []string{"n1", "n2", "n3"} {
		all = append(all, startTestNode(t, id, t.TempDir(), addrs[id], func(o *NodeOptions) { o.Shards, o.Peers = 2, peers }))
	}
	n1, n2, n3 := all[0], all[1], all[2]
	var evMu sync.Mutex
	events := map[string][]string{} // node → "shard:leader" in call order
	for _, tn := range all {
		id := tn.opts.NodeID
		tn.n.OnLeaderChange(func(shard int, leader bool) {
			evMu.Lock()
			events[id] = append(events[id], fmt.Sprintf("%d:%v", shard, leader))
			evMu.Unlock()
		})
	}
	// lastEvent is the last report of shard 0 on a node ("" if none).
	lastEvent := func(id string) string {
		evMu.Lock()
		defer evMu.Unlock()
		ev := events[id]
		for i := len(ev) - 1; i >= 0; i-- {
			if strings.HasPrefix(ev[i], "0:") {
				return ev[i]
			}
		}
		return ""
	}
	nodeWantVoters(t, "n1,n2,n3", all...)
	key := nodeKeyOfShard(t, 0, 2)

	// Transfer shard 0 to each node in turn, asked through another node.
	for _, target := range all {
		via := all[(nodeIndexOf(all, target)+1)%3]
		if err := via.n.TransferLeader(0, target.opts.NodeID); err != nil {
			t.Fatalf("transfer shard 0 to %s via %s: %v", target.opts.NodeID, via.opts.NodeID, err)
		}
		if lead := nodeLeaderOf(t, 0, all...); lead != target {
			t.Fatalf("shard 0 led by %s after transfer to %s", lead.opts.NodeID, target.opts.NodeID)
		}
		testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
			for _, tn := range all {
				id, want := tn.opts.NodeID, "0:false"
				if tn == target {
					want = "0:true"
				}
				if got := lastEvent(id); got != want && (got != "" || tn == target) {
					return fmt.Errorf("%s: last leader report %q, want %q", id, got, want)
				}
			}
			return nil
		})
	}
	if err := n1.n.TransferLeader(0, "nobody"); err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Fatalf("transfer to a non-member: %v", err)
	}
	if err := n1.n.TransferLeader(7, "n1"); err == nil {
		t.Fatal("transfer of a missing shard: no error")
	}

	// Restart n2 after a crash: writes made while it is down reach it
	// after restart.
	nodePropose(t, nodeLeaderOf(t, 0, all...), 0, key, "before", "restart")
	n2.crash()
	lead := nodeLeaderOf(t, 0, all...)
	for j := 0; j < 10; j++ {
		nodePropose(t, lead, 0, key, "while", "down")
	}
	n2.open()
	nodeConverged(t, all...)
	if got := nodeXLen(t, n2.n.Shard(0), key); got != 11 {
		t.Fatalf("restarted n2: nodeXLen %d, want 11", got)
	}

	// Remove n3 through n3 itself; the others keep a 2-voter cluster that
	// still takes writes.
	if err := n3.n.RemoveNode("n3"); err != nil {
		t.Fatalf("remove n3: %v", err)
	}
	if err := n1.n.RemoveNode("n3"); err != nil {
		t.Fatalf("remove n3 again: %v", err)
	}
	nodeWantVoters(t, "n1,n2", n1, n2)
	n3.close()
	lead = nodeLeaderOf(t, 0, n1, n2)
	nodePropose(t, lead, 0, key, "after", "remove")
	nodeConverged(t, n1, n2)
	if ms, _ := n1.n.Members(); len(ms) != 2 {
		t.Fatalf("members after remove: %v", ms)
	}
}

func nodeIndexOf(all []*tnode, tn *tnode) int {
	for i, x := range all {
		if x == tn {
			return i
		}
	}
	return -1
}

// TestNodeMuxRESPAndStrayConnections checks that internal RESP connections
// reach the registered handler and that garbage, silence and unknown
// headers on the raft port cost nothing.
func TestNodeMuxRESPAndStrayConnections(t *testing.T) {
	oldWait := leaderWait
	leaderWait = time.Second
	t.Cleanup(mux.SetHandshakeTimeoutForTest(200 * time.Millisecond))
	t.Cleanup(func() { leaderWait = oldWait })
	// n1 runs on a listener made beforehand (its address is advertised).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n1 := startTestNode(t, "n1", "", "", func(o *NodeOptions) { o.Bootstrap, o.RaftAddr, o.RaftListener = true, "", ln })
	if n1.n.RaftAddr() != ln.Addr().String() {
		t.Fatalf("raft addr %q, listener at %s", n1.n.RaftAddr(), ln.Addr())
	}
	n2 := startTestNode(t, "n2", "", "", nil)

	// Before a handler is registered, a RESP connection is closed.
	c, err := n2.n.DialRESP(n1.n.RaftAddr())
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("RESP without a handler: read %v, want EOF", err)
	}
	c.Close()

	n1.n.Mux().HandleDetached(mux.KindRESP, func(c net.Conn) {
		defer c.Close()
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil {
			fmt.Fprintf(c, "+echo %s", line)
		}
	})

	stray := func(payload []byte) net.Conn {
		c, err := net.Dial("tcp", n1.n.RaftAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.Write(payload)
		return c
	}
	silent := stray(nil)
	garbage := stray([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	oldHeader := stray([]byte(mux.Magic + "\x02\x00PING\r\n"))
	halfHello := stray([]byte(mux.Magic + "\x10\x00"))
	for name, c := range map[string]net.Conn{"silent": silent, "garbage": garbage, "old header": oldHeader, "half a hello": halfHello} {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if err == nil || errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s connection: read %v, want it closed by the node", name, err)
		}
	}

	// The port still works: a RESP round trip, a join and a replicated write.
	c, err = n2.n.DialRESP(n1.n.RaftAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "PING\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "+echo PING\r\n" {
		t.Fatalf("RESP round trip: %q, %v", line, err)
	}
	nodeLeaderOf(t, 0, n1)
	// A node that has not joined knows no leader: no read point, not
	// ready, and it cannot add itself.
	if r := n2.n.Ready(); r != "shard 0 has no leader" {
		t.Fatalf("unjoined node ready: %q", r)
	}
	if err := n2.n.ReadBarrier(0); err == nil || !strings.HasPrefix(err.Error(), "CLUSTERDOWN") {
		t.Fatalf("read barrier on an unjoined node: %v", err)
	}
	start := time.Now()
	if err := n2.n.AddNode("n2", n2.n.RaftAddr()); err == nil || !strings.HasPrefix(err.Error(), "CLUSTERDOWN") {
		t.Fatalf("join through the joining node: %v", err)
	} else if d := time.Since(start); d < leaderWait || d > leaderWait+5*time.Second {
		t.Fatalf("join through the joining node gave up after %v, want ~%v", d, leaderWait)
	}
	if err := n1.n.AddNode("n2", n2.n.RaftAddr()); err != nil {
		t.Fatalf("join through n1: %v", err)
	}
	nodeWantVoters(t, "n1,n2", n1, n2)
	nodePropose(t, nodeLeaderOf(t, 0, n1, n2), 0, "s", "f", "v")
	nodeConverged(t, n1, n2)
	if _, err := n1.n.DialRESP("127.0.0.1:1"); err == nil {
		t.Fatal("DialRESP to a dead address: no error")
	}
}

// TestNodeClusterFile checks that a data directory is pinned to its node id
// and shard count, including one written before the CLUSTER file existed.
func TestNodeClusterFile(t *testing.T) {
	dir := t.TempDir()
	open := func(o NodeOptions) (*Node, error) {
		o.Dir, o.Logger = dir, nodeTestLogger(t)
		return OpenNode(o)
	}
	// Old single-node data (no CLUSTER file): it is one shard.
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Propose(xadd("s", "f", "v")); err != nil {
		t.Fatal(err)
	}
	s.Close(false)
	if _, err := open(NodeOptions{Shards: 2}); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "CLUSTER")) ||
		!strings.Contains(err.Error(), "1 shard(s), not 2") {
		t.Fatalf("old data opened with 2 shards: %v", err)
	}
	n, err := open(NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := nodeXLen(t, n.Shard(0), "s"); got != 1 || n.Clustered() || n.ID() != "streamd" || n.Ready() != "" {
		t.Fatalf("reopened single node: nodeXLen %d, clustered %v, id %q, ready %q", got, n.Clustered(), n.ID(), n.Ready())
	}
	if err := n.ReadBarrier(0); err != nil || n.ReplicasHolding(0, 1) != 0 {
		t.Fatalf("single node: read barrier %v", err)
	}
	n.Close(false)
	b, err := os.ReadFile(filepath.Join(dir, "CLUSTER"))
	if err != nil || !strings.Contains(string(b), "shards 1\n") {
		t.Fatalf("CLUSTER file: %q, %v", b, err)
	}
	_, err = open(NodeOptions{NodeID: "n1", RaftAddr: fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)), Bootstrap: true})
	if err == nil || !strings.Contains(err.Error(), `a single (non-cluster) node, not node-id "n1"`) {
		t.Fatalf("single-node data opened as n1: %v", err)
	}

	// A multi-shard single node: shard i > 0 in dir/shard-<i>.
	dir = t.TempDir()
	n, err = open(NodeOptions{Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if !n.Shard(i).IsLeader() {
			t.Fatalf("single node shard %d does not lead", i)
		}
		if _, err := n.Shard(i).Propose(xadd(nodeKeyOfShard(t, i, 3), "f", "v")); err != nil {
			t.Fatal(err)
		}
	}
	var replayed []string
	n.OnLeaderChange(func(shard int, leader bool) { replayed = append(replayed, fmt.Sprintf("%d:%v", shard, leader)) })
	if got := strings.Join(replayed, " "); got != "0:true 1:true 2:true" {
		t.Fatalf("leader reports at registration: %q", got)
	}
	n.Close(true)
	if got := strings.Join(replayed, " "); !strings.HasPrefix(got, "0:true 1:true 2:true ") || strings.Count(got, "false") != 3 {
		t.Fatalf("leader reports after close: %q", got)
	}
	for _, sub := range []string{"shard-1", "shard-2"} {
		if _, err := os.Stat(filepath.Join(dir, sub, "snapshots")); err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
	}
	if _, err := open(NodeOptions{Shards: 2}); err == nil || !strings.Contains(err.Error(), "3 shard(s), not 2") {
		t.Fatalf("3-shard data opened with 2: %v", err)
	}
	n, err = open(NodeOptions{Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if got := nodeXLen(t, n.Shard(i), nodeKeyOfShard(t, i, 3)); got != 1 {
			t.Fatalf("shard %d after reopen: nodeXLen %d", i, got)
		}
	}
	n.Close(false)

	// A cluster node's directory refuses another id.
	dir = t.TempDir()
	n, err = open(NodeOptions{NodeID: "n1", RaftAddr: fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)), Bootstrap: true})
	if err != nil {
		t.Fatal(err)
	}
	n.Close(false)
	if _, err := open(NodeOptions{NodeID: "n2", RaftAddr: fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)), Bootstrap: true}); err == nil ||
		!strings.Contains(err.Error(), `belongs to node-id "n1", not node-id "n2"`) {
		t.Fatalf("n1's data opened as n2: %v", err)
	}
}

// TestNodeOptionsRefused checks the option combinations OpenNode refuses,
// and that the error says why.
func TestNodeOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		o          NodeOptions
	}{
		{"raft addr without id", "need a node id", NodeOptions{RaftAddr: "127.0.0.1:7001"}},
		{"bootstrap and peers", "exclusive", NodeOptions{NodeID: "n1", RaftAddr: "127.0.0.1:7001", Bootstrap: true,
			Peers: []Member{{ID: "n1", RaftAddr: "127.0.0.1:7001"}}}},
		{"peers without self", "must include this node", NodeOptions{NodeID: "n1", RaftAddr: "127.0.0.1:7001",
			Peers: []Member{{ID: "n2", RaftAddr: "127.0.0.1:7002"}}}},
		{"peer at another addr", "listed at 127.0.0.1:7003", NodeOptions{NodeID: "n1", RaftAddr: "127.0.0.1:7001",
			Peers: []Member{{ID: "n1", RaftAddr: "127.0.0.1:7003"}}}},
		{"no raft addr", "needs a raft address", NodeOptions{NodeID: "n1"}},
		{"wildcard raft addr", "concrete host", NodeOptions{NodeID: "n1", RaftAddr: "0.0.0.0:7001", Bootstrap: true}},
		{"no raft host", "concrete host", NodeOptions{NodeID: "n1", RaftAddr: ":7001", Bootstrap: true}},
		{"raft port 0", "concrete host", NodeOptions{NodeID: "n1", RaftAddr: "127.0.0.1:0", Bootstrap: true}},
		{"space in id", "spaces", NodeOptions{NodeID: "n 1", RaftAddr: "127.0.0.1:7001"}},
		{"negative shards", "shards must be", NodeOptions{Shards: -1}},
	} {
		n, err := OpenNode(tc.o)
		if err == nil {
			n.Close(false)
			t.Errorf("%s: opened", tc.name)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}
