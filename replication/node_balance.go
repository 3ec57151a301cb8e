package replication

import (
	"sort"
	"time"
)

// Leadership balancing (NodeOptions.Balance): each node looks at the shards
// it leads every balanceInterval and hands a shard over to its preferred
// leader — voter i mod len(voters) by sorted id for shard i — when that
// voter answers and has applied nearly as much as this node. Every node runs
// the same rule on the same configuration, so leadership settles one shard
// per node (round robin) without coordination.

// Balancing parameters.
const (
	balanceInterval = 2 * time.Second
	balanceHold     = 10 * time.Second // at most one handover per shard per hold
	balanceMaxLag   = 16               // entries the preferred voter may lag behind
)

// balance runs until Close.
func (n *Node) balance() {
	defer n.bg.Done()
	t := time.NewTicker(balanceInterval)
	defer t.Stop()
	last := make([]time.Time, len(n.shards))
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		for i := range n.shards {
			if time.Since(last[i]) < balanceHold {
				continue
			}
			if n.balanceShard(i) {
				last[i] = time.Now()
			}
			select {
			case <-n.stop:
				return
			default:
			}
		}
	}
}

// preferredLeader returns shard i's preferred leader among voters.
func preferredLeader(i int, voters []Member) Member {
	sort.Slice(voters, func(a, b int) bool { return voters[a].ID < voters[b].ID })
	return voters[i%len(voters)]
}

// balanceShard hands shard i to its preferred leader if this node leads it
// and that voter is ready; it reports whether it tried.
func (n *Node) balanceShard(i int) bool {
	s := n.shards[i]
	if !s.IsLeader() {
		return false
	}
	ms, err := s.Members()
	if err != nil {
		return false
	}
	var voters []Member
	for _, m := range ms {
		if m.Voter {
			voters = append(voters, m)
		}
	}
	if len(voters) < 2 {
		return false
	}
	pref := preferredLeader(i, voters)
	if pref.ID == n.ID() {
		return false
	}
	resp, err := n.rpcs.call(pref.RaftAddr, rpcRequest{Op: rpcApplied, Shard: i}, time.Second)
	if err != nil {
		return false
	}
	if ours := s.Info().AppliedIndex; resp.Index+balanceMaxLag < ours {
		return false
	}
	if err := s.TransferLeadership(pref.ID); err != nil {
		n.log.Warn("balance: leadership handover failed", "shard", i, "to", pref.ID, "err", err)
	} else {
		n.log.Info("balance: handed leadership to the preferred leader", "shard", i, "to", pref.ID)
	}
	return true
}
