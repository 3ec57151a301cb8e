package server

import (
	"strconv"
	"strings"

	"streamd/server/info"
	"streamd/server/router"
)

// RAFT: streamd's admin command for the cluster's membership and
// leadership (issue 4). Every subcommand is an admin command.
//
//	RAFT NODES                 members: id, raft-addr, client-addr, voter, leads (shard indexes)
//	RAFT SHARDS                per shard: shard, slots, leader, leader-addr, term, commit-index, applied-index, role
//	RAFT ADD id raft-addr      add a node as a voter of every shard (at each shard's leader)
//	RAFT REMOVE id             remove a node from every shard
//	RAFT TRANSFER shard [id]   move a shard's leadership (to id, or a voter raft picks)
//	RAFT INFO                  this node, INFO-style text
//
// ADD, REMOVE and TRANSFER act at the shard leaders wherever they are (the
// node relays them), so they work when sent to any member.
func (s *Server) raftCommand() *Command {
	sub := func(name string, arity int, flags []string, summary string, h func(*Client, [][]byte) Reply) *Command {
		return &Command{Name: "raft|" + name, Arity: arity, Flags: append([]string{"admin", "noscript"}, flags...),
			ACL: []string{"@admin", "@slow", "@dangerous"}, Summary: summary, Since: "4.0.0", Group: "cluster", Handler: h}
	}
	stale := []string{"loading", "stale"}
	return &Command{
		Name: "raft", Arity: -2, ACL: []string{"@slow"},
		Summary: "A container for streamd's Raft cluster administration commands.", Since: "4.0.0", Group: "cluster",
		Subcommands: []*Command{
			sub("nodes", 2, stale, "Lists the cluster's members and the shards each leads.", s.cmdRAFTNODES),
			sub("shards", 2, stale, "Lists the shards: slot range, leader, term, commit and applied index.", s.cmdRAFTSHARDS),
			sub("add", 4, nil, "Adds a node as a voter of every shard.", s.cmdRAFTADD),
			sub("remove", 3, nil, "Removes a node from every shard.", s.cmdRAFTREMOVE),
			sub("transfer", -3, nil, "Transfers a shard's leadership.", s.cmdRAFTTRANSFER),
			sub("info", 2, stale, "Returns this node's Raft state.", s.cmdRAFTINFO),
			sub("help", 2, stale, "Returns helpful text about the different subcommands.", cmdRAFTHELP),
		},
	}
}

// errNotClustered answers the membership subcommands on the embedded
// single node, which has no Raft network.
const errNotClustered = ErrorReply("ERR this node is not part of a cluster: start it with --node-id and --raft-addr")

// cmdRAFTNODES is RAFT NODES: one map per member (router.View.RaftNodes).
func (s *Server) cmdRAFTNODES(c *Client, args [][]byte) Reply {
	r, err := s.view.RaftNodes(s.ownClientAddr(c))
	if err != nil {
		return errorText(err)
	}
	return r
}

// cmdRAFTSHARDS is RAFT SHARDS: one map per shard (router.View.RaftShards).
func (s *Server) cmdRAFTSHARDS(c *Client, args [][]byte) Reply {
	return s.view.RaftShards()
}

// cmdRAFTADD is RAFT ADD id raft-addr: the node becomes a voter of every
// shard (idempotent: a member already at that address is OK).
func (s *Server) cmdRAFTADD(c *Client, args [][]byte) Reply {
	if !s.node.Clustered() {
		return errNotClustered
	}
	id, addr := string(args[2]), string(args[3])
	if id == "" || strings.ContainsAny(id, " \t\r\n,=") {
		return ErrorReply("ERR invalid node id '" + cString(args[2], 128) + "'")
	}
	if _, _, ok := router.SplitAddr(addr); !ok {
		return ErrorReply("ERR invalid raft address '" + cString(args[3], 128) + "': want host:port")
	}
	if err := s.node.AddNode(id, addr); err != nil {
		return errorText(err)
	}
	return OK
}

// cmdRAFTREMOVE is RAFT REMOVE id: the node leaves every shard's
// configuration (a leader removing itself hands leadership over first).
func (s *Server) cmdRAFTREMOVE(c *Client, args [][]byte) Reply {
	if !s.node.Clustered() {
		return errNotClustered
	}
	if err := s.node.RemoveNode(string(args[2])); err != nil {
		return errorText(err)
	}
	return OK
}

// cmdRAFTTRANSFER is RAFT TRANSFER shard [id]: shard's leadership moves to
// id (or to a voter raft picks when id is absent).
func (s *Server) cmdRAFTTRANSFER(c *Client, args [][]byte) Reply {
	if len(args) > 4 {
		return ErrorReply("ERR wrong number of arguments for 'raft|transfer' command")
	}
	if !s.node.Clustered() {
		return errNotClustered
	}
	i, err := strconv.Atoi(string(args[2]))
	if err != nil {
		return errNotInteger
	}
	if i < 0 || i >= s.node.NumShards() {
		return ErrorReply("ERR shard " + strconv.Itoa(i) + " does not exist (shards 0-" + strconv.Itoa(s.node.NumShards()-1) + ")")
	}
	id := ""
	if len(args) == 4 {
		id = string(args[3])
	}
	if err := s.node.TransferLeader(i, id); err != nil {
		return errorText(err)
	}
	return OK
}

// cmdRAFTINFO is RAFT INFO: this node's identity, readiness and per-shard
// Raft state as INFO-style "field:value" lines.
func (s *Server) cmdRAFTINFO(c *Client, args [][]byte) Reply {
	var b strings.Builder
	info.WriteLine(&b, "node_id", s.nodeID())
	info.WriteLine(&b, "raft_addr", s.node.RaftAddr())
	info.WriteLine(&b, "client_addr", s.ownClientAddr(c))
	info.WriteBool(&b, "clustered", s.node.Clustered())
	info.WriteBool(&b, "cluster_enabled", s.config().ClusterEnabled)
	ready := s.node.Ready()
	info.WriteBool(&b, "ready", ready == "")
	if ready != "" {
		info.WriteLine(&b, "not_ready_reason", strings.NewReplacer("\r", " ", "\n", " ").Replace(ready))
	}
	s.shardLines(&b)
	return Verbatim(b.String())
}

// cmdRAFTHELP lists the RAFT subcommands.
func cmdRAFTHELP(c *Client, args [][]byte) Reply {
	return helpReply("RAFT",
		"NODES",
		"    List the members: id, raft-addr, client-addr, voter, myself, leads (shard indexes).",
		"SHARDS",
		"    List the shards: slot range, leader, term, commit and applied index, this node's role.",
		"ADD <node-id> <raft-addr>",
		"    Add a node as a voter of every shard.",
		"REMOVE <node-id>",
		"    Remove a node from every shard.",
		"TRANSFER <shard> [<node-id>]",
		"    Transfer a shard's leadership to <node-id> (or a voter Raft picks).",
		"INFO",
		"    Return this node's Raft state.",
	)
}

// shardLines writes "shards:N" and one line per shard
// (router.View.ShardLines).
func (s *Server) shardLines(b *strings.Builder) {
	writeFields(b, s.view.ShardLines())
}
