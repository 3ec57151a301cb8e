package server

import (
	"sync/atomic"
	"time"

	"streamd/internal/keywait"
	"streamd/replication/wire"
	"streamd/server/xreply"
)

// MULTI/EXEC/DISCARD/WATCH/UNWATCH, after Redis's multi.c. Queued keyspace
// commands are planned at EXEC and their operations sent as one wire.Exec
// through Propose: one atomic step (one log entry once there is a log).

// txState is a client's transaction state; the Client holds it in c.tx.
// Only the client's goroutine touches it, except dirty, which writers set
// (through the hub's watchers table) from any goroutine.
type txState struct {
	multi   bool
	queue   []queuedCmd
	errored bool // a command was refused while queuing: EXECABORT
	// execing is set while EXEC runs its queue: a queued UNWATCH must not
	// drop the watches before the EXEC's own check.
	execing bool
	watched []watchedKey
	dirty   atomic.Bool
	// shard is the shard of the transaction's keys (queued and watched),
	// -1 before the first; remoteWatch is the raft address of the node
	// whose upstream holds the client's WATCHes, "" when they are here.
	shard       int
	remoteWatch string
	// watchLost is the shard's lost-leadership channel (lostChan) taken
	// at the first WATCH made here; closed by EXEC time, the EXEC aborts.
	watchLost <-chan struct{}
	// holdEnd, when set, is the deadline of an EXEC held during a
	// leadership transfer that is run here again (transfer_hold_exec.go).
	holdEnd time.Time
}

// queuedCmd is one command queued by MULTI.
type queuedCmd struct {
	cmd  *Command
	args [][]byte
}

// watchedKey is a WATCHed key and whether it existed when watched: a key
// that exists at WATCH and is gone at EXEC expired in between (a DEL would
// have marked the client dirty already), which aborts the EXEC as Redis's
// isWatchedKeyExpired does.
type watchedKey struct {
	key     keywait.Key
	existed bool
}

// Transaction replies.
const (
	errMultiNested  = ErrorReply("ERR MULTI calls can not be nested")
	errExecNoMulti  = ErrorReply("ERR EXEC without MULTI")
	errDiscardMulti = ErrorReply("ERR DISCARD without MULTI")
	errWatchInMulti = ErrorReply("ERR WATCH inside MULTI is not allowed")
	errExecAbort    = ErrorReply("EXECABORT Transaction discarded because of previous errors.")
	errNotInMulti   = ErrorReply("ERR Command not allowed inside a transaction")
	queued          = SimpleString("QUEUED")
)

// txCommands are MULTI, EXEC, DISCARD, WATCH and UNWATCH.
func txCommands() []*Command {
	row := func(name string, arity int, flags, acl []string, first, last int, summary, since string,
		h func(*Client, [][]byte) Reply) *Command {
		step := 0
		if first > 0 {
			step = 1
		}
		return &Command{Name: name, Arity: arity, Flags: flags, FirstKey: first, LastKey: last, Step: step,
			ACL: acl, Summary: summary, Since: since, Group: "transactions", Handler: h}
	}
	fast := []string{"noscript", "loading", "stale", "fast", "allow_busy"}
	return []*Command{
		withControl(ctlMulti, row("multi", 1, fast, []string{"@fast", "@transaction"}, 0, 0,
			"Mark the start of a transaction block", "1.2.0", cmdMULTI)),
		withControl(ctlExec, row("exec", 1, []string{"noscript", "loading", "stale", "skip_slowlog"}, []string{"@slow", "@transaction"}, 0, 0,
			"Execute all commands issued after MULTI", "1.2.0", cmdEXEC)),
		withControl(ctlDiscard, row("discard", 1, fast, []string{"@fast", "@transaction"}, 0, 0,
			"Discard all commands issued after MULTI", "2.0.0", cmdDISCARD)),
		withControl(ctlWatch, row("watch", -2, fast, []string{"@fast", "@transaction"}, 1, -1,
			"Watch the given keys to determine execution of the MULTI/EXEC block", "2.2.0", cmdWATCH)),
		withControl(ctlUnwatch, row("unwatch", 1, fast, []string{"@fast", "@transaction"}, 0, 0,
			"Forget about all watched keys", "2.2.0", cmdUNWATCH)),
	}
}

// txOf returns c's transaction state, creating it.
func (c *Client) txOf() *txState {
	if c.tx == nil {
		c.tx = &txState{shard: -1}
	}
	return c.tx
}

// inMulti reports whether the client is queuing commands after MULTI.
func (c *Client) inMulti() bool { return c.tx != nil && c.tx.multi }

// txIntercept queues a command sent after MULTI (all but EXEC, DISCARD,
// MULTI, WATCH, QUIT and RESET, as Redis's processCommand), answering
// +QUEUED; handled is false when the command must run now.
func (s *Server) txIntercept(c *Client, cmd *Command, args [][]byte) (r Reply, handled bool) {
	if !c.inMulti() {
		return nil, false
	}
	if cmd.runsInMulti() {
		return nil, false
	}
	if hasFlag(cmd, "no_multi") {
		c.tx.errored = true
		return errNotInMulti, true
	}
	c.tx.queue = append(c.tx.queue, queuedCmd{cmd: cmd, args: args})
	return queued, true
}

// txCommandError marks a pending MULTI as failed (a command refused while
// queuing: unknown, wrong arity, NOAUTH): EXEC will answer EXECABORT.
func (s *Server) txCommandError(c *Client) {
	if c.inMulti() {
		c.tx.errored = true
	}
}

func cmdMULTI(c *Client, args [][]byte) Reply {
	if c.inMulti() {
		return errMultiNested
	}
	c.txOf().multi = true
	return OK
}

func cmdDISCARD(c *Client, args [][]byte) Reply {
	if !c.inMulti() {
		return errDiscardMulti
	}
	c.srv.discardMulti(c)
	c.srv.unwatchAll(c)
	return OK
}

// discardMulti leaves MULTI and drops the queue.
func (s *Server) discardMulti(c *Client) {
	if c.tx != nil {
		c.tx.multi, c.tx.queue, c.tx.errored, c.tx.holdEnd = false, nil, false, time.Time{}
		if len(c.tx.watched) == 0 && c.tx.remoteWatch == "" {
			c.tx.shard = -1
		}
	}
}

func cmdWATCH(c *Client, args [][]byte) Reply {
	if c.inMulti() {
		return errWatchInMulti
	}
	c.srv.watch(c, args[1:])
	return OK
}

func cmdUNWATCH(c *Client, args [][]byte) Reply {
	if c.tx == nil || !c.tx.execing {
		c.srv.unwatchAll(c)
	}
	return OK
}

// watch adds keys to the client's watched keys in its database.
func (s *Server) watch(c *Client, keys [][]byte) {
	tx := c.txOf()
	h := s.hub()
	db := c.DB()
	for _, k := range keys {
		key := keywait.Key{DB: db, Name: string(k)}
		dup := false
		for _, w := range tx.watched {
			if w.key == key {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		res, err := s.keyShard(key.Name).Query(wire.Exists{DB: db, Names: []string{key.Name}})
		n, _ := res.(int64)
		tx.watched = append(tx.watched, watchedKey{key: key, existed: err == nil && n > 0})
		h.watchMu.Lock()
		set := h.watchers[key]
		if set == nil {
			set = make(map[*txState]struct{})
			h.watchers[key] = set
		}
		set[tx] = struct{}{}
		h.watched.Store(int64(len(h.watchers)))
		h.watchMu.Unlock()
	}
}

// unwatchAll forgets the client's watched keys (UNWATCH, EXEC, DISCARD).
func (s *Server) unwatchAll(c *Client) {
	tx := c.tx
	if tx == nil {
		return
	}
	if len(tx.watched) > 0 {
		h := s.hub()
		h.watchMu.Lock()
		for _, w := range tx.watched {
			if set := h.watchers[w.key]; set != nil {
				delete(set, tx)
				if len(set) == 0 {
					delete(h.watchers, w.key)
				}
			}
		}
		h.watched.Store(int64(len(h.watchers)))
		h.watchMu.Unlock()
	}
	tx.watched = nil
	tx.dirty.Store(false)
	if !tx.multi && tx.remoteWatch == "" {
		tx.shard = -1
	}
}

// dirtyWatchers marks the clients watching keys of db dirty.
func (s *Server) dirtyWatchers(db int, keys []string) {
	h := s.hub()
	if h.watched.Load() == 0 {
		// No key watched: a WATCH registered after this load comes
		// after the write was applied, so it sees the write's result.
		return
	}
	h.watchMu.Lock()
	defer h.watchMu.Unlock()
	if len(h.watchers) == 0 {
		return
	}
	for _, k := range keys {
		for tx := range h.watchers[keywait.Key{DB: db, Name: k}] {
			tx.dirty.Store(true)
		}
	}
}

// dirtyWatchersDB marks every client watching a key of db dirty (FLUSHDB;
// db < 0: FLUSHALL).
func (s *Server) dirtyWatchersDB(db int) {
	h := s.hub()
	h.watchMu.Lock()
	defer h.watchMu.Unlock()
	for k, set := range h.watchers {
		if db < 0 || k.DB == db {
			for tx := range set {
				tx.dirty.Store(true)
			}
		}
	}
}

// watchedExpired reports whether a watched key that existed at WATCH is gone.
func (s *Server) watchedExpired(tx *txState) bool {
	for _, w := range tx.watched {
		if !w.existed {
			continue
		}
		res, err := s.keyShard(w.key.Name).Query(wire.Exists{DB: w.key.DB, Names: []string{w.key.Name}})
		if n, _ := res.(int64); err == nil && n == 0 {
			return true
		}
	}
	return false
}

// cmdEXEC runs the queued commands: EXECABORT if one was refused while
// queuing, a null array if a watched key was touched, else one reply per
// command. Keyspace commands are planned in order (an argument error is
// that position's reply) and their operations applied as one wire.Exec;
// other commands (PING, SELECT, …) run in order while planning, so a SELECT
// inside MULTI moves the later commands to its database.
func cmdEXEC(c *Client, args [][]byte) Reply {
	s := c.srv
	if !c.inMulti() {
		return errExecNoMulti
	}
	tx := c.tx
	queue, errored, shard := tx.queue, tx.errored, max(tx.shard, 0)
	holdEnd := tx.holdEnd // set when a held EXEC is run here again
	s.discardMulti(c)
	defer s.unwatchAll(c)
	if errored {
		return errExecAbort
	}
	if tx.dirty.Load() {
		return NullArray{}
	}
	startDB := c.DB()
	replies := make(Array, len(queue))
	plans := make([]*Plan, len(queue))
	var ops []wire.Op
	var reads []string
	tx.execing = true
	for i, q := range queue {
		start := time.Now()
		// The rules may have changed since the command was queued
		// (Redis's execCommand checks each one again).
		if d := s.aclCheck(c, q.cmd, q.args); d != nil {
			s.aclDenied(c, d, aclCtxMulti)
			replies[i] = execDenied(d)
			s.noteCall(q.cmd, start, replies[i])
			continue
		}
		if q.cmd.Planner == nil {
			replies[i] = q.cmd.Handler(c, q.args)
			s.noteCall(q.cmd, start, replies[i])
			continue
		}
		p, r := q.cmd.Planner(c, q.args)
		if r != nil {
			replies[i] = r
			s.noteCall(q.cmd, start, r)
			continue
		}
		plans[i] = &p
		ops = append(ops, p.Op)
		if rq, ok := p.Op.(wire.Query); ok {
			reads = append(reads, rq.Keys()...)
		}
	}
	tx.execing = false

	if len(ops) == 0 {
		if _, _, aborted := s.execPropose(c, tx, shard, wire.Exec{}, nil); aborted {
			return NullArray{}
		}
		return replies
	}
	start := time.Now()
	cmd := wire.Exec{DB: startDB, Ops: ops}
	for _, op := range ops {
		if len(op.Keys()) > 0 {
			shard = s.opShard(c, op)
			break
		}
	}
	res, err, aborted := s.execPropose(c, tx, shard, cmd, reads)
	if aborted {
		return NullArray{}
	}
	if c.transferRefused {
		// The shard's leadership is being handed over: nothing was
		// applied; held (transfer_hold_exec.go) unless it may not be.
		c.transferRefused = false
		if s.execHoldable(c) {
			r, res2, err2 := s.holdExec(c, tx, shard, cmd, queue, startDB, holdEnd)
			if r != nil {
				return r
			}
			res, err = res2, err2
		}
	}
	if c.notLeader {
		// The shard moved away after routing: nothing was applied.
		c.notLeader = false
		return xreply.Error(err)
	}
	outs, _ := res.([]wire.Outcome)
	j := 0
	for i, p := range plans {
		if p == nil {
			continue
		}
		var r Reply
		switch {
		case err != nil:
			r = xreply.Error(err)
		case j < len(outs):
			r = p.Format(outs[j].Result, outs[j].Err)
		default:
			r = ErrorReply("ERR EXEC lost the answer of a queued command")
		}
		j++
		replies[i] = r
		s.noteCall(queue[i].cmd, start, r)
	}
	return replies
}

// resetClientState drops a client's keyspace-side state (RESET, connection
// close): MULTI discarded, keys unwatched, tracking off. A blocked command
// ends on its own (WaitBlocked sees the close) and unsubscribes its waiter.
func (s *Server) resetClientState(c *Client) {
	s.discardMulti(c)
	s.unwatchAll(c)
	s.trackingOff(c)
}
