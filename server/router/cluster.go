package router

import (
	"strconv"
	"time"

	"streamd/replication"
	"streamd/replication/wire"
	"streamd/server/resp"
)

// Timings are the Raft timings the router waits by (the server reads them
// from its configuration at each use, defaults in place of zeros).
type Timings struct {
	Election, Lease, Quorum time.Duration
	// Heartbeat is raft-heartbeat-timeout: how long a follower keeps a
	// leader it no longer hears from.
	Heartbeat time.Duration
}

// Cluster routes over a node's shards: several shards, other nodes, or
// cluster mode (which checks slots even on one node). A request runs here
// when this node leads its shard, else is forwarded to the leader (plain
// mode) or answered MOVED (cluster mode).
type Cluster struct {
	node        *replication.Node
	clusterMode bool
	timings     func() Timings
	done        <-chan struct{}
	// trunks are the shared connections to other nodes' servers
	// (trunk.go), broken when done closes.
	trunks trunks
}

// NewCluster returns the router of node. clusterMode is cluster-enabled at
// start; timings gives the current Raft timings; done ends every wait
// (the server's shutdown).
func NewCluster(node *replication.Node, clusterMode bool, timings func() Timings, done <-chan struct{}) *Cluster {
	r := &Cluster{node: node, clusterMode: clusterMode, timings: timings, done: done}
	if done != nil {
		go func() {
			<-done
			r.closeTrunks()
		}()
	}
	return r
}

// Route refuses keys in several shards (cluster mode: slots) with
// CROSSSLOT, else routes the first key's shard (RouteShard).
func (r *Cluster) Route(keys [][]byte, internal bool) Route {
	if len(keys) == 0 {
		return Route{Kind: Local, Shard: -1}
	}
	n := r.node.NumShards()
	slot := KeySlot(keys[0])
	shard := replication.ShardOfSlot(slot, n)
	for _, k := range keys[1:] {
		ks := KeySlot(k)
		if (r.clusterMode && ks != slot) || replication.ShardOfSlot(ks, n) != shard {
			return Route{Kind: Refuse, Shard: shard, Slot: slot, Reply: ErrCrossSlot}
		}
	}
	return r.RouteShard(shard, slot, internal)
}

// ForwardsNow reports whether Route would forward a request for keys at
// once: another node leads their (first key's) shard, known now. Unlike
// Route it never waits for a leader (the event loop must not).
func (r *Cluster) ForwardsNow(keys [][]byte) bool {
	if len(keys) == 0 || r.clusterMode || !r.node.Clustered() {
		return false
	}
	shard := replication.ShardOfSlot(KeySlot(keys[0]), r.node.NumShards())
	if r.Leads(shard) {
		return false
	}
	_, addr := r.Leader(shard)
	return addr != "" && addr != r.node.RaftAddr()
}

// RouteShard runs here when this node leads shard (after waiting for a
// leader if none is known: awaitLeader), else answers CLUSTERDOWN (no
// leader), the not-leader error (internal), MOVED (cluster mode), or
// forwards.
func (r *Cluster) RouteShard(shard, slot int, internal bool) Route {
	rt := Route{Kind: Local, Shard: shard, Slot: slot}
	if !r.node.Clustered() || r.Leads(shard) {
		return rt
	}
	addr, local := r.awaitLeader(shard)
	if local {
		return rt
	}
	switch {
	case addr == "":
		rt.Kind, rt.Reply = Refuse, ErrClusterDown
	case internal:
		// An internal connection never forwards again (no loops): the
		// node that sent it retries at the leader.
		rt.Kind, rt.Reply = Refuse, NotLeaderReply(r.Leader(shard))
	case r.clusterMode:
		rt.Kind, rt.Reply = Refuse, r.Moved(slot, addr)
	default:
		rt.Kind, rt.Addr = Forward, addr
	}
	return rt
}

// awaitLeader returns the raft address of shard's leader, waiting up to
// LeaderWait while none is known or while this node has just been elected
// and is still applying the log (local reports that it now serves the
// shard). An election or a leadership transfer then looks like a slow
// reply to the client rather than CLUSTERDOWN; "" after the wait means the
// shard has no leader.
func (r *Cluster) awaitLeader(shard int) (addr string, local bool) {
	var deadline time.Time // set when the first look finds no leader to go to
	for {
		_, addr = r.Leader(shard)
		if addr != "" && addr != r.node.RaftAddr() {
			return addr, false
		}
		if r.Leads(shard) {
			return "", true
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(r.LeaderWait())
		} else if time.Now().After(deadline) {
			if addr == r.node.RaftAddr() {
				addr = "" // elected here but not ready: nobody serves it
			}
			return addr, false
		}
		select {
		case <-r.done:
			return "", false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// RouteAfterDialFailure routes a request for shard again after a dial to
// its leader at gone failed (the leader's process died, or it is cut off):
// it waits for raft to give up on that leader (a follower does when its
// heartbeat timer, re-armed at random between one and two heartbeat
// timeouts, finds no contact for one: at most three heartbeat timeouts
// after the last contact) and then routes as RouteShard does, which waits
// for the new leader as during any election (LeaderWait). The shard's
// leader is polled with a backoff from 5 to 50 ms. ok is false when gone is
// still the leader after the wait: the caller answers the dial failure.
func (r *Cluster) RouteAfterDialFailure(shard, slot int, gone string, internal bool) (rt Route, ok bool) {
	deadline := time.Now().Add(3 * r.timings().Heartbeat)
	pause := 5 * time.Millisecond
	for r.LeaderAddr(shard) == gone && !r.Leads(shard) {
		if time.Now().After(deadline) {
			return Route{}, false
		}
		select {
		case <-r.done:
			return Route{}, false
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
	return r.RouteShard(shard, slot, internal), true
}

// LeaderWait is how long a request waits for its shard to have a leader:
// two election timeouts plus the lease, the time raft needs to replace a
// leader.
func (r *Cluster) LeaderWait() time.Duration {
	t := r.timings()
	return 2*t.Election + t.Lease
}

// ForwardTimeout bounds a forwarded non-blocking request: twice the quorum
// timeout (the leader's own bound on a write or a read barrier) plus a
// second for the round trip.
func (r *Cluster) ForwardTimeout() time.Duration {
	return 2*r.timings().Quorum + time.Second
}

// ShardOf is op's first key's shard (0 without keys or with one shard).
func (r *Cluster) ShardOf(op wire.Op) int {
	if r.node.NumShards() == 1 {
		return 0
	}
	keys := op.Keys()
	if len(keys) == 0 {
		return 0
	}
	return r.node.ShardOfKey(keys[0])
}

// Spread is true with several shards or other nodes.
func (r *Cluster) Spread() bool { return r.node.NumShards() > 1 || r.node.Clustered() }

// ClusterMode reports cluster-enabled (at start).
func (r *Cluster) ClusterMode() bool { return r.clusterMode }

// Leads reports whether this node leads shard and is ready to serve it.
func (r *Cluster) Leads(shard int) bool {
	return !r.node.Clustered() || r.node.Shard(shard).IsLeader()
}

// Leader is shard's leader ("" when unknown or not clustered).
func (r *Cluster) Leader(shard int) (id, raftAddr string) {
	if !r.node.Clustered() {
		return "", ""
	}
	return r.node.Leader(shard)
}

// LeaderAddr is the raft address of shard's leader ("" when unknown).
func (r *Cluster) LeaderAddr(shard int) string {
	_, addr := r.Leader(shard)
	return addr
}

// ReadBarrier is the linearizable read point for shard on a clustered
// node (nothing to wait for on an embedded node).
func (r *Cluster) ReadBarrier(shard int) error {
	if !r.node.Clustered() {
		return nil
	}
	return r.node.ReadBarrier(shard)
}

// Moved is Redis Cluster's redirection: MOVED <slot> <host:port>, the
// client address of the node at raftAddr.
func (r *Cluster) Moved(slot int, raftAddr string) resp.ErrorReply {
	addr, err := r.node.ClientAddrOf(raftAddr)
	if err != nil || addr == "" {
		return resp.ErrorReply("TRYAGAIN the leader of slot " + strconv.Itoa(slot) + " is not reachable: " + errText(err))
	}
	return resp.ErrorReply("MOVED " + strconv.Itoa(slot) + " " + addr)
}

func errText(err error) string {
	if err == nil {
		return "unknown address"
	}
	return err.Error()
}
