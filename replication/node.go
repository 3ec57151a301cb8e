package replication

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
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
	// Fsync, LogStore, SnapshotThreshold and Logger are passed to every
	// shard (see Options).
	Fsync             FsyncPolicy
	LogStore          string
	SnapshotThreshold uint64
	Logger            *slog.Logger

	// NodeID is this node's raft server id in every shard; "" = the
	// embedded single node (no other cluster field may be set then).
	NodeID string
	// RaftAddr is the host:port of the one raft TCP port, listened on and
	// advertised to peers. Every shard's raft traffic, the node RPCs and
	// forwarded client connections use it. The port is trusted —
	// connections on it skip AUTH — so never expose it outside the
	// cluster's network.
	RaftAddr string
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
	mux        *mux                     // nil for the embedded single node
	transports []*raft.NetworkTransport // per shard (cluster)
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

	stop      chan struct{}
	bg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// cachedInfo is a peer's answer to the info RPC.
type cachedInfo struct {
	id, clientAddr string
	at             time.Time
}

// infoTTL is how long a peer's info is trusted before asking again.
const infoTTL = 30 * time.Second

// leaderWait bounds how long membership calls wait for a shard to have a
// leader that answers.
var leaderWait = 10 * time.Second

// readBarrierTimeout bounds ReadBarrier.
const readBarrierTimeout = 5 * time.Second

// SingleNode wraps an open shard as a one-shard, one-node Node (tests and
// the embedded default).
func SingleNode(s *Shard) *Node {
	return &Node{shards: []*Shard{s}, log: slog.Default(), leading: make([]bool, 1), reported: make([]bool, 1),
		info: map[string]cachedInfo{}}
}

// OpenNode opens every shard of this node. Without NodeID it is the
// embedded single node: each shard opens as Open does today (and OpenNode
// returns once each leads). With NodeID it listens on the raft port and
// starts each shard's raft group on it — bootstrapping a new cluster
// (Bootstrap, Peers) or waiting to be added (neither) — and returns without
// waiting for leaders (see Ready). A data directory whose CLUSTER file
// names another node id or shard count is refused.
func OpenNode(o NodeOptions) (_ *Node, err error) {
	if o.RaftListener != nil {
		defer func() {
			if err != nil {
				o.RaftListener.Close() // idempotent when the mux closed it
			}
		}()
	}
	if o.Shards == 0 {
		o.Shards = 1
	}
	if o.Shards < 0 || o.Shards > SlotCount {
		return nil, fmt.Errorf("shards must be between 1 and %d, not %d", SlotCount, o.Shards)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	clustered := o.NodeID != ""
	if err := checkNodeOptions(&o); err != nil {
		return nil, err
	}
	if o.Dir != "" {
		if err := checkNodeMeta(o.Dir, nodeMeta{NodeID: o.NodeID, Shards: o.Shards}); err != nil {
			return nil, err
		}
	}
	n := &Node{
		opts: o, log: o.Logger, shards: make([]*Shard, o.Shards),
		leading: make([]bool, o.Shards), reported: make([]bool, o.Shards),
		info: map[string]cachedInfo{}, stop: make(chan struct{}),
	}
	defer func() {
		if err != nil {
			n.closeShards(false)
			// Raft's shutdown closes an open shard's transport; a shard
			// that failed to open leaves its own to close here.
			for i, t := range n.transports {
				if t != nil && n.shards[i] == nil {
					t.Close()
				}
			}
			if n.mux != nil {
				n.mux.close()
			}
		}
	}()
	var bootstrap []Member
	if clustered {
		ln := o.RaftListener
		if ln == nil {
			if ln, err = net.Listen("tcp", o.RaftAddr); err != nil {
				return nil, fmt.Errorf("raft port: %w", err)
			}
		}
		if o.RaftAddr == "" {
			o.RaftAddr = ln.Addr().String()
			n.opts.RaftAddr = o.RaftAddr
		}
		n.mux = newMux(ln, o.RaftAddr, o.Shards, o.Logger)
		n.mux.rpc = n.serveRPC
		switch {
		case o.Bootstrap:
			bootstrap = []Member{{ID: o.NodeID, RaftAddr: o.RaftAddr, Voter: true}}
		case len(o.Peers) > 0:
			bootstrap = append([]Member(nil), o.Peers...)
		}
		n.transports = make([]*raft.NetworkTransport, o.Shards)
	}
	// Shards open in parallel (each validates its own log and snapshot).
	errs := make([]error, len(n.shards))
	var wg sync.WaitGroup
	for i := range n.shards {
		so := Options{
			Dir: shardDir(o.Dir, i), Fsync: o.Fsync, LogStore: o.LogStore,
			SnapshotThreshold: o.SnapshotThreshold, Logger: o.Logger,
			OnLeader: func(leader bool) { n.leaderChanged(i, leader) },
		}
		if o.Shards > 1 {
			so.Logger = o.Logger.With("shard", i)
		}
		if clustered {
			hlog := hclog.New(&hclog.LoggerOptions{
				Name: "raft-net", Level: hclog.Warn, DisableTime: true, Output: slogWriter{log: so.Logger, clustered: true},
			})
			n.transports[i] = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
				Stream: n.mux.layers[i], MaxPool: 3, Timeout: 10 * time.Second, Logger: hlog,
			})
			so.NodeID, so.Transport, so.Bootstrap = o.NodeID, n.transports[i], bootstrap
			so.Timing, so.QuorumTimeout = o.Timing, o.QuorumTimeout
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.shards[i], errs[i] = Open(so)
			if errs[i] != nil && o.Shards > 1 {
				errs[i] = fmt.Errorf("shard %d: %w", i, errs[i])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if clustered {
		n.mux.serve()
		if o.Balance {
			n.bg.Add(1)
			go n.balance()
		}
	}
	return n, nil
}

// checkNodeOptions refuses inconsistent cluster options.
func checkNodeOptions(o *NodeOptions) error {
	if o.NodeID == "" {
		if o.RaftAddr != "" || o.RaftListener != nil || o.Bootstrap || len(o.Peers) > 0 {
			return errors.New("cluster options (raft address, bootstrap, peers) need a node id")
		}
		return nil
	}
	if strings.ContainsFunc(o.NodeID, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("node id %q: spaces and control characters are not allowed", o.NodeID)
	}
	if o.RaftAddr == "" && o.RaftListener == nil {
		return errors.New("a cluster node needs a raft address")
	}
	if o.RaftAddr != "" {
		host, port, err := net.SplitHostPort(o.RaftAddr)
		if err != nil {
			return fmt.Errorf("raft address %q: %v", o.RaftAddr, err)
		}
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() || port == "0" && o.RaftListener == nil {
			return fmt.Errorf("raft address %q is advertised to the other nodes: give a concrete host and port", o.RaftAddr)
		}
	}
	if o.Bootstrap && len(o.Peers) > 0 {
		return errors.New("bootstrap and peers are exclusive: bootstrap starts a one-node cluster, peers a fixed one")
	}
	if len(o.Peers) > 0 {
		self := false
		seen := map[string]bool{}
		for _, p := range o.Peers {
			if p.ID == "" || p.RaftAddr == "" {
				return fmt.Errorf("peer %q: id and raft address are required", p.ID+"="+p.RaftAddr)
			}
			if seen[p.ID] {
				return fmt.Errorf("peer %q listed twice", p.ID)
			}
			seen[p.ID] = true
			if p.ID == o.NodeID {
				self = true
				if o.RaftAddr != "" && p.RaftAddr != o.RaftAddr {
					return fmt.Errorf("peer %s is listed at %s but this node's raft address is %s", p.ID, p.RaftAddr, o.RaftAddr)
				}
			}
		}
		if !self {
			return fmt.Errorf("the peers list must include this node (%s)", o.NodeID)
		}
	}
	return nil
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

// isSelf reports whether raftAddr is this node's raft address (the only
// node there is for the embedded single node).
func (n *Node) isSelf(raftAddr string) bool {
	return n.mux == nil || raftAddr == n.opts.RaftAddr
}

// ClientAddrOf returns the client address of the member at raftAddr: this
// node's own, or what that node answers to the info RPC (cached).
func (n *Node) ClientAddrOf(raftAddr string) (string, error) {
	if n.isSelf(raftAddr) {
		return n.ClientAddr(), nil
	}
	ci, err := n.peerInfo(raftAddr)
	return ci.clientAddr, err
}

// NodeIDOf returns the node id of the member at raftAddr (see ClientAddrOf).
func (n *Node) NodeIDOf(raftAddr string) (string, error) {
	if n.isSelf(raftAddr) {
		return n.ID(), nil
	}
	ci, err := n.peerInfo(raftAddr)
	return ci.id, err
}

// peerInfo returns the cached info of the node at raftAddr. Without an
// entry it asks the node (and returns the error if it does not answer).
// An entry older than infoTTL is returned as it is while one background
// refresh asks the node again (at most one a second per node), so a lookup
// never waits on a node that is slow or gone once it was known.
func (n *Node) peerInfo(raftAddr string) (cachedInfo, error) {
	n.infoMu.Lock()
	ci, ok := n.info[raftAddr]
	if ok && time.Since(ci.at) >= infoTTL {
		next := ci
		next.at = time.Now().Add(time.Second - infoTTL) // no other refresh for a second
		n.info[raftAddr] = next
		go n.refreshPeer(raftAddr)
	}
	n.infoMu.Unlock()
	if ok {
		return ci, nil
	}
	return n.refreshPeer(raftAddr)
}

// refreshPeer asks the node at raftAddr for its info and caches the answer.
func (n *Node) refreshPeer(raftAddr string) (cachedInfo, error) {
	resp, err := n.rpcs.call(raftAddr, rpcRequest{Op: rpcInfo}, rpcShortTimeout)
	if err != nil {
		return cachedInfo{}, err
	}
	ci := cachedInfo{id: resp.ID, clientAddr: resp.ClientAddr, at: time.Now()}
	n.infoMu.Lock()
	n.info[raftAddr] = ci
	n.infoMu.Unlock()
	return ci, nil
}

// forgetPeer marks the cached info of the node at raftAddr stale (a call to
// it failed: it may come back with another client address), so the next
// lookup asks again; while it does not answer, the stale info is used.
func (n *Node) forgetPeer(raftAddr string) {
	n.infoMu.Lock()
	if ci, ok := n.info[raftAddr]; ok {
		ci.at = time.Time{}
		n.info[raftAddr] = ci
	}
	n.infoMu.Unlock()
}

// Members returns the union of the shards' raft configurations, sorted by
// id (a member that votes in any shard is reported as a voter).
func (n *Node) Members() ([]Member, error) {
	byID := map[string]Member{}
	for _, s := range n.shards {
		ms, err := s.Members()
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if have, ok := byID[m.ID]; ok {
				m.Voter = m.Voter || have.Voter
				if have.RaftAddr != "" {
					m.RaftAddr = have.RaftAddr
				}
			}
			byID[m.ID] = m
		}
	}
	out := make([]Member, 0, len(byID))
	for _, m := range byID {
		out = append(out, m)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out, nil
}

// AddNode adds the node (id, raftAddr) as a voter of every shard, at each
// shard's leader (locally when it is this node, by RPC otherwise). It waits
// up to ~10s for a shard without a leader. The node must answer at
// raftAddr with that id and the same shard count. Adding a node that is
// already a voter at that address succeeds without a change.
func (n *Node) AddNode(id, raftAddr string) error {
	if !n.Clustered() {
		return errors.New("ERR this node is not part of a cluster (started without a node id)")
	}
	if id == "" || raftAddr == "" {
		return errors.New("ERR a node id and a raft address are required")
	}
	if err := n.checkJoiner(id, raftAddr); err != nil {
		return err
	}
	for i := range n.shards {
		err := n.atLeader(i, func(s *Shard) error { return n.addVoterHere(s, id, raftAddr) },
			rpcRequest{Op: rpcAdd, Shard: i, ID: id, Addr: raftAddr})
		if err != nil {
			return n.shardErr(i, err)
		}
	}
	return nil
}

// checkJoiner asks a node about to be added who it is: it must answer, with
// the id it is added as and this node's shard count (a voter that is down,
// or would never serve some shards, weakens every quorum). A node that
// already votes at that address is not asked (re-adding it is a no-op).
func (n *Node) checkJoiner(id, raftAddr string) error {
	if ms, err := n.shards[0].Members(); err == nil {
		for _, m := range ms {
			if m.ID == id && m.RaftAddr == raftAddr && m.Voter {
				return nil
			}
		}
	}
	resp, err := n.rpcs.callOnce(raftAddr, rpcRequest{Op: rpcInfo}, rpcShortTimeout)
	switch {
	case err != nil:
		return err
	case resp.ID != id:
		return fmt.Errorf("ERR the node at %s is %s, not %s", raftAddr, resp.ID, id)
	case resp.Shards != len(n.shards):
		return fmt.Errorf("ERR node %s runs %d shard(s), this cluster %d; start it with the same shard count", id, resp.Shards, len(n.shards))
	}
	return nil
}

// RemoveNode removes the node from every shard's configuration, at each
// shard's leader. Removing a node that is not a member succeeds.
func (n *Node) RemoveNode(id string) error {
	if !n.Clustered() {
		return errors.New("ERR this node is not part of a cluster (started without a node id)")
	}
	if id == "" {
		return errors.New("ERR a node id is required")
	}
	for i := range n.shards {
		err := n.atLeader(i, func(s *Shard) error { return n.removeHere(s, id) },
			rpcRequest{Op: rpcRemove, Shard: i, ID: id})
		if err != nil {
			return n.shardErr(i, err)
		}
	}
	return nil
}

// TransferLeader hands shard i's leadership to the voter id ("" = the one
// raft picks), at the shard's current leader. Transferring to the current
// leader succeeds without a change.
func (n *Node) TransferLeader(i int, id string) error {
	if !n.Clustered() {
		return errors.New("ERR this node is not part of a cluster (started without a node id)")
	}
	if i < 0 || i >= len(n.shards) {
		return fmt.Errorf("ERR no shard %d (there are %d)", i, len(n.shards))
	}
	return n.atLeader(i, func(s *Shard) error { return n.transferHere(s, i, id) },
		rpcRequest{Op: rpcTransfer, Shard: i, ID: id})
}

// shardErr names the shard in an error of a multi-shard operation, keeping
// a *NotLeaderError as it is (its text is the reply).
func (n *Node) shardErr(i int, err error) error {
	var nl *NotLeaderError
	if len(n.shards) == 1 || errors.As(err, &nl) {
		return err
	}
	msg := err.Error()
	code, rest, ok := strings.Cut(msg, " ")
	if !ok || code != strings.ToUpper(code) {
		return fmt.Errorf("shard %d: %w", i, err)
	}
	return fmt.Errorf("%s shard %d: %s", code, i, rest)
}

// addVoterHere runs AddVoter on this node's shard (which should lead),
// unless the node already votes at that address.
func (n *Node) addVoterHere(s *Shard, id, raftAddr string) error {
	ms, err := s.Members()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.ID == id && m.RaftAddr == raftAddr && m.Voter {
			return nil
		}
	}
	return s.AddVoter(id, raftAddr)
}

// removeHere runs RemoveServer on this node's shard unless id is no member.
func (n *Node) removeHere(s *Shard, id string) error {
	ms, err := s.Members()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.ID == id {
			return s.RemoveServer(id)
		}
	}
	return nil
}

// transferHere runs TransferLeadership on this node's shard i.
func (n *Node) transferHere(s *Shard, i int, id string) error {
	if id == "" {
		return s.TransferLeadership("")
	}
	if lid, _ := s.Leader(); lid == id && s.IsLeader() {
		return nil
	}
	ms, err := s.Members()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.ID == id {
			if !m.Voter {
				return fmt.Errorf("ERR node %s is not a voter of shard %d", id, i)
			}
			return s.TransferLeadership(id)
		}
	}
	return fmt.Errorf("ERR node %s is not a member of shard %d", id, i)
}

// atLeader runs an operation at shard i's leader: local when this node
// leads it, else the RPC req at the leader. While the shard has no leader,
// its leader does not answer or leadership moves, it retries for up to
// leaderWait; then a shard still without a leader fails with the
// CLUSTERDOWN text.
func (n *Node) atLeader(i int, local func(*Shard) error, req rpcRequest) error {
	s := n.shards[i]
	deadline := time.Now().Add(leaderWait)
	for {
		var err error
		if s.IsLeader() {
			err = local(s)
		} else if id, addr := s.Leader(); addr == "" || id == n.ID() {
			// No leader, or this node just won and is still applying
			// what its predecessors committed.
			err = &NotLeaderError{}
		} else {
			_, err = n.rpcs.callOnce(addr, req, rpcAdminTimeout)
			if isUnreachable(err) {
				n.forgetPeer(addr)
			}
		}
		var nl *NotLeaderError
		// A lost answer may hide a change that was made: retrying it is
		// safe for add/remove (they check the membership first) and for a
		// transfer to a named node, not for "any voter" (it would move
		// the shard on again).
		anyVoter := req.Op == rpcTransfer && req.ID == ""
		retry := errors.As(err, &nl) || (isUnreachable(err) && !anyVoter)
		if !retry || time.Now().After(deadline) {
			return err
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-n.stop:
			return ErrShuttingDown
		}
	}
}

// ReadBarrier makes the next read of shard i on this node linearizable: on
// the leader it confirms leadership (Shard.VerifyRead); on a follower it
// asks the leader for its read index and waits until this node has applied
// that far. It gives up after ~5s; a shard without a leader fails at once
// with *NotLeaderError (CLUSTERDOWN).
func (n *Node) ReadBarrier(i int) error {
	s := n.shards[i]
	if !n.Clustered() {
		return s.VerifyRead()
	}
	deadline := time.Now().Add(readBarrierTimeout)
	for {
		var err error
		id, addr := s.Leader()
		switch {
		case s.IsLeader():
			err = s.VerifyRead()
		case addr == "":
			return &NotLeaderError{}
		case id == n.ID():
			err = &NotLeaderError{} // won, barrier not done yet: wait
		default:
			var resp *rpcResponse
			resp, err = n.rpcs.call(addr, rpcRequest{Op: rpcReadIndex, Shard: i}, time.Until(deadline))
			if err == nil {
				return s.WaitApplied(resp.Index, max(time.Until(deadline), time.Millisecond))
			}
			if isUnreachable(err) {
				// The leader went away; raft will notice. Report it as
				// led elsewhere unless a new leader shows up in time.
				n.forgetPeer(addr)
				err = &NotLeaderError{LeaderID: id, LeaderAddr: addr}
			}
		}
		var nl *NotLeaderError
		if !errors.As(err, &nl) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-n.stop:
			return ErrShuttingDown
		}
	}
}

// ReplicasHolding returns how many voters of shard i other than this node
// have applied the entry at index (WAIT). It asks them in parallel and
// counts a voter that does not answer within ~1s as not holding it.
func (n *Node) ReplicasHolding(i int, index uint64) int {
	if !n.Clustered() || index == 0 {
		return 0
	}
	ms, err := n.shards[i].Members()
	if err != nil {
		return 0
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		count int
	)
	for _, m := range ms {
		if !m.Voter || m.ID == n.ID() {
			continue
		}
		wg.Add(1)
		go func(addr string) {
			defer wg.Done()
			resp, err := n.rpcs.call(addr, rpcRequest{Op: rpcApplied, Shard: i}, time.Second)
			if err == nil && resp.Index >= index {
				mu.Lock()
				count++
				mu.Unlock()
			}
		}(m.RaftAddr)
	}
	wg.Wait()
	return count
}

// DialRESP opens an internal RESP connection to the server of the node at
// raftAddr (through its raft port; it skips AUTH there). The caller owns the
// connection.
func (n *Node) DialRESP(raftAddr string) (net.Conn, error) {
	if !n.Clustered() {
		return nil, errors.New("ERR this node is not part of a cluster (started without a node id)")
	}
	c, err := dialMux(raftAddr, muxKindRESP, 0, rpcShortTimeout)
	if err != nil {
		return nil, fmt.Errorf("ERR node at %s unreachable: %v", raftAddr, err)
	}
	return c, nil
}

// HandleRESP registers the server's handler of internal RESP connections
// arriving on the raft port (called on its own goroutine per connection,
// which it owns). Before it is registered, such connections are closed.
func (n *Node) HandleRESP(f func(net.Conn)) {
	if n.mux != nil {
		n.mux.setRESP(f)
	}
}

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

// Ready returns "" when every shard is open and has a known leader, else
// why not (naming the first shard that is not ready).
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
			if merr := n.mux.close(); merr != nil && !errors.Is(merr, net.ErrClosed) {
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
