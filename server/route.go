package server

import (
	"time"

	"streamd/replication"
	"streamd/replication/wire"
	"streamd/server/router"
)

// Routing (issue #4). Every keyed command goes to the shard (Raft group)
// that owns its keys' hash slot; the server's router (server/router)
// decides: run here when this node leads that shard, otherwise forwarded
// to the leader over a per-client upstream connection (plain mode,
// forward.go) or answered with MOVED (cluster mode, so cluster clients
// route themselves). Keys of one request in different shards — in cluster
// mode, different slots — answer CROSSSLOT, as Redis Cluster. On a single
// node with one shard and cluster mode off, router.Single runs everything
// here. This file takes the keys from a request and keeps MULTI/WATCH/EXEC
// on one shard.

// commandKeys returns the keys a request names, from its arguments, before
// any planning: the row's KeysFrom for movable keys (XREAD/XREADGROUP's
// follow STREAMS), else its legacy key positions (FirstKey, LastKey, Step;
// LastKey < 0 counts from the end). Malformed arguments give the keys found
// so far (the planner, run where the first key is, answers the error).
func commandKeys(cmd *Command, args [][]byte) [][]byte {
	if cmd.KeysFrom != nil {
		return cmd.KeysFrom(args)
	}
	if cmd.FirstKey <= 0 || cmd.FirstKey >= len(args) {
		return nil
	}
	last := cmd.LastKey
	if last < 0 {
		last = len(args) + last
	}
	if last >= len(args) {
		last = len(args) - 1
	}
	step := max(cmd.Step, 1)
	if cmd.FirstKey == last {
		return args[last : last+1]
	}
	keys := make([][]byte, 0, (last-cmd.FirstKey)/step+1)
	for i := cmd.FirstKey; i <= last; i += step {
		keys = append(keys, args[i])
	}
	return keys
}

// xreadKeys finds the keys of XREAD/XREADGROUP as xargs.ParseRead reads the
// options: BLOCK n, COUNT n, GROUP g c, NOACK, then STREAMS key… id….
func xreadKeys(args [][]byte) [][]byte {
	for i := 1; i < len(args); i++ {
		switch o := args[i]; {
		case isOpt(o, "STREAMS"):
			rest := args[i+1:]
			if len(rest)%2 != 0 {
				return nil
			}
			return rest[:len(rest)/2]
		case isOpt(o, "BLOCK"), isOpt(o, "COUNT"):
			i++
		case isOpt(o, "GROUP"):
			i += 2
		}
	}
	return nil
}

// opShard is the shard an operation runs on: the client's pinned shard
// (STREAMD.ONSHARD), else its first key's, else shard 0.
func (s *Server) opShard(c *Client, op wire.Op) int {
	if c != nil && c.onShard >= 0 {
		return c.onShard
	}
	return s.router.ShardOf(op)
}

// routeRequest routes a request that is about to run here (after lookup,
// arity and auth): keyed commands for a shard led elsewhere are forwarded
// (or redirected), keys across shards refused, keyless commands that span
// the keyspace fanned out over the shards, and MULTI/EXEC/WATCH kept on one
// shard. handled reports that the request was dealt with: r is its reply
// (nil when already answered, as a refusal is; forwardQueued when
// forwarded in a pipeline, answered when it drains); otherwise it runs
// here as usual. start is when the request started. The connection's
// pipeline is drained before anything is answered here.
func (s *Server) routeRequest(c *Client, cmd *Command, args [][]byte, pl *pipeline, start time.Time) (r Reply, handled bool) {
	if c.onShard >= 0 {
		return nil, false // a pinned internal request runs here as is
	}
	switch cmd.Control {
	case ctlExec:
		pl.drain()
		return s.routeExec(c)
	case ctlDiscard, ctlUnwatch, ctlReset:
		// What unwatches here unwatches on the upstream too: DISCARD in
		// MULTI, UNWATCH outside it (inside, it is queued), RESET.
		if (cmd.Control == ctlDiscard && c.inMulti()) || (cmd.Control == ctlUnwatch && !c.inMulti()) || cmd.Control == ctlReset {
			pl.drain() // the UNWATCH goes on an upstream that may have replies to come
			s.dropRemoteWatch(c)
		}
		return nil, false
	case ctlMulti, ctlQuit:
		return nil, false
	}
	keys := commandKeys(cmd, args)
	if c.inMulti() {
		// Queued: every keyed command of a transaction must be in one
		// shard (one slot in cluster mode), as Redis Cluster checks
		// while queuing; a refusal makes EXEC answer EXECABORT. A
		// transaction another node forwarded here is queued even when
		// this node no longer leads its shard: EXEC then answers the
		// refusal (not run), and that node sends the transaction where
		// the shard is led now (forwardTxHeld) instead of failing it.
		if len(keys) == 0 || cmd.Control == ctlWatch {
			return nil, false
		}
		rt := s.router.Route(keys, c.internal)
		tx := c.tx
		switch {
		case rt.Reply == router.ErrCrossSlot || (tx.shard >= 0 && tx.shard != rt.Shard):
			pl.drain()
			s.reject(c, cmd, router.ErrCrossSlot)
			return nil, true
		case rt.Kind == router.Refuse && s.router.ClusterMode():
			pl.drain()
			s.reject(c, cmd, rt.Reply)
			return nil, true
		}
		tx.shard = rt.Shard
		return nil, false
	}
	if len(keys) == 0 {
		if cmd.Fanout && c.onShard < 0 && s.router.Spread() {
			pl.drain()
			return s.fanout(c, cmd, args), true
		}
		return nil, false
	}
	rt := s.router.Route(keys, c.internal)
	if cmd.Control == ctlWatch {
		pl.drain()
		return s.routeWatch(c, args, rt)
	}
	switch rt.Kind {
	case router.Refuse:
		pl.drain()
		s.reject(c, cmd, rt.Reply)
		return nil, true
	case router.Forward:
		if s.forwardPipelined(c, cmd, args, rt, pl, start) {
			return forwardQueued{}, true
		}
		pl.drain()
		return s.forwardRouted(c, cmd, args, rt), true
	}
	return nil, false
}

// reroute routes a request again after running it here found its shard led
// elsewhere; nil when it must stay here (inside MULTI, an internal
// connection, or the shard is now led here again).
func (s *Server) reroute(c *Client, cmd *Command, args [][]byte) Reply {
	if c.internal || c.inMulti() || c.onShard >= 0 {
		return nil
	}
	rt := s.router.Route(commandKeys(cmd, args), c.internal)
	switch rt.Kind {
	case router.Refuse:
		return rt.Reply
	case router.Forward:
		kind := forwardKind(cmd, args)
		r, _ := s.forward(c, rt.Addr, args, kind)
		if kind != router.FwdRead {
			c.lastWr = lastWrite{shard: rt.Shard, up: rt.Addr, ok: true}
		}
		return r
	}
	return nil
}

// routeWatch runs WATCH where its keys' shard is led: here, or forwarded on
// the upstream that will also take the transaction's EXEC.
func (s *Server) routeWatch(c *Client, args [][]byte, rt router.Route) (Reply, bool) {
	tx := c.txOf()
	if rt.Reply == router.ErrCrossSlot || (tx.shard >= 0 && rt.Shard != tx.shard) {
		return router.ErrCrossSlot, true
	}
	switch rt.Kind {
	case router.Refuse:
		return rt.Reply, true
	case router.Forward:
		if len(tx.watched) > 0 {
			// Keys watched here while this node led the shard: once it
			// moved, writes at the new leader never mark them dirty.
			tx.dirty.Store(true)
		}
		r, _ := s.forward(c, rt.Addr, args, router.FwdRead)
		if raw, ok := r.(router.Raw); ok && string(raw) == "+OK\r\n" {
			if tx.remoteWatch != "" && tx.remoteWatch != rt.Addr {
				// The first leader's WATCHes cannot be checked by
				// an EXEC at the second.
				tx.dirty.Store(true)
			}
			tx.shard, tx.remoteWatch = rt.Shard, rt.Addr
		}
		return r, true
	}
	tx.shard = rt.Shard
	if tx.watchLost == nil {
		// Writes applied while this node follows the shard mark no
		// watcher dirty: a loss of leadership after this WATCH aborts
		// the EXEC (checked in routeExec).
		tx.watchLost = s.lostChan(rt.Shard)
		if !s.router.Leads(rt.Shard) {
			tx.dirty.Store(true)
		}
	}
	return nil, false
}

// watchLostLeadership reports whether this node stopped leading the
// transaction's shard since the client's first local WATCH.
func watchLostLeadership(tx *txState) bool {
	if tx.watchLost == nil {
		return false
	}
	select {
	case <-tx.watchLost:
		return true
	default:
		return false
	}
}

// routeExec runs EXEC where the transaction's shard is led: here (the
// usual EXEC), or at the leader with MULTI, the queue and EXEC sent over
// the client's upstream there. In cluster mode a shard that moved away
// since queuing answers MOVED.
func (s *Server) routeExec(c *Client) (Reply, bool) {
	tx := c.tx
	if tx == nil || !tx.multi || tx.errored || tx.shard < 0 {
		return nil, false
	}
	rt := s.router.RouteShard(tx.shard, -1, c.internal)
	if watchLostLeadership(tx) {
		tx.dirty.Store(true)
	}
	if rt.Kind == router.Local {
		if tx.remoteWatch != "" {
			// Watched on the former leader: the watch cannot be
			// checked here, so the transaction aborts as if touched.
			s.dropRemoteWatch(c)
			tx.dirty.Store(true)
		}
		return nil, false
	}
	queue, shard, localWatch := tx.queue, tx.shard, len(tx.watched) > 0
	s.discardMulti(c)
	defer s.unwatchAll(c)
	if tx.dirty.Load() || localWatch {
		// A WATCH made here cannot be checked at another node.
		return NullArray{}, true
	}
	if rt.Kind == router.Refuse {
		return s.execRefusal(rt, shard, queue), true
	}
	if tx.remoteWatch != "" && tx.remoteWatch != rt.Addr {
		s.dropRemoteWatch(c)
		return NullArray{}, true
	}
	// Held if the leader refuses it while handing the shard over.
	r := s.forwardTxHeld(c, rt.Addr, shard, queue, tx.remoteWatch != "", time.Time{})
	tx.remoteWatch = "" // EXEC unwatched there
	return r, true
}

// leaderAddr is the raft address of shard i's leader ("" when unknown).
func (s *Server) leaderAddr(i int) string {
	_, addr := s.router.Leader(i)
	return addr
}

// firstKeys returns the keys of the first queued command that has some.
func firstKeys(queue []queuedCmd) [][]byte {
	for _, q := range queue {
		if keys := commandKeys(q.cmd, q.args); len(keys) > 0 {
			return keys
		}
	}
	return nil
}

// dropRemoteWatch forgets the client's WATCHes on another node (UNWATCH
// sent there).
func (s *Server) dropRemoteWatch(c *Client) {
	if c.tx == nil || c.tx.remoteWatch == "" {
		return
	}
	addr := c.tx.remoteWatch
	c.tx.remoteWatch = ""
	s.cluster.ForwardSimple(c.fwd(), addr, []byte("UNWATCH"))
}

// keyShard returns the shard that owns key.
func (s *Server) keyShard(key string) *replication.Shard {
	if s.node.NumShards() == 1 {
		return s.node.Shard(0)
	}
	return s.node.Shard(s.node.ShardOfKey(key))
}
