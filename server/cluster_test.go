package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/config"
	"streamd/internal/mux"
	"streamd/internal/testutil"
	"streamd/replication"
	"streamd/server/router"
)

// In-process clusters: three Nodes on loopback (raft over TCP through each
// node's mux), each with a Server on its own client port.

// clusterFastTiming makes elections quick on loopback.
var clusterFastTiming = replication.Timing{Heartbeat: 100 * time.Millisecond,
	Election: 100 * time.Millisecond, LeaderLease: 100 * time.Millisecond}

// cnode is one member of a test cluster.
type cnode struct {
	id   string
	node *replication.Node
	srv  *Server
	addr string // client address
}

// startCluster starts n nodes with shards shards each: the first
// bootstraps, the others are added (AddNode); every server has cluster mode
// set to clusterMode. It returns once every node knows every shard's leader.
func startCluster(t *testing.T, n, shards int, clusterMode bool) []*cnode {
	t.Helper()
	return startClusterWith(t, n, shards, clusterMode, nil)
}

// startClusterWith is startCluster with mod (when set) changing node i's
// configuration before its server starts.
func startClusterWith(t *testing.T, n, shards int, clusterMode bool, mod func(i int, cfg *config.Config)) []*cnode {
	t.Helper()
	nodes := make([]*cnode, n)
	for i := range nodes {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("n%d", i+1)
		node, err := replication.OpenNode(replication.NodeOptions{
			Dir: t.TempDir(), Shards: shards, NodeID: id, RaftListener: rln, RaftAddr: rln.Addr().String(),
			ClientAddr: ln.Addr().String(), Bootstrap: i == 0, Timing: clusterFastTiming,
			QuorumTimeout: 2 * time.Second, Logger: pquietLog(),
		})
		if err != nil {
			t.Fatalf("open %s: %v", id, err)
		}
		cfg := config.Default()
		cfg.ClusterEnabled = clusterMode
		if mod != nil {
			mod(i, &cfg)
		}
		srv := NewNode(cfg, node, pquietLog())
		node.Mux().HandleDetached(mux.KindRESP, srv.ServeInternal)
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ln) }()
		cn := &cnode{id: id, node: node, srv: srv, addr: ln.Addr().String()}
		nodes[i] = cn
		t.Cleanup(func() {
			srv.Close()
			<-done
			node.Close(false)
		})
	}
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if why := nodes[0].node.Ready(); why != "" {
			return errors.New(why)
		}
		return nil
	})
	for _, cn := range nodes[1:] {
		// AddNode is idempotent: on a busy machine leadership can move
		// while the configuration change commits (outcome unknown, or
		// not the leader any more); ask again until it is in.
		testutil.Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
			if err := nodes[0].node.AddNode(cn.id, cn.node.RaftAddr()); err != nil {
				return fmt.Errorf("add %s: %v", cn.id, err)
			}
			return nil
		})
	}
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, cn := range nodes {
			if why := cn.node.Ready(); why != "" {
				return fmt.Errorf("%s: %s", cn.id, why)
			}
			for i := range shards {
				if id, _ := cn.node.Leader(i); id != leaderOf(nodes, i).id {
					return fmt.Errorf("%s sees leader %q of shard %d", cn.id, id, i)
				}
			}
		}
		return nil
	})
	return nodes
}

// leaderOf returns the node that leads shard i (nil if none is ready).
func leaderOf(nodes []*cnode, i int) *cnode {
	for _, cn := range nodes {
		if cn.node.Shard(i).IsLeader() {
			return cn
		}
	}
	return &cnode{}
}

// followersOf returns the nodes that do not lead shard i.
func followersOf(nodes []*cnode, i int) []*cnode {
	var out []*cnode
	for _, cn := range nodes {
		if !cn.node.Shard(i).IsLeader() {
			out = append(out, cn)
		}
	}
	return out
}

// TestClusterForwardPlainClient: a plain go-redis client on a follower
// works as on the leader: writes, reads, a pipeline, MULTI/EXEC, WATCH, and
// a blocked XREADGROUP woken by an XADD sent to the other follower.
func TestClusterForwardPlainClient(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	ctx := context.Background()
	fs := followersOf(nodes, 0)
	f, other := newGoRedis(t, fs[0].addr, 2), newGoRedis(t, fs[1].addr, 3)

	id, err := f.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []string{"f", "v"}}).Result()
	must(t, "XADD via follower", err)
	wantEq(t, "XADD id", id, "1-1")
	// WAIT goes where the write went: both other voters hold it.
	nw, err := f.Do(ctx, "WAIT", 2, 5000).Int64()
	must(t, "WAIT via follower", err)
	wantEq(t, "WAIT", nw, int64(2))
	got, err := other.XRange(ctx, "s", "-", "+").Result()
	must(t, "XRANGE via the other follower", err)
	wantEq(t, "XRANGE", msgs(got), []string{"1-1:f=v"})

	// A pipeline through the follower: replies in order.
	cmds, err := f.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 2; i <= 20; i++ {
			p.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: fmt.Sprintf("%d-1", i), Values: []string{"n", fmt.Sprint(i)}})
		}
		p.XLen(ctx, "s")
		return nil
	})
	must(t, "pipeline", err)
	wantEq(t, "pipelined XLEN", cmds[len(cmds)-1].(*redis.IntCmd).Val(), int64(20))

	// A transaction through the follower runs at the leader.
	txc, err := f.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "21-1", Values: []string{"f", "v"}})
		p.XLen(ctx, "s")
		return nil
	})
	must(t, "MULTI/EXEC", err)
	wantEq(t, "EXEC XLEN", txc[1].(*redis.IntCmd).Val(), int64(21))

	// WATCH through the follower: a write by another client aborts EXEC.
	err = f.Watch(ctx, func(tx *redis.Tx) error {
		if _, err := other.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "22-1", Values: []string{"f", "v"}}).Result(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.XLen(ctx, "s")
			return nil
		})
		return err
	}, "s")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("WATCH then a foreign write: EXEC %v, want %v", err, redis.TxFailedErr)
	}

	// A blocked XREADGROUP on a follower is woken by an XADD through the
	// other follower.
	must(t, "XGROUP CREATE", f.XGroupCreateMkStream(ctx, "q", "g", "$").Err())
	res := make(chan []redis.XStream, 1)
	errs := make(chan error, 1)
	go func() {
		r, err := f.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"q", ">"},
			Block: 10 * time.Second}).Result()
		if err != nil {
			errs <- err
			return
		}
		res <- r
	}()
	lead := leaderOf(nodes, 0)
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := lead.srv.stats.BlockedClients.Load(); n != 1 {
			return fmt.Errorf("%d clients blocked on the leader", n)
		}
		return nil
	})
	must(t, "XADD q", other.XAdd(ctx, &redis.XAddArgs{Stream: "q", ID: "5-5", Values: []string{"a", "b"}}).Err())
	select {
	case r := <-res:
		wantEq(t, "woken XREADGROUP", msgs(r[0].Messages), []string{"5-5:a=b"})
	case err := <-errs:
		t.Fatalf("XREADGROUP: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("blocked XREADGROUP not woken")
	}
	// The group state is the leader's: the entry is pending for c.
	p, err := other.XPending(ctx, "q", "g").Result()
	must(t, "XPENDING", err)
	wantEq(t, "pending", p.Count, int64(1))
}

// TestClusterMovedAndCrossSlot: in cluster mode a follower answers MOVED
// with the leader's client address; keys in different slots answer
// CROSSSLOT.
func TestClusterMovedAndCrossSlot(t *testing.T) {
	nodes := startCluster(t, 3, 1, true)
	ctx := context.Background()
	lead := leaderOf(nodes, 0)
	f := newGoRedis(t, followersOf(nodes, 0)[0].addr, 2)
	err := f.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Err()
	want := fmt.Sprintf("MOVED %d %s", replication.KeySlot("s"), lead.addr)
	if err == nil || err.Error() != want {
		t.Fatalf("XADD on a follower in cluster mode: %v, want %s", err, want)
	}
	l := newGoRedis(t, lead.addr, 2)
	must(t, "XADD on the leader", l.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Err())
	err = l.Del(ctx, "a", "b").Err()
	if err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT Keys in request don't hash to the same slot") {
		t.Fatalf("DEL a b in cluster mode: %v", err)
	}
	must(t, "DEL with one hashtag", l.Del(ctx, "{a}1", "{a}2").Err())
}

// TestClusterUnblockedOnTransfer: a client blocked in XREADGROUP on the
// leader gets Redis's failover UNBLOCKED error when leadership moves away,
// and the group continues on the new leader.
func TestClusterUnblockedOnTransfer(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	ctx := context.Background()
	lead := leaderOf(nodes, 0)
	l := newGoRedis(t, lead.addr, 2)
	must(t, "XGROUP CREATE", l.XGroupCreateMkStream(ctx, "q", "g", "$").Err())
	errs := make(chan error, 1)
	go func() {
		errs <- l.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"q", ">"},
			Block: 0}).Err()
	}()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := lead.srv.stats.BlockedClients.Load(); n != 1 {
			return fmt.Errorf("%d clients blocked", n)
		}
		return nil
	})
	to := followersOf(nodes, 0)[0]
	must(t, "transfer", lead.node.TransferLeader(0, to.id))
	select {
	case err := <-errs:
		if err == nil || err.Error() != string(router.ErrFailoverUnblocked) {
			t.Fatalf("blocked XREADGROUP after transfer: %v, want %s", err, router.ErrFailoverUnblocked)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocked XREADGROUP not released by the leadership transfer")
	}
	// The former leader now forwards: the group works through it.
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		return l.XAdd(ctx, &redis.XAddArgs{Stream: "q", ID: "7-7", Values: []string{"a", "b"}}).Err()
	})
	r, err := l.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"q", ">"},
		Block: time.Second}).Result()
	must(t, "XREADGROUP after transfer", err)
	wantEq(t, "delivered", msgs(r[0].Messages), []string{"7-7:a=b"})
}

// TestClusterShardsFanout: with two shards led by different nodes, a node
// that leads neither forwards keyed commands to each leader, answers
// CROSSSLOT across shards, and fans DBSIZE/KEYS/FLUSHALL out.
func TestClusterShardsFanout(t *testing.T) {
	nodes := startCluster(t, 3, 2, false)
	ctx := context.Background()
	// Spread: shard 1 to another node, so n3 leads nothing.
	must(t, "transfer shard 1", nodes[0].node.TransferLeader(1, nodes[1].id))
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, cn := range nodes {
			if id, _ := cn.node.Leader(1); id != nodes[1].id {
				return fmt.Errorf("%s sees %q leading shard 1", cn.id, id)
			}
		}
		if !nodes[1].node.Shard(1).IsLeader() {
			return errors.New("n2 not ready")
		}
		return nil
	})
	keys := keysOfShards(2)
	c := newGoRedis(t, nodes[2].addr, 2)
	for _, k := range keys {
		must(t, "XADD "+k, c.XAdd(ctx, &redis.XAddArgs{Stream: k, ID: "1-1", Values: []string{"f", "v"}}).Err())
	}
	n, err := c.DBSize(ctx).Result()
	must(t, "DBSIZE", err)
	wantEq(t, "DBSIZE", n, int64(2))
	ks, err := c.Keys(ctx, "*").Result()
	must(t, "KEYS", err)
	wantEq(t, "KEYS count", len(ks), 2)
	err = c.Exists(ctx, keys[0], keys[1]).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT") {
		t.Fatalf("EXISTS across shards: %v", err)
	}
	must(t, "FLUSHALL", c.FlushAll(ctx).Err())
	for i, k := range keys {
		l := newGoRedis(t, leaderOf(nodes, i).addr, 2)
		n, err := l.Exists(ctx, k).Result()
		must(t, "EXISTS on the leader", err)
		wantEq(t, "after FLUSHALL "+k, n, int64(0))
	}
}

// TestClusterWatchAbortsAfterTransfer: a key WATCHed at the shard's leader
// and modified at the new leader after a transfer makes the EXEC sent to
// the former leader abort (writes applied there as a follower never mark
// its watchers dirty, so the move itself must).
func TestClusterWatchAbortsAfterTransfer(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	ctx := context.Background()
	lead := leaderOf(nodes, 0)
	to := followersOf(nodes, 0)[0]
	w := newGoRedis(t, lead.addr, 2)
	must(t, "XADD", w.XAdd(ctx, &redis.XAddArgs{Stream: "k", ID: "1-1", Values: []string{"f", "v"}}).Err())
	must(t, "WATCH", w.Watch(ctx, func(tx *redis.Tx) error {
		must(t, "transfer", lead.node.TransferLeader(0, to.id))
		other := newGoRedis(t, to.addr, 2)
		testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
			return other.XAdd(ctx, &redis.XAddArgs{Stream: "k", ID: "2-2", Values: []string{"f", "w"}}).Err()
		})
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.XAdd(ctx, &redis.XAddArgs{Stream: "k", ID: "3-3", Values: []string{"f", "x"}})
			return nil
		})
		if err != redis.TxFailedErr {
			t.Errorf("EXEC after the watched key changed at the new leader: %v, want %v", err, redis.TxFailedErr)
		}
		return nil
	}, "k"))
	n, err := newGoRedis(t, to.addr, 2).XLen(ctx, "k").Result()
	must(t, "XLEN", err)
	if n != 2 {
		t.Fatalf("XLEN = %d, want 2 (the aborted EXEC added nothing)", n)
	}
}
