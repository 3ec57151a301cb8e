package replication

import (
	"errors"
	"sync"
	"time"
)

// Reads across nodes: the leader's read index for a follower's
// linearizable read, and how many replicas hold an index (WAIT).

// readBarrierTimeout bounds ReadBarrier.
const readBarrierTimeout = 5 * time.Second

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
			resp, err = n.rpcs.call(addr, rpcRequest{Op: rpcReadIndex, Shard: i, Applied: s.view().AppliedIndex()}, time.Until(deadline))
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

// NudgeReplicas is Shard.NudgeReplicas for shard i.
func (n *Node) NudgeReplicas(i int) {
	if n.Clustered() && i >= 0 && i < len(n.shards) {
		n.shards[i].NudgeReplicas()
	}
}

// AppliedIndexOf asks the member at raftAddr for its applied index of
// shard i (ROLE's replica offsets); ok is false when it does not answer
// within a second.
func (n *Node) AppliedIndexOf(i int, raftAddr string) (index uint64, ok bool) {
	if !n.Clustered() || i < 0 || i >= len(n.shards) {
		return 0, false
	}
	resp, err := n.rpcs.call(raftAddr, rpcRequest{Op: rpcApplied, Shard: i}, time.Second)
	if err != nil {
		return 0, false
	}
	return resp.Index, true
}
