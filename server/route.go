package server

import (
	"errors"
	"net"
	"strconv"
	"time"

	"streamd/config"
	"streamd/replication"
)

// Routing (issue #4). Every keyed command goes to the shard (Raft group)
// that owns its keys' hash slot: run here when this node leads that shard,
// otherwise forwarded to the leader over a per-client upstream connection
// (plain mode, forward.go) or answered with MOVED (cluster mode, so cluster
// clients route themselves). Keys of one request in different shards — in
// cluster mode, different slots — answer CROSSSLOT, as Redis Cluster.
// A single node with one shard and cluster mode off skips all of it.

// Routing replies, with Redis Cluster's texts.
const (
	errCrossSlot   = ErrorReply("CROSSSLOT Keys in request don't hash to the same slot")
	errClusterDown = ErrorReply("CLUSTERDOWN The cluster is down: the shard has no leader")
)

// routeKind says where a request runs.
type routeKind uint8

const (
	// routeLocal: run here (on shard, or keyless).
	routeLocal routeKind = iota
	// routeForward: send to the shard's leader at addr and relay its reply.
	routeForward
	// routeReply: answer reply (CROSSSLOT, MOVED, CLUSTERDOWN, not leader).
	routeReply
)

// route is where a request's keys send it.
type route struct {
	kind  routeKind
	shard int // -1: no keys
	slot  int // the first key's slot (MOVED's)
	addr  string
	reply ErrorReply
}

// routing reports whether requests must be routed at all: several shards,
// other nodes, or cluster mode (which checks slots even on one node).
func (s *Server) routing() bool {
	return s.routed
}

// initRouting decides whether requests are routed (NewNode calls it).
func (s *Server) initRouting(cfg config.Config) {
	s.clusterMode = cfg.ClusterEnabled
	s.routed = s.node.NumShards() > 1 || s.node.Clustered() || s.clusterMode
}

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

// xreadKeys finds the keys of XREAD/XREADGROUP as parseXRead reads the
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

// keySlot is the hash slot of a key given as bytes.
func keySlot(k []byte) int { return replication.KeySlot(string(k)) }

// routeKeys decides where a request with these keys runs for client c.
func (s *Server) routeKeys(c *Client, keys [][]byte) route {
	if len(keys) == 0 {
		return route{kind: routeLocal, shard: -1}
	}
	n := s.node.NumShards()
	slot := keySlot(keys[0])
	shard := replication.ShardOfSlot(slot, n)
	for _, k := range keys[1:] {
		ks := keySlot(k)
		if (s.clusterMode && ks != slot) || replication.ShardOfSlot(ks, n) != shard {
			return route{kind: routeReply, shard: shard, slot: slot, reply: errCrossSlot}
		}
	}
	return s.routeShard(c, shard, slot)
}

// routeShard decides where a request for shard (first key in slot) runs.
func (s *Server) routeShard(c *Client, shard, slot int) route {
	rt := route{kind: routeLocal, shard: shard, slot: slot}
	if !s.node.Clustered() || s.leads(shard) {
		return rt
	}
	addr, local := s.awaitLeader(shard)
	if local {
		return rt
	}
	switch {
	case addr == "":
		rt.kind, rt.reply = routeReply, errClusterDown
	case c != nil && c.internal:
		// An internal connection never forwards again (no loops): the
		// node that sent it retries at the leader.
		rt.kind, rt.reply = routeReply, notLeaderReply(s.nodeLeader(shard))
	case s.clusterMode:
		rt.kind, rt.reply = routeReply, s.movedReply(slot, addr)
	default:
		rt.kind, rt.addr = routeForward, addr
	}
	return rt
}

// awaitLeader returns the raft address of shard's leader, waiting up to
// leaderWait while none is known or while this node has just been elected
// and is still applying the log (local reports that it now serves the
// shard). An election or a leadership transfer then looks like a slow
// reply to the client rather than CLUSTERDOWN; "" after the wait means the
// shard has no leader.
func (s *Server) awaitLeader(shard int) (addr string, local bool) {
	deadline := time.Now().Add(s.leaderWait())
	for {
		_, addr = s.nodeLeader(shard)
		if addr != "" && addr != s.node.RaftAddr() {
			return addr, false
		}
		if s.leads(shard) {
			return "", true
		}
		if time.Now().After(deadline) {
			if addr == s.node.RaftAddr() {
				addr = "" // elected here but not ready: nobody serves it
			}
			return addr, false
		}
		select {
		case <-s.done:
			return "", false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// leaderWait is how long a request waits for its shard to have a leader:
// two election timeouts plus the lease, the time raft needs to replace a
// leader.
func (s *Server) leaderWait() time.Duration {
	cfg := s.config()
	e, l := cfg.RaftElectionTimeout, cfg.RaftLeaseTimeout
	if e <= 0 {
		e = config.DefaultRaftElectionTimeout
	}
	if l <= 0 {
		l = config.DefaultRaftLeaseTimeout
	}
	return 2*e + l
}

// leads reports whether this node leads shard and is ready to serve it.
func (s *Server) leads(shard int) bool {
	return !s.node.Clustered() || s.node.Shard(shard).IsLeader()
}

// movedReply is Redis Cluster's redirection: MOVED <slot> <host:port>, the
// client address of the node at raftAddr.
func (s *Server) movedReply(slot int, raftAddr string) ErrorReply {
	addr, err := s.nodeClientAddrOf(raftAddr)
	if err != nil || addr == "" {
		return ErrorReply("TRYAGAIN the leader of slot " + strconv.Itoa(slot) + " is not reachable: " + errText(err))
	}
	return ErrorReply("MOVED " + strconv.Itoa(slot) + " " + addr)
}

// notLeaderReply is the reply of an internal connection asking a node that
// does not lead the shard (the NotLeaderError text).
func notLeaderReply(id, addr string) ErrorReply {
	return ErrorReply((&replication.NotLeaderError{LeaderID: id, LeaderAddr: addr}).Error())
}

func errText(err error) string {
	if err == nil {
		return "unknown address"
	}
	return err.Error()
}

// isNotLeader reports whether err says the shard is led elsewhere (the
// leadership moved after the request was routed here).
func isNotLeader(err error) bool {
	var nle *replication.NotLeaderError
	return errors.As(err, &nle)
}

// opShard is the shard an operation runs on: the client's pinned shard
// (STREAMD.ONSHARD), else its first key's, else shard 0.
func (s *Server) opShard(c *Client, keys []string) int {
	if c != nil && c.onShard >= 0 {
		return c.onShard
	}
	if len(keys) == 0 || s.node.NumShards() == 1 {
		return 0
	}
	return s.node.ShardOfKey(keys[0])
}

// nodeLeader is the leader of shard i ("" when unknown).
func (s *Server) nodeLeader(i int) (id, raftAddr string) {
	if !s.node.Clustered() {
		return "", ""
	}
	return s.node.Leader(i)
}

// nodeClientAddrOf is the client address of the member at raftAddr.
func (s *Server) nodeClientAddrOf(raftAddr string) (string, error) {
	return s.node.ClientAddrOf(raftAddr)
}

// readBarrier is the linearizable read point for shard i on a clustered
// node (nothing to wait for on an embedded single node).
func (s *Server) readBarrier(i int) error {
	if !s.node.Clustered() {
		return nil
	}
	return s.node.ReadBarrier(i)
}

// dialRESP opens an internal RESP connection to the node at raftAddr.
func (s *Server) dialRESP(raftAddr string) (net.Conn, error) {
	return s.node.DialRESP(raftAddr)
}

// routeRequest routes a request that is about to run here (after lookup,
// arity and auth): keyed commands for a shard led elsewhere are forwarded
// (or redirected), keys across shards refused, keyless commands that span
// the keyspace fanned out over the shards, and MULTI/EXEC/WATCH kept on one
// shard. handled reports that the request was dealt with: r is its reply
// (nil when already answered, as a refusal is); otherwise it runs here as
// usual. The connection's pipeline is drained before anything is answered
// here.
func (s *Server) routeRequest(c *Client, cmd *Command, args [][]byte, pl *pipeline) (r Reply, handled bool) {
	if c.onShard >= 0 {
		return nil, false // a pinned internal request runs here as is
	}
	switch cmd.Name {
	case "exec":
		pl.drain()
		return s.routeExec(c)
	case "discard", "unwatch", "reset":
		// What unwatches here unwatches on the upstream too: DISCARD in
		// MULTI, UNWATCH outside it (inside, it is queued), RESET.
		if (cmd.Name == "discard" && c.inMulti()) || (cmd.Name == "unwatch" && !c.inMulti()) || cmd.Name == "reset" {
			s.dropRemoteWatch(c)
		}
		return nil, false
	case "multi", "quit":
		return nil, false
	}
	keys := commandKeys(cmd, args)
	if c.inMulti() {
		// Queued: every keyed command of a transaction must be in one
		// shard (one slot in cluster mode), as Redis Cluster checks
		// while queuing; a refusal makes EXEC answer EXECABORT.
		if len(keys) == 0 || cmd.Name == "watch" {
			return nil, false
		}
		rt := s.routeKeys(c, keys)
		tx := c.tx
		switch {
		case rt.reply == errCrossSlot || (tx.shard >= 0 && tx.shard != rt.shard):
			pl.drain()
			s.reject(c, cmd, errCrossSlot)
			return nil, true
		case rt.kind == routeReply && (s.clusterMode || c.internal):
			pl.drain()
			s.reject(c, cmd, rt.reply)
			return nil, true
		}
		tx.shard = rt.shard
		return nil, false
	}
	if len(keys) == 0 {
		if cmd.Fanout && c.onShard < 0 && (s.node.NumShards() > 1 || s.node.Clustered()) {
			pl.drain()
			return s.fanout(c, cmd, args), true
		}
		return nil, false
	}
	rt := s.routeKeys(c, keys)
	if cmd.Name == "watch" {
		pl.drain()
		return s.routeWatch(c, args, rt)
	}
	switch rt.kind {
	case routeReply:
		pl.drain()
		s.reject(c, cmd, rt.reply)
		return nil, true
	case routeForward:
		pl.drain()
		return s.forwardRouted(c, cmd, args, rt), true
	}
	return nil, false
}

// reroute routes a request again after running it here found its shard led
// elsewhere; nil when it must stay here (inside MULTI, an internal
// connection, or the shard is now led here again).
func (s *Server) reroute(c *Client, cmd *Command, args [][]byte) Reply {
	if !s.routed || c.internal || c.inMulti() || c.onShard >= 0 {
		return nil
	}
	rt := s.routeKeys(c, commandKeys(cmd, args))
	switch rt.kind {
	case routeReply:
		return rt.reply
	case routeForward:
		kind := forwardKind(cmd, args)
		r, _ := s.forward(c, rt.addr, args, kind)
		if kind != fwdRead {
			c.lastWr = lastWrite{shard: rt.shard, up: rt.addr, ok: true}
		}
		return r
	}
	return nil
}

// routeWatch runs WATCH where its keys' shard is led: here, or forwarded on
// the upstream that will also take the transaction's EXEC.
func (s *Server) routeWatch(c *Client, args [][]byte, rt route) (Reply, bool) {
	tx := c.txOf()
	if rt.reply == errCrossSlot || (tx.shard >= 0 && rt.shard != tx.shard) {
		return errCrossSlot, true
	}
	switch rt.kind {
	case routeReply:
		return rt.reply, true
	case routeForward:
		if len(tx.watched) > 0 {
			// Keys watched here while this node led the shard: once it
			// moved, writes at the new leader never mark them dirty.
			tx.dirty.Store(true)
		}
		r, _ := s.forward(c, rt.addr, args, fwdRead)
		if raw, ok := r.(rawReply); ok && string(raw) == "+OK\r\n" {
			if tx.remoteWatch != "" && tx.remoteWatch != rt.addr {
				// The first leader's WATCHes cannot be checked by
				// an EXEC at the second.
				tx.dirty.Store(true)
			}
			tx.shard, tx.remoteWatch = rt.shard, rt.addr
		}
		return r, true
	}
	tx.shard = rt.shard
	if tx.watchLost == nil {
		// Writes applied while this node follows the shard mark no
		// watcher dirty: a loss of leadership after this WATCH aborts
		// the EXEC (checked in routeExec).
		tx.watchLost = s.lostChan(rt.shard)
		if !s.leads(rt.shard) {
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
	rt := s.routeShard(c, tx.shard, -1)
	if watchLostLeadership(tx) {
		tx.dirty.Store(true)
	}
	if rt.kind == routeLocal {
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
	if rt.kind == routeReply {
		if s.clusterMode && len(queue) > 0 {
			if keys := firstKeys(queue); len(keys) > 0 {
				return s.movedReply(keySlot(keys[0]), s.leaderAddr(shard)), true
			}
		}
		return rt.reply, true
	}
	if tx.remoteWatch != "" && tx.remoteWatch != rt.addr {
		s.dropRemoteWatch(c)
		return NullArray{}, true
	}
	r := s.forwardTx(c, rt.addr, shard, queue)
	tx.remoteWatch = "" // EXEC unwatched there
	return r, true
}

// leaderAddr is the raft address of shard i's leader ("" when unknown).
func (s *Server) leaderAddr(i int) string {
	_, addr := s.nodeLeader(i)
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
	s.forwardSimple(c, addr, []byte("UNWATCH"))
}

// keyShard returns the shard that owns key.
func (s *Server) keyShard(key string) *replication.Shard {
	if s.node.NumShards() == 1 {
		return s.node.Shard(0)
	}
	return s.node.Shard(s.node.ShardOfKey(key))
}
