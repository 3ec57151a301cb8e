package replication

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"streamd/internal/mux"
)

// Opening a node: its shards, and with a raft port the mux, the transports
// and the node RPCs.

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
				n.mux.Close()
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
		n.mux = mux.New(ln, o.RaftAddr, o.Shards, o.Logger, o.RaftAuth)
		n.rpcs.mux = n.mux
		n.mux.Handle(mux.KindRPC, n.serveRPC)
		switch {
		case o.Bootstrap:
			bootstrap = []Member{{ID: o.NodeID, RaftAddr: o.RaftAddr, Voter: true}}
		case len(o.Peers) > 0:
			bootstrap = append([]Member(nil), o.Peers...)
		}
		n.transports = make([]*guardedTransport, o.Shards)
	}
	// Shards open in parallel (each validates its own log and snapshot).
	errs := make([]error, len(n.shards))
	var wg sync.WaitGroup
	for i := range n.shards {
		so := Options{
			Dir: shardDir(o.Dir, i), Fsync: o.Fsync, LogStore: o.LogStore,
			SnapshotThreshold: o.SnapshotThreshold, SnapshotLogSize: o.SnapshotLogSize, Logger: o.Logger,
			OnLeader: func(leader bool) { n.leaderChanged(i, leader) },
		}
		if o.Shards > 1 {
			so.Logger = o.Logger.With("shard", i)
		}
		if clustered {
			hlog := newRaftLogger(so.Logger, "raft-net", true)
			n.transports[i] = newGuardedTransport(raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
				Stream: n.mux.Layer(i), MaxPool: 3, Timeout: 10 * time.Second, Logger: hlog,
			}))
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
		n.wasMember = n.listedEverywhere()
		n.mux.Serve()
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
