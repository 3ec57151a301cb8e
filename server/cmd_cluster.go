package server

import (
	"errors"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"streamd/replication"
	"streamd/server/resp"
)

// CLUSTER: the Redis Cluster view of the node's shards, so that go-redis's
// ClusterClient and redis-cli -c route themselves (issue 4). Each shard (a
// Raft group) owns a contiguous slot range (replication.SlotRange); its
// Raft leader is the range's "master", its other voters the "replicas".
//
// Which subcommands answer:
//   - cluster-enabled yes: all of them.
//   - a clustered node (node-id set) without cluster mode: KEYSLOT, MYID,
//     INFO and HELP; the topology ones (SLOTS, SHARDS, NODES, ...) keep
//     Redis's "cluster support disabled" error, so a client probing them
//     stays a plain client (which works: any node forwards).
//   - the embedded single node without cluster mode: everything answers
//     "cluster support disabled", as a standalone Redis.

// errClusterDisabled is a non-cluster Redis's answer to CLUSTER and READONLY.
const errClusterDisabled = ErrorReply("ERR This instance has cluster support disabled")

// clusterCommands are CLUSTER (a container), READONLY and READWRITE.
func (s *Server) clusterCommands() []*Command {
	sub := func(name string, arity int, summary string, h func(*Client, [][]byte) Reply) *Command {
		return &Command{Name: "cluster|" + name, Arity: arity, Flags: []string{"stale"},
			ACL: []string{"@slow"}, Summary: summary, Since: "3.0.0", Group: "cluster", Handler: h}
	}
	topo := func(h func(*Client, [][]byte) Reply) func(*Client, [][]byte) Reply {
		return func(c *Client, args [][]byte) Reply {
			if !s.config().ClusterEnabled {
				return errClusterDisabled
			}
			return h(c, args)
		}
	}
	basic := func(h func(*Client, [][]byte) Reply) func(*Client, [][]byte) Reply {
		return func(c *Client, args [][]byte) Reply {
			if !s.config().ClusterEnabled && !s.node.Clustered() {
				return errClusterDisabled
			}
			return h(c, args)
		}
	}
	conn := func(name, summary string, h func(*Client, [][]byte) Reply) *Command {
		return &Command{Name: name, Arity: 1, Flags: []string{"loading", "stale", "fast"},
			ACL: []string{"@fast", "@connection"}, Summary: summary, Since: "3.0.0", Group: "cluster", Handler: h}
	}
	readMode := func(c *Client, args [][]byte) Reply {
		if !s.config().ClusterEnabled {
			return errClusterDisabled
		}
		// Every read is served by the shard's leader after confirming its
		// leadership (linearizable), so there are no replica reads to
		// enable: both modes behave the same.
		return OK
	}
	return []*Command{
		{Name: "cluster", Arity: -2, ACL: []string{"@slow"},
			Summary: "A container for Redis Cluster commands.", Since: "3.0.0", Group: "cluster",
			Subcommands: []*Command{
				sub("keyslot", 3, "Returns the hash slot for a key.", basic(cmdCLUSTERKEYSLOT)),
				sub("myid", 2, "Returns the ID of a node.", basic(s.cmdCLUSTERMYID)),
				sub("info", 2, "Returns information about the state of a node.", basic(s.cmdCLUSTERINFO)),
				sub("help", 2, "Returns helpful text about the different subcommands.", basic(cmdCLUSTERHELP)),
				sub("slots", 2, "Returns the mapping of cluster slots to nodes.", topo(s.cmdCLUSTERSLOTS)),
				sub("shards", 2, "Returns the mapping of cluster slots to shards.", topo(s.cmdCLUSTERSHARDS)),
				sub("nodes", 2, "Returns the cluster configuration for a node.", topo(s.cmdCLUSTERNODES)),
				sub("myshardid", 2, "Returns the shard ID of a node.", topo(s.cmdCLUSTERMYSHARDID)),
			}},
		conn("readonly", "Enables read queries for a connection to a cluster replica node", readMode),
		conn("readwrite", "Disables read queries for a connection to a cluster replica node", readMode),
	}
}

// cmdCLUSTERKEYSLOT is CLUSTER KEYSLOT key: CRC16 of the key (or hashtag).
func cmdCLUSTERKEYSLOT(c *Client, args [][]byte) Reply {
	return Int(replication.KeySlot(string(args[2])))
}

// cmdCLUSTERMYID is CLUSTER MYID: this node's Raft ID.
func (s *Server) cmdCLUSTERMYID(c *Client, args [][]byte) Reply {
	return BulkString(s.nodeID())
}

// cmdCLUSTERMYSHARDID is CLUSTER MYSHARDID (Redis 7.2): the shard this
// node leads, else the first shard it is a voter of, as "shard-<i>".
func (s *Server) cmdCLUSTERMYSHARDID(c *Client, args [][]byte) Reply {
	for i := 0; i < s.node.NumShards(); i++ {
		if s.node.Shard(i).IsLeader() {
			return BulkString("shard-" + strconv.Itoa(i))
		}
	}
	return BulkString("shard-0")
}

// cmdCLUSTERHELP lists the CLUSTER subcommands streamd implements.
func cmdCLUSTERHELP(c *Client, args [][]byte) Reply {
	return helpReply("CLUSTER",
		"INFO",
		"    Return information about the cluster.",
		"KEYSLOT <key>",
		"    Return the hash slot for <key>.",
		"MYID",
		"    Return the node id.",
		"MYSHARDID",
		"    Return the node's shard id (cluster mode).",
		"NODES",
		"    Return cluster configuration seen by node (cluster mode). Output format:",
		"    <id> <ip:port@raftport> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
		"SHARDS",
		"    Return information about slot range mappings and the nodes associated with them (cluster mode).",
		"SLOTS",
		"    Return information about slots range mappings (cluster mode). Each range is made of:",
		"    start, end, master and replicas IP addresses, ports and ids",
		"(Membership and leadership are managed with RAFT: see RAFT HELP.)",
	)
}

// nodeID is this node's ID ("streamd" for the embedded single node).
func (s *Server) nodeID() string {
	if id := s.node.ID(); id != "" {
		return id
	}
	return "streamd"
}

// memberView is what the topology commands know about one member.
type memberView struct {
	id, raftAddr string
	host         string // client address; "" when unreachable
	port         int
	myself, ok   bool
}

// clientAddrTimeout bounds how long a topology command or INFO waits for a
// member's client address (an RPC the node caches): a member that is down
// is reported as unreachable instead of stalling the reply.
const clientAddrTimeout = time.Second

// member resolves a member's client address (host, port).
func (s *Server) member(c *Client, id, raftAddr string) memberView {
	m := memberView{id: id, raftAddr: raftAddr}
	if id == s.nodeID() || (raftAddr != "" && raftAddr == s.node.RaftAddr()) {
		m.myself = true
		m.host, m.port, m.ok = splitAddr(s.ownClientAddr(c))
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
		a, err := s.node.ClientAddrOf(raftAddr)
		ch <- res{a, err}
	}()
	select {
	case r := <-ch:
		if r.err == nil {
			m.host, m.port, m.ok = splitAddr(r.addr)
		}
	case <-time.After(clientAddrTimeout):
	}
	return m
}

// ownClientAddr is the client address this node advertises: the node's
// (from bind and port), else the address this connection reached.
func (s *Server) ownClientAddr(c *Client) string {
	if a := s.node.ClientAddr(); a != "" {
		return a
	}
	if c != nil {
		return c.laddr
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.config().Port))
}

// splitAddr splits host:port; ok is false when it does not parse.
func splitAddr(a string) (host string, port int, ok bool) {
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

// shardView is one shard's slot range, leader and other voters.
type shardView struct {
	index, first, last int
	term               uint64
	leader             *memberView // nil when no leader is known
	followers          []memberView
}

// topology builds every shard's view. Members' client addresses are
// resolved once per call.
func (s *Server) topology(c *Client) []shardView {
	n := s.node.NumShards()
	cache := map[string]memberView{}
	resolve := func(id, raftAddr string) memberView {
		key := id + "\x00" + raftAddr
		if m, ok := cache[key]; ok {
			return m
		}
		m := s.member(c, id, raftAddr)
		cache[key] = m
		return m
	}
	out := make([]shardView, n)
	for i := 0; i < n; i++ {
		sh := s.node.Shard(i)
		v := shardView{index: i}
		v.first, v.last = replication.SlotRange(i, n)
		info := sh.Info()
		v.term = info.Term
		leaderID, leaderAddr := s.node.Leader(i)
		if leaderID != "" {
			m := resolve(leaderID, leaderAddr)
			v.leader = &m
		}
		members, err := sh.Members()
		if err == nil {
			for _, mb := range members {
				if !mb.Voter || mb.ID == leaderID {
					continue
				}
				v.followers = append(v.followers, resolve(mb.ID, mb.RaftAddr))
			}
		}
		out[i] = v
	}
	return out
}

// cmdCLUSTERSLOTS is CLUSTER SLOTS: per shard [first, last, leader,
// replica...], each node [host, port, id, {}] (Redis 7's shape; the last
// element is the networking-metadata map, empty here). Shards without a
// known leader, and members whose address is unknown, are left out.
func (s *Server) cmdCLUSTERSLOTS(c *Client, args [][]byte) Reply {
	out := Array{}
	for _, v := range s.topology(c) {
		if v.leader == nil || !v.leader.ok {
			continue
		}
		row := Array{Int(v.first), Int(v.last), slotsNode(*v.leader)}
		for _, f := range v.followers {
			if f.ok {
				row = append(row, slotsNode(f))
			}
		}
		out = append(out, row)
	}
	return out
}

func slotsNode(m memberView) Reply {
	return Array{BulkString(m.host), Int(m.port), BulkString(m.id), Map{}}
}

// cmdCLUSTERSHARDS is CLUSTER SHARDS (Redis 7): per shard a map of "slots"
// ([first, last]) and "nodes" (id, port, ip, endpoint, role,
// replication-offset for this node, health).
func (s *Server) cmdCLUSTERSHARDS(c *Client, args [][]byte) Reply {
	out := Array{}
	for _, v := range s.topology(c) {
		nodes := Array{}
		add := func(m memberView, role string) {
			kv := Map{
				{K: BulkString("id"), V: BulkString(m.id)},
				{K: BulkString("port"), V: Int(m.port)},
				{K: BulkString("ip"), V: BulkString(m.host)},
				{K: BulkString("endpoint"), V: BulkString(m.host)},
				{K: BulkString("role"), V: BulkString(role)},
			}
			if m.myself {
				kv = append(kv, KV{K: BulkString("replication-offset"), V: Int(int64(s.node.Shard(v.index).Info().AppliedIndex))})
			}
			health := "online"
			if !m.ok {
				health = "failed"
			}
			kv = append(kv, KV{K: BulkString("health"), V: BulkString(health)})
			nodes = append(nodes, kv)
		}
		if v.leader != nil {
			add(*v.leader, "master")
		}
		for _, f := range v.followers {
			add(f, "replica")
		}
		out = append(out, Map{
			{K: BulkString("slots"), V: Array{Int(v.first), Int(v.last)}},
			{K: BulkString("nodes"), V: nodes},
		})
	}
	return out
}

// cmdCLUSTERNODES is CLUSTER NODES in Redis's line format:
//
//	<id> <ip:port@raftport> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot-range>...
//
// A member that leads at least one shard is a "master" listing the slot
// ranges of the shards it leads (config-epoch: the highest of their
// terms); any other member is a "slave" of the leader of the first shard
// it is a voter of. Ping and pong times are not tracked (0).
func (s *Server) cmdCLUSTERNODES(c *Client, args [][]byte) Reply {
	type nodeRow struct {
		m      memberView
		ranges [][2]int
		epoch  uint64
		master string
	}
	rows := map[string]*nodeRow{}
	var order []string
	get := func(m memberView) *nodeRow {
		if r, ok := rows[m.id]; ok {
			return r
		}
		r := &nodeRow{m: m}
		rows[m.id] = r
		order = append(order, m.id)
		return r
	}
	for _, v := range s.topology(c) {
		if v.leader != nil {
			r := get(*v.leader)
			if k := len(r.ranges); k > 0 && r.ranges[k-1][1]+1 == v.first {
				r.ranges[k-1][1] = v.last
			} else {
				r.ranges = append(r.ranges, [2]int{v.first, v.last})
			}
			r.epoch = max(r.epoch, v.term)
		}
		for _, f := range v.followers {
			r := get(f)
			if r.master == "" && v.leader != nil {
				r.master = v.leader.id
			}
		}
	}
	sort.Strings(order)
	var b strings.Builder
	for _, id := range order {
		r := rows[id]
		var flags []string
		if r.m.myself {
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
		if !r.m.ok {
			flags = append(flags, "fail")
		}
		link := "connected"
		if !r.m.ok {
			link = "disconnected"
		}
		_, raftPort, _ := splitAddr(r.m.raftAddr)
		b.WriteString(r.m.id + " " + r.m.host + ":" + strconv.Itoa(r.m.port) + "@" + strconv.Itoa(raftPort) + " " +
			strings.Join(flags, ",") + " " + master + " 0 0 " + strconv.FormatUint(r.epoch, 10) + " " + link)
		for _, rg := range r.ranges {
			b.WriteString(" " + strconv.Itoa(rg[0]) + "-" + strconv.Itoa(rg[1]))
		}
		b.WriteString("\n")
	}
	return Verbatim(b.String())
}

// cmdCLUSTERINFO is CLUSTER INFO: Redis's fields from the shards' Raft
// state. cluster_state is ok when every shard has a known leader
// (Node.Ready); cluster_size counts shards with a leader;
// cluster_current_epoch is the highest term, cluster_my_epoch the highest
// term of a shard led here. streamd adds cluster_shards.
func (s *Server) cmdCLUSTERINFO(c *Client, args [][]byte) Reply {
	var b strings.Builder
	s.clusterInfo(&b)
	return Verbatim(b.String())
}

func (s *Server) clusterInfo(b *strings.Builder) {
	n := s.node.NumShards()
	state := "ok"
	if s.node.Ready() != "" {
		state = "fail"
	}
	slotsOK, size := 0, 0
	var epoch, myEpoch uint64
	for i := 0; i < n; i++ {
		info := s.node.Shard(i).Info()
		epoch = max(epoch, info.Term)
		if id, _ := s.node.Leader(i); id != "" {
			first, last := replication.SlotRange(i, n)
			slotsOK += last - first + 1
			size++
		}
		if s.node.Shard(i).IsLeader() {
			myEpoch = max(myEpoch, info.Term)
		}
	}
	known := 1
	if ms, err := s.node.Members(); err == nil && len(ms) > 0 {
		known = len(ms)
	}
	infoLine(b, "cluster_state", state)
	infoInt(b, "cluster_slots_assigned", replication.SlotCount)
	infoInt(b, "cluster_slots_ok", int64(slotsOK))
	infoInt(b, "cluster_slots_pfail", 0)
	infoInt(b, "cluster_slots_fail", int64(replication.SlotCount-slotsOK))
	infoInt(b, "cluster_known_nodes", int64(known))
	infoInt(b, "cluster_size", int64(size))
	infoInt(b, "cluster_current_epoch", int64(epoch))
	infoInt(b, "cluster_my_epoch", int64(myEpoch))
	infoInt(b, "cluster_shards", int64(n))
}

// errorText turns a replication error into a reply: a NotLeaderError,
// even wrapped, as its own text (TRYAGAIN or CLUSTERDOWN); any other error
// by resp.ErrorText's rule (its text when it starts with a Redis error
// code, else "ERR " and the text).
func errorText(err error) ErrorReply {
	var nl *replication.NotLeaderError
	if errors.As(err, &nl) {
		return ErrorReply(nl.Error())
	}
	return ErrorReply(resp.ErrorText(err.Error()))
}
