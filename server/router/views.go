package router

import (
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"streamd/replication"
	"streamd/server/resp"
)

// The CLUSTER and RAFT views: the Redis Cluster picture of a node's shards
// (each shard's slot range is "served" by its Raft leader, the master,
// and its other voters, the replicas) and streamd's own RAFT listings.
// They work on any node, the embedded single one included; which
// subcommands answer in which mode is the server's business.

// View renders a node's shards and members for CLUSTER, RAFT and INFO.
type View struct {
	node *replication.Node
}

// NewView returns the view of node.
func NewView(node *replication.Node) *View { return &View{node: node} }

// NodeID is this node's ID ("streamd" for the embedded single node).
func (v *View) NodeID() string {
	if id := v.node.ID(); id != "" {
		return id
	}
	return "streamd"
}

// Member is what the views know about one member.
type Member struct {
	ID, RaftAddr string
	Host         string // client address; "" when unreachable
	Port         int
	Myself, OK   bool
}

// ClientAddrTimeout bounds how long a view waits for a member's client
// address (an RPC the node caches): a member that is down is reported as
// unreachable instead of stalling the reply.
const ClientAddrTimeout = time.Second

// Member resolves a member's client address (host, port); own is this
// node's client address.
func (v *View) Member(id, raftAddr, own string) Member {
	m := Member{ID: id, RaftAddr: raftAddr}
	if id == v.NodeID() || (raftAddr != "" && raftAddr == v.node.RaftAddr()) {
		m.Myself = true
		m.Host, m.Port, m.OK = SplitAddr(own)
		return m
	}
	if raftAddr == "" {
		return m
	}
	type res struct {
		addr string
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		a, err := v.node.ClientAddrOf(raftAddr)
		ch <- res{a, err}
	}()
	select {
	case r := <-ch:
		if r.err == nil {
			m.Host, m.Port, m.OK = SplitAddr(r.addr)
		}
	case <-time.After(ClientAddrTimeout):
	}
	return m
}

// SplitAddr splits host:port; ok is false when it does not parse.
func SplitAddr(a string) (host string, port int, ok bool) {
	h, p, err := net.SplitHostPort(a)
	if err != nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, false
	}
	return h, n, true
}

// ShardView is one shard's slot range, leader and other voters.
type ShardView struct {
	Index, First, Last int
	Term               uint64
	Leader             *Member // nil when no leader is known
	Followers          []Member
}

// Topology builds every shard's view (own: this node's client address).
// Members' client addresses are resolved once per call.
func (v *View) Topology(own string) []ShardView {
	n := v.node.NumShards()
	cache := map[string]Member{}
	resolve := func(id, raftAddr string) Member {
		key := id + "\x00" + raftAddr
		if m, ok := cache[key]; ok {
			return m
		}
		m := v.Member(id, raftAddr, own)
		cache[key] = m
		return m
	}
	out := make([]ShardView, n)
	for i := 0; i < n; i++ {
		sh := v.node.Shard(i)
		sv := ShardView{Index: i}
		sv.First, sv.Last = replication.SlotRange(i, n)
		sv.Term = sh.Info().Term
		leaderID, leaderAddr := v.node.Leader(i)
		if leaderID != "" {
			m := resolve(leaderID, leaderAddr)
			sv.Leader = &m
		}
		if members, err := sh.Members(); err == nil {
			for _, mb := range members {
				if !mb.Voter || mb.ID == leaderID {
					continue
				}
				sv.Followers = append(sv.Followers, resolve(mb.ID, mb.RaftAddr))
			}
		}
		out[i] = sv
	}
	return out
}

// Slots is CLUSTER SLOTS: per shard [first, last, leader, replica...],
// each node [host, port, id, {}] (Redis 7's shape; the last element is the
// networking-metadata map, empty here). Shards without a known leader, and
// members whose address is unknown, are left out.
func (v *View) Slots(own string) resp.Reply {
	out := resp.Array{}
	for _, sv := range v.Topology(own) {
		if sv.Leader == nil || !sv.Leader.OK {
			continue
		}
		row := resp.Array{resp.Int(sv.First), resp.Int(sv.Last), slotsNode(*sv.Leader)}
		for _, f := range sv.Followers {
			if f.OK {
				row = append(row, slotsNode(f))
			}
		}
		out = append(out, row)
	}
	return out
}

func slotsNode(m Member) resp.Reply {
	return resp.Array{resp.BulkString(m.Host), resp.Int(m.Port), resp.BulkString(m.ID), resp.Map{}}
}

// Shards is CLUSTER SHARDS (Redis 7): per shard a map of "slots" ([first,
// last]) and "nodes" (id, port, ip, endpoint, role, replication-offset
// for this node, health).
func (v *View) Shards(own string) resp.Reply {
	out := resp.Array{}
	for _, sv := range v.Topology(own) {
		nodes := resp.Array{}
		add := func(m Member, role string) {
			kv := resp.Map{
				{K: resp.BulkString("id"), V: resp.BulkString(m.ID)},
				{K: resp.BulkString("port"), V: resp.Int(m.Port)},
				{K: resp.BulkString("ip"), V: resp.BulkString(m.Host)},
				{K: resp.BulkString("endpoint"), V: resp.BulkString(m.Host)},
				{K: resp.BulkString("role"), V: resp.BulkString(role)},
			}
			if m.Myself {
				kv = append(kv, resp.KV{K: resp.BulkString("replication-offset"), V: resp.Int(int64(v.node.Shard(sv.Index).Info().AppliedIndex))})
			}
			health := "online"
			if !m.OK {
				health = "failed"
			}
			kv = append(kv, resp.KV{K: resp.BulkString("health"), V: resp.BulkString(health)})
			nodes = append(nodes, kv)
		}
		if sv.Leader != nil {
			add(*sv.Leader, "master")
		}
		for _, f := range sv.Followers {
			add(f, "replica")
		}
		out = append(out, resp.Map{
			{K: resp.BulkString("slots"), V: resp.Array{resp.Int(sv.First), resp.Int(sv.Last)}},
			{K: resp.BulkString("nodes"), V: nodes},
		})
	}
	return out
}

// Nodes is CLUSTER NODES in Redis's line format:
//
//	<id> <ip:port@raftport> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot-range>...
//
// A member that leads at least one shard is a "master" listing the slot
// ranges of the shards it leads (config-epoch: the highest of their
// terms); any other member is a "slave" of the leader of the first shard
// it is a voter of. Ping and pong times are not tracked (0).
func (v *View) Nodes(own string) string {
	type nodeRow struct {
		m      Member
		ranges [][2]int
		epoch  uint64
		master string
	}
	rows := map[string]*nodeRow{}
	var order []string
	get := func(m Member) *nodeRow {
		if r, ok := rows[m.ID]; ok {
			return r
		}
		r := &nodeRow{m: m}
		rows[m.ID] = r
		order = append(order, m.ID)
		return r
	}
	for _, sv := range v.Topology(own) {
		if sv.Leader != nil {
			r := get(*sv.Leader)
			if k := len(r.ranges); k > 0 && r.ranges[k-1][1]+1 == sv.First {
				r.ranges[k-1][1] = sv.Last
			} else {
				r.ranges = append(r.ranges, [2]int{sv.First, sv.Last})
			}
			r.epoch = max(r.epoch, sv.Term)
		}
		for _, f := range sv.Followers {
			r := get(f)
			if r.master == "" && sv.Leader != nil {
				r.master = sv.Leader.ID
			}
		}
	}
	sort.Strings(order)
	var b strings.Builder
	for _, id := range order {
		r := rows[id]
		var flags []string
		if r.m.Myself {
			flags = append(flags, "myself")
		}
		master := "-"
		if len(r.ranges) > 0 {
			flags = append(flags, "master")
		} else {
			flags = append(flags, "slave")
			if r.master != "" {
				master = r.master
			}
		}
		if !r.m.OK {
			flags = append(flags, "fail")
		}
		link := "connected"
		if !r.m.OK {
			link = "disconnected"
		}
		_, raftPort, _ := SplitAddr(r.m.RaftAddr)
		b.WriteString(r.m.ID + " " + r.m.Host + ":" + strconv.Itoa(r.m.Port) + "@" + strconv.Itoa(raftPort) + " " +
			strings.Join(flags, ",") + " " + master + " 0 0 " + strconv.FormatUint(r.epoch, 10) + " " + link)
		for _, rg := range r.ranges {
			b.WriteString(" " + strconv.Itoa(rg[0]) + "-" + strconv.Itoa(rg[1]))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// MyShardID is CLUSTER MYSHARDID's answer: the shard this node leads,
// else the first shard, as "shard-<i>".
func (v *View) MyShardID() string {
	for i := 0; i < v.node.NumShards(); i++ {
		if v.node.Shard(i).IsLeader() {
			return "shard-" + strconv.Itoa(i)
		}
	}
	return "shard-0"
}
