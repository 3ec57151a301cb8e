package router

import (
	"strconv"

	"streamd/replication"
	"streamd/server/resp"
)

// Field is one "name:value" line of an INFO-style text.
type Field struct {
	Name, Value string
}

func intField(name string, v int64) Field { return Field{name, strconv.FormatInt(v, 10)} }

// ClusterInfo is CLUSTER INFO's fields, from the shards' Raft state.
// cluster_state is ok when every shard has a known leader (Node.Ready);
// cluster_size counts shards with a leader; cluster_current_epoch is the
// highest term, cluster_my_epoch the highest term of a shard led here.
// streamd adds cluster_shards.
func (v *View) ClusterInfo() []Field {
	n := v.node.NumShards()
	state := "ok"
	if v.node.Ready() != "" {
		state = "fail"
	}
	slotsOK, size := 0, 0
	var epoch, myEpoch uint64
	for i := 0; i < n; i++ {
		info := v.node.Shard(i).Info()
		epoch = max(epoch, info.Term)
		if id, _ := v.node.Leader(i); id != "" {
			first, last := replication.SlotRange(i, n)
			slotsOK += last - first + 1
			size++
		}
		if v.node.Shard(i).IsLeader() {
			myEpoch = max(myEpoch, info.Term)
		}
	}
	known := 1
	if ms, err := v.node.Members(); err == nil && len(ms) > 0 {
		known = len(ms)
	}
	return []Field{
		{"cluster_state", state},
		intField("cluster_slots_assigned", replication.SlotCount),
		intField("cluster_slots_ok", int64(slotsOK)),
		intField("cluster_slots_pfail", 0),
		intField("cluster_slots_fail", int64(replication.SlotCount-slotsOK)),
		intField("cluster_known_nodes", int64(known)),
		intField("cluster_size", int64(size)),
		intField("cluster_current_epoch", int64(epoch)),
		intField("cluster_my_epoch", int64(myEpoch)),
		intField("cluster_shards", int64(n)),
	}
}

// ShardLines are "shards:N" and one line per shard (INFO replication,
// RAFT INFO): shard<i>:role=..,term=..,leader=..,slots=first-last,
// commit_index=..,applied_index=..,last_log_index=..,
// last_snapshot_index=..,voters=..
func (v *View) ShardLines() []Field {
	n := v.node.NumShards()
	out := make([]Field, 0, n+1)
	out = append(out, intField("shards", int64(n)))
	for i := 0; i < n; i++ {
		info := v.node.Shard(i).Info()
		first, last := replication.SlotRange(i, n)
		leader := info.LeaderID
		if leader == "" {
			leader = "-"
		}
		out = append(out, Field{"shard" + strconv.Itoa(i), "role=" + info.Role +
			",term=" + strconv.FormatUint(info.Term, 10) +
			",leader=" + leader +
			",slots=" + strconv.Itoa(first) + "-" + strconv.Itoa(last) +
			",commit_index=" + strconv.FormatUint(info.CommitIndex, 10) +
			",applied_index=" + strconv.FormatUint(info.AppliedIndex, 10) +
			",last_log_index=" + strconv.FormatUint(info.LastLogIndex, 10) +
			",last_snapshot_index=" + strconv.FormatUint(info.LastSnapshotIndex, 10) +
			",voters=" + strconv.Itoa(info.Voters)})
	}
	return out
}

// RaftNodes is RAFT NODES: one map per member (sorted by ID) with its id,
// raft-addr, client-addr ("" when unreachable), voter (0/1), myself (0/1)
// and leads (the shards it leads). own is this node's client address; the
// error is the node's, listing the members.
func (v *View) RaftNodes(own string) (resp.Reply, error) {
	members, err := v.node.Members()
	if err != nil {
		return nil, err
	}
	if len(members) == 0 {
		members = []replication.Member{{ID: v.NodeID(), RaftAddr: v.node.RaftAddr(), Voter: true}}
	}
	leaders := make([]string, v.node.NumShards())
	for i := range leaders {
		leaders[i], _ = v.node.Leader(i)
	}
	out := resp.Array{}
	for _, m := range members {
		mv := v.Member(m.ID, m.RaftAddr, own)
		leads := resp.Array{}
		for i, l := range leaders {
			if l == m.ID {
				leads = append(leads, resp.Int(i))
			}
		}
		addr := ""
		if mv.OK {
			addr = mv.Host + ":" + strconv.Itoa(mv.Port)
		}
		out = append(out, resp.Map{
			{K: resp.BulkString("id"), V: resp.BulkString(m.ID)},
			{K: resp.BulkString("raft-addr"), V: resp.BulkString(m.RaftAddr)},
			{K: resp.BulkString("client-addr"), V: resp.BulkString(addr)},
			{K: resp.BulkString("voter"), V: boolInt(m.Voter)},
			{K: resp.BulkString("myself"), V: boolInt(mv.Myself)},
			{K: resp.BulkString("leads"), V: leads},
		})
	}
	return out, nil
}

func boolInt(b bool) resp.Int {
	if b {
		return 1
	}
	return 0
}

// RaftShards is RAFT SHARDS: one map per shard with its index, slot
// range, leader (id and raft address, "" when none is known), term, this
// node's commit and applied index, last snapshot index, voters, and this
// node's role in it.
func (v *View) RaftShards() resp.Reply {
	n := v.node.NumShards()
	out := make(resp.Array, 0, n)
	for i := 0; i < n; i++ {
		first, last := replication.SlotRange(i, n)
		info := v.node.Shard(i).Info()
		id, addr := v.node.Leader(i)
		out = append(out, resp.Map{
			{K: resp.BulkString("shard"), V: resp.Int(i)},
			{K: resp.BulkString("slots"), V: resp.Array{resp.Int(first), resp.Int(last)}},
			{K: resp.BulkString("leader"), V: resp.BulkString(id)},
			{K: resp.BulkString("leader-addr"), V: resp.BulkString(addr)},
			{K: resp.BulkString("term"), V: resp.Int(int64(info.Term))},
			{K: resp.BulkString("commit-index"), V: resp.Int(int64(info.CommitIndex))},
			{K: resp.BulkString("applied-index"), V: resp.Int(int64(info.AppliedIndex))},
			{K: resp.BulkString("last-snapshot-index"), V: resp.Int(int64(info.LastSnapshotIndex))},
			{K: resp.BulkString("voters"), V: resp.Int(info.Voters)},
			{K: resp.BulkString("role"), V: resp.BulkString(info.Role)},
		})
	}
	return out
}
