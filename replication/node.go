package replication

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"streamd/internal/mux"
)

// NodeOptions configures OpenNode. All cluster fields zero means the
// embedded single node: every shard is a one-voter raft group on an
// in-memory transport, with no network (today's server).
type NodeOptions struct {
	// Dir is the data directory: shard 0 keeps its data in Dir itself (the
	// single-shard layout), shard i > 0 in Dir/shard-<i>; Dir/CLUSTER pins
	// the node id and shard count. "" keeps everything in memory (tests).
	Dir string
	// Shards is the number of raft groups the 16384 slots are split into
	// (0 = 1).
	Shards int
	// Fsync, LogStore, SnapshotThreshold, SnapshotLogSize and Logger are
	// passed to every shard (see Options).
	Fsync             FsyncPolicy
	LogStore          string
	SnapshotThreshold uint64
	SnapshotLogSize   int64
	Logger            *slog.Logger

	// NodeID is this node's raft server id in every shard; "" = the
	// embedded single node (no other cluster field may be set then).
	NodeID string
	// RaftAddr is the host:port of the one raft TCP port, listened on and
	// advertised to peers. Every shard's raft traffic, the node RPCs and
	// forwarded client connections use it; every connection on it first
	// proves it comes from a member (RaftAuth).
	RaftAddr string
	// RaftAuth is how members prove to each other that they belong to the
	// cluster on the raft port (tls-cluster, cluster-secret, or
	// requirepass; see mux.Auth).
	RaftAuth mux.Auth
	// RaftListener, if set, is used instead of listening on RaftAddr
	// (tests bind 127.0.0.1:0 first); RaftAddr "" then advertises its
	// address. The node owns it from the call on: Close closes it, and so
	// does a failed OpenNode.
	RaftListener net.Listener
	// ClientAddr is the client host:port advertised to others (MOVED,
	// CLUSTER SLOTS).
	ClientAddr string
	// Bootstrap makes every shard of a new node (no raft state yet) a
	// cluster with this node as its only voter.
	Bootstrap bool
	// Peers is a static member list (this node included): every node of
	// the list bootstraps every shard with it. Exclusive with Bootstrap.
	// Neither set: the node starts empty and waits to be added (join).
	Peers []Member
	// Timing and QuorumTimeout are passed to every shard (see Options).
	Timing        Timing
	QuorumTimeout time.Duration
	// Balance spreads shard leadership: the preferred leader of shard i is
	// the (i mod voters)-th voter by sorted id, and a leader that is not the
	// preferred one hands leadership over once that voter has caught up. A
	// manual TransferLeader is therefore undone after a while when Balance
	// is on.
	Balance bool
}

// Node is this process's member of the cluster: one Shard per slot range
// (ShardOfSlot), each its own raft group, all sharing one raft port. A
// single-node server is a Node whose shards always lead.
type Node struct {
	shards     []*Shard
	opts       NodeOptions
	log        *slog.Logger
	mux        *mux.Mux            // nil for the embedded single node
	transports []*guardedTransport // per shard (cluster)
	rpcs       rpcPool

	lmu       sync.Mutex // serialises leadership callbacks and their registration
	leaderFns []func(shard int, leader bool)
	leading   []bool // last state reported per shard
	reported  []bool // whether a state was reported yet

	infoMu sync.Mutex
	info   map[string]cachedInfo // raft address → its node's info

	// noHandOver makes Close skip the leadership handover (tests: a
	// crash-like stop).
	noHandOver bool

	// wasMember: the data directory made this node a member when it
	// opened (WasMember).
	wasMember bool

	stop      chan struct{}
	bg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// SingleNode wraps an open shard as a one-shard, one-node Node (tests and
// the embedded default).
func SingleNode(s *Shard) *Node {
	return &Node{shards: []*Shard{s}, log: slog.Default(), leading: make([]bool, 1), reported: make([]bool, 1),
		info: map[string]cachedInfo{}}
}

// NumShards returns the number of shards (raft groups) the keyspace is
// split into.
func (n *Node) NumShards() int { return len(n.shards) }

// Shard returns shard i (0 ≤ i < NumShards).
func (n *Node) Shard(i int) *Shard { return n.shards[i] }

// ShardOfKey returns the shard that owns key's hash slot.
func (n *Node) ShardOfKey(key string) int { return ShardOfSlot(KeySlot(key), len(n.shards)) }

// Clustered reports whether the node runs with a network transport (other
// nodes may lead some shards); false for the embedded single node.
func (n *Node) Clustered() bool { return n.mux != nil }

// ID returns this node's id: its NodeID, or "streamd" (the raft server id
// of the embedded single node).
func (n *Node) ID() string {
	if n.opts.NodeID == "" {
		return "streamd"
	}
	return n.opts.NodeID
}

// RaftAddr returns the advertised raft address ("" for the embedded single
// node).
func (n *Node) RaftAddr() string { return n.opts.RaftAddr }

// ClientAddr returns the advertised client address (NodeOptions.ClientAddr).
func (n *Node) ClientAddr() string { return n.opts.ClientAddr }

// Leader returns the id and raft address of shard i's leader ("" when
// unknown).
func (n *Node) Leader(i int) (id, raftAddr string) { return n.shards[i].Leader() }

// OnLeaderChange registers f, called with (shard, true) when this node
// starts serving shard as its leader and (shard, false) when it stops. At
// registration f is called at once for every shard this node leads. Calls
// are serialised across shards and in order per shard; f must not call
// OnLeaderChange.
func (n *Node) OnLeaderChange(f func(shard int, leader bool)) {
	n.lmu.Lock()
	defer n.lmu.Unlock()
	n.leaderFns = append(n.leaderFns, f)
	for i, s := range n.shards {
		leading := n.leading[i]
		if !n.reported[i] && s != nil {
			leading = s.IsLeader()
		}
		if leading {
			f(i, true)
		}
	}
}

// leaderChanged is shard i's OnLeader callback.
func (n *Node) leaderChanged(i int, leader bool) {
	n.lmu.Lock()
	defer n.lmu.Unlock()
	if n.reported[i] && n.leading[i] == leader {
		return
	}
	n.reported[i], n.leading[i] = true, leader
	if n.Clustered() {
		if leader {
			n.log.Info("leading shard", "shard", i, "node", n.ID())
		} else {
			n.log.Info("no longer leading shard", "shard", i, "node", n.ID())
		}
	}
	for _, f := range n.leaderFns {
		f(i, leader)
	}
}

// Ready returns "" when every shard is open and has a known leader in
// contact (a follower that has not heard from its leader for two election
// timeouts is not ready), else why not (naming the first shard that is not
// ready).
func (n *Node) Ready() string {
	for i, s := range n.shards {
		if s == nil {
			return fmt.Sprintf("shard %d is not open", i)
		}
		if s.Info().Role == "shutdown" {
			return fmt.Sprintf("shard %d is closed", i)
		}
		if id, _ := s.Leader(); id == "" {
			return fmt.Sprintf("shard %d has no leader", i)
		}
		if why := s.LeaderUnreachable(); why != "" {
			return fmt.Sprintf("shard %d: %s", i, why)
		}
	}
	return ""
}

// Close stops the balancer, hands the leadership of the shards led here to
// other voters (cluster), closes every shard (taking a snapshot first if
// save is set), then the raft port. Calling it again returns the first
// result.
func (n *Node) Close(save bool) error {
	n.closeOnce.Do(func() {
		if n.stop != nil {
			close(n.stop)
		}
		n.bg.Wait()
		n.handOver()
		err := n.closeShards(save)
		for _, t := range n.transports {
			if t != nil {
				t.CloseStreams()
			}
		}
		n.rpcs.close()
		if n.mux != nil {
			if merr := n.mux.Close(); merr != nil && !errors.Is(merr, net.ErrClosed) {
				err = errors.Join(err, merr)
			}
		}
		n.closeErr = err
	})
	return n.closeErr
}

// handOverTimeout bounds the leadership handover at Close.
const handOverTimeout = 3 * time.Second

// handOver transfers the leadership of every shard led here to another
// voter before a graceful Close, so that clients wait for a handover
// (milliseconds) rather than for an election timeout. Shards are handed
// over in parallel, each bounded by handOverTimeout; a failure only means
// the others elect a leader the usual way.
func (n *Node) handOver() {
	if !n.Clustered() || n.noHandOver {
		return
	}
	var wg sync.WaitGroup
	for i, s := range n.shards {
		if s == nil || !s.IsLeader() || s.Info().Voters < 2 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan error, 1)
			go func() { done <- s.TransferLeadership("") }()
			select {
			case err := <-done:
				if err != nil {
					n.log.Debug("close: leadership handover failed", "shard", i, "err", err)
				}
			case <-time.After(handOverTimeout):
				n.log.Debug("close: leadership handover timed out", "shard", i)
			}
		}()
	}
	wg.Wait()
}

// closeShards closes the open shards in parallel.
func (n *Node) closeShards(save bool) error {
	errs := make([]error, len(n.shards))
	var wg sync.WaitGroup
	for i, s := range n.shards {
		if s == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Close(save); err != nil {
				errs[i] = n.shardErr(i, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
