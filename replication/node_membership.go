package replication

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"streamd/server/resp"
)

// Membership: adding, removing and transferring leadership, each done at
// the shard's leader (here, or by node RPC).

// leaderWait bounds how long membership calls wait for a shard to have a
// leader that answers.
var leaderWait = 10 * time.Second

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
	if !resp.HasErrorCode(msg) {
		return fmt.Errorf("shard %d: %w", i, err)
	}
	code, rest, _ := strings.Cut(msg, " ")
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
