package server

import (
	"strconv"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/router"
	"streamd/server/xreply"
)

// Keyless commands over a keyspace split into shards: DBSIZE and INFO
// keyspace sum every shard, KEYS concatenates them, SCAN walks them one
// after the other (the cursor carries the shard in its high bits), and
// FLUSHDB/FLUSHALL and the replicated CONFIG SET parameters are applied to
// every shard. Reads use each shard's read point (Node.ReadBarrier) and
// then this node's replica; writes on a shard led elsewhere go to its
// leader as STREAMD.ONSHARD <i> <command…>, an internal-only command that
// runs the command with its keyless operations pinned to shard i.

// onShardCommand is the internal command that pins a keyless command to a
// shard; only internal connections (other nodes) may send it.
const onShardCommand = "STREAMD.ONSHARD"

// fanout runs a keyless command on every shard and combines the answers.
func (s *Server) fanout(c *Client, cmd *Command, args [][]byte) Reply {
	p, r := cmd.Planner(c, args)
	if r != nil {
		return r
	}
	n := s.node.NumShards()
	switch op := p.Op.(type) {
	case wire.DBSize:
		var total int64
		for i := range n {
			res, err := s.applyOn(c, i, op)
			if err != nil {
				return xreply.Error(err)
			}
			v, _ := res.(int64)
			total += v
		}
		return p.Format(total, nil)
	case wire.KeysMatch:
		all := []string{}
		for i := range n {
			res, err := s.applyOn(c, i, op)
			if err != nil {
				return xreply.Error(err)
			}
			keys, _ := res.([]string)
			all = append(all, keys...)
		}
		return p.Format(all, nil)
	case wire.Scan:
		return p.Format(s.scanShards(c, op))
	case wire.RandomKey:
		// A random shard first, then the others in turn, until one has
		// a key.
		first := int(op.Seed % uint64(n))
		for k := range n {
			res, err := s.applyOn(c, (first+k)%n, op)
			if err != nil || res != nil {
				return p.Format(res, err)
			}
		}
		return p.Format(nil, nil)
	case wire.FlushDB, wire.FlushAll, wire.SwapDB:
		for i := range n {
			if r := s.writeOnShard(c, i, op.(wire.Command), args); r != "" {
				return r
			}
		}
		return OK
	}
	return s.runPlan(c, &p)
}

// writeOnShard applies a keyless write to shard i: here when this node
// leads it, else at its leader (STREAMD.ONSHARD). It returns "" when the
// write succeeded, else the error reply.
func (s *Server) writeOnShard(c *Client, i int, op wire.Command, args [][]byte) ErrorReply {
	if s.router.Leads(i) {
		_, err := s.applyOn(c, i, op)
		if err == nil {
			return ""
		}
		if !router.IsNotLeader(err) {
			return ErrorReply(err.Error())
		}
		c.notLeader = false
	}
	addr := s.leaderAddr(i)
	if addr == "" {
		return router.ErrClusterDown
	}
	if c.internal {
		return router.NotLeaderReply(s.router.Leader(i))
	}
	fwd := append([][]byte{[]byte(onShardCommand), []byte(strconv.Itoa(i))}, args...)
	r, _ := s.forward(c, addr, fwd, router.FwdWrite)
	if e, ok := r.(ErrorReply); ok {
		return e
	}
	return ""
}

// scanShards is SCAN over the shards, one shard per call, the shard in
// the cursor's high bits (router.SplitScanCursor, NextScanCursor).
func (s *Server) scanShards(c *Client, q wire.Scan) (any, error) {
	n := s.node.NumShards()
	shard, inner := router.SplitScanCursor(q.Cursor, n)
	if shard >= n {
		return state.ScanResult{Keys: []string{}}, nil
	}
	q.Cursor = inner
	res, err := s.applyOn(c, shard, q)
	if err != nil {
		return nil, err
	}
	sr, _ := res.(state.ScanResult)
	sr.Cursor = router.NextScanCursor(shard, n, sr.Cursor)
	return sr, nil
}

// keyspaceInfoAll sums INFO keyspace's per-database counts over the shards
// as this node's replicas hold them (INFO and /metrics do not wait for a
// read point).
func (s *Server) keyspaceInfoAll() (any, error) {
	var sum []state.DBInfo
	for i := range s.node.NumShards() {
		res, err := s.node.Shard(i).Query(wire.KeyspaceInfo{})
		if err != nil {
			return nil, err
		}
		dbs, _ := res.([]state.DBInfo)
		sum = router.AddKeyspace(sum, dbs)
	}
	return sum, nil
}

// proposeConfig applies a replicated CONFIG SET parameter to every shard
// (only the pinned one for STREAMD.ONSHARD): here where this node leads,
// else at the shard's leader.
func (s *Server) proposeConfig(c *Client, name, value string) error {
	op := wire.ConfigSet{Name: name, Value: value}
	if c.onShard >= 0 {
		_, err := s.node.Shard(c.onShard).Propose(op)
		return err
	}
	args := [][]byte{[]byte("CONFIG"), []byte("SET"), []byte(name), []byte(value)}
	for i := range s.node.NumShards() {
		if r := s.writeOnShard(c, i, op, args); r != "" {
			return errReply(r)
		}
	}
	return nil
}

// errReply is a reply error as an error.
type errReply ErrorReply

func (e errReply) Error() string { return string(e) }

// runOnShard runs STREAMD.ONSHARD <i> <command…> from another node: the
// command runs here with its keyless operations pinned to shard i (this
// node must lead it; otherwise the not-leader error is the reply).
func (s *Server) runOnShard(c *Client, args [][]byte) {
	if len(args) < 3 {
		c.reply(ErrorReply("ERR wrong number of arguments for '" + onShardCommand + "' command"))
		return
	}
	i, err := strconv.Atoi(string(args[1]))
	if err != nil || i < 0 || i >= s.node.NumShards() {
		c.reply(ErrorReply("ERR invalid shard"))
		return
	}
	inner := args[2:]
	if i == 0 && isOpt(inner[0], aclLoadCommand) {
		// Another node's ACL LOAD (the users it read from its aclfile).
		c.send(s.runACLLoad(c, inner))
		return
	}
	cmd, rej := s.lookup(inner)
	if rej != "" {
		c.reply(rej)
		return
	}
	if d := s.aclCheck(c, cmd, inner); d != nil {
		c.reply(s.aclDenied(c, d, aclCtxTop))
		return
	}
	if !s.router.Leads(i) {
		c.reply(router.NotLeaderReply(s.router.Leader(i)))
		return
	}
	if s.oomRefusal(c, cmd) {
		c.reply(errOOM)
		return
	}
	c.onShard = i
	defer func() { c.onShard = -1 }()
	var r Reply
	if cmd.Handler != nil {
		r = cmd.Handler(c, inner)
	} else {
		r = s.runPlanner(c, cmd, inner)
	}
	c.send(r)
}
