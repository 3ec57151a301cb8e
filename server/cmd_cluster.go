package server

import (
	"errors"
	"net"
	"strconv"
	"strings"

	"streamd/replication"
	"streamd/server/info"
	"streamd/server/resp"
	"streamd/server/router"
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
				withFlags(sub("help", 2, "Returns helpful text about the different subcommands.", basic(cmdCLUSTERHELP)),
					"loading", "stale"),
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
	return BulkString(s.view.MyShardID())
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
func (s *Server) nodeID() string { return s.view.NodeID() }

// member resolves a member's client address (host, port) for c's view.
func (s *Server) member(c *Client, id, raftAddr string) router.Member {
	return s.view.Member(id, raftAddr, s.ownClientAddr(c))
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

// cmdCLUSTERSLOTS is CLUSTER SLOTS (router.View.Slots).
func (s *Server) cmdCLUSTERSLOTS(c *Client, args [][]byte) Reply {
	return s.view.Slots(s.ownClientAddr(c))
}

// cmdCLUSTERSHARDS is CLUSTER SHARDS (router.View.Shards).
func (s *Server) cmdCLUSTERSHARDS(c *Client, args [][]byte) Reply {
	return s.view.Shards(s.ownClientAddr(c))
}

// cmdCLUSTERNODES is CLUSTER NODES in Redis's line format
// (router.View.Nodes).
func (s *Server) cmdCLUSTERNODES(c *Client, args [][]byte) Reply {
	return Verbatim(s.view.Nodes(s.ownClientAddr(c)))
}

// cmdCLUSTERINFO is CLUSTER INFO: Redis's fields from the shards' Raft
// state (router.View.ClusterInfo).
func (s *Server) cmdCLUSTERINFO(c *Client, args [][]byte) Reply {
	var b strings.Builder
	s.clusterInfo(&b)
	return Verbatim(b.String())
}

func (s *Server) clusterInfo(b *strings.Builder) {
	writeFields(b, s.view.ClusterInfo())
}

// writeFields writes router fields as INFO lines.
func writeFields(b *strings.Builder, fields []router.Field) {
	for _, f := range fields {
		info.WriteLine(b, f.Name, f.Value)
	}
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
