package server

import (
	"sync"

	"streamd/internal/keywait"
	"streamd/replication/wire"
)

// keyspaceHub is the server-wide state of the keyspace side of the server:
// blocked readers (keywait), WATCHed keys and the tracking table.
type keyspaceHub struct {
	waits *keywait.Registry

	// writeMu orders writes against EXEC with WATCH. Every write holds it
	// shared from Propose until its keys are touched; an EXEC whose client
	// watches keys holds it exclusively from its dirty check through its
	// Propose. So a write applied before the EXEC has always marked the
	// watchers dirty by the time EXEC checks, as in single-threaded Redis.
	writeMu sync.RWMutex

	watchMu  sync.Mutex
	watchers map[keywait.Key]map[*txState]struct{}

	track *trackingTable
}

func newKeyspaceHub() *keyspaceHub {
	return &keyspaceHub{
		waits:    keywait.New(),
		watchers: make(map[keywait.Key]map[*txState]struct{}),
		track:    newTrackingTable(),
	}
}

// hub returns the server's keyspace hub (created in New).
func (s *Server) hub() *keyspaceHub { return s.keyspace }

// closeHub stops the hub's unblocker once the server is closing; a blocked
// client still subscribed ends on its deadline or connection close.
func (s *Server) closeHub() { s.keyspace.waits.Close() }

// runPlanner runs a keyspace command: the Planner parses its arguments into
// a Plan (or answers an argument error), the plan's Op goes to the Shard
// (Propose for a write, Query for a read) and Format turns the engine's
// answer into the reply. A plan with Block waits for its keys when the first
// answer is empty (XREAD/XREADGROUP BLOCK).
func (s *Server) runPlanner(c *Client, cmd *Command, args [][]byte) Reply {
	p, r := cmd.Planner(c, args)
	if r != nil {
		return r
	}
	return s.runPlan(c, p)
}

// runPlan runs a plan made by a Planner: its Op to the shard (waiting for
// its keys first if it blocks) and Format on the answer.
func (s *Server) runPlan(c *Client, p *Plan) Reply {
	if p.Block != nil {
		return s.runBlocking(c, p)
	}
	res, err := s.apply(c, p.Op)
	return p.Format(res, err)
}

// apply sends one operation to the shard of its keys (see applyOn).
func (s *Server) apply(c *Client, op wire.Op) (any, error) {
	i := 0
	if s.routed {
		i = s.opShard(c, op.Keys())
	}
	return s.applyOn(c, i, op)
}

// applyOn sends one operation to shard i. A read first passes the shard's
// linearizable read point on a clustered node (Node.ReadBarrier) and
// records its keys for the client's tracking (before the read, so a write
// racing with it still invalidates); a write touches its keys once applied
// and becomes the client's last write (WAIT). An operation refused because
// the shard is led elsewhere sets c.notLeader: the request is routed again.
func (s *Server) applyOn(c *Client, i int, op wire.Op) (any, error) {
	sh := s.node.Shard(i)
	switch o := op.(type) {
	case wire.Command:
		h := s.hub()
		h.writeMu.RLock()
		p := sh.ProposeAsync(o)
		res, err := p.Wait()
		e := effects(o, res, err)
		s.markDirty(e)
		h.writeMu.RUnlock()
		if c != nil {
			c.noteWrite(i, p, err)
		}
		s.notify(c, e)
		return res, err
	case wire.Query:
		if s.routed {
			if err := s.readBarrier(i); err != nil {
				if c != nil && isNotLeader(err) {
					c.notLeader = true
				}
				return nil, err
			}
		}
		s.trackRead(c, o.Keys())
		return sh.Query(o)
	}
	panic("server: operation is neither a wire.Command nor a wire.Query")
}

// noteWrite records a write the client proposed to shard i: its last write
// for WAIT (with the log index of its entry when the pending write knows
// it), or, when the shard was led elsewhere, that the request must be
// routed again.
func (c *Client) noteWrite(i int, p pendingWrite, err error) {
	if err != nil && isNotLeader(err) {
		c.notLeader = true
		return
	}
	var index uint64
	if ix, ok := p.(interface{ Index() uint64 }); ok {
		index = ix.Index() // *replication.Pending; a test's wrapper may not know
	}
	c.lastWr = lastWrite{shard: i, index: index, ok: true}
}

// keyEffects is what a write did to the keyspace, as the server must react
// to it: Modified keys are Redis's signalModifiedKey (they abort WATCH and
// invalidate tracking), Ready keys are its signalKeyAsReady /
// signalDeletedKeyAsReady (they wake blocked readers).
type keyEffects struct {
	db       int
	modified []string
	ready    []string
	flushDBs []int
	flushAll bool
	// extra holds the effects of an EXEC's operations, each in the
	// database it ran in (SELECT inside MULTI).
	extra []keyEffects
}

// effectsOf says what cmd did given its answer. It follows the Redis 7 calls
// of signalModifiedKey / signalKeyAsReady: XADD, XDEL and XTRIM that removed
// something, DEL, RENAME, EXPIRE/PERSIST that changed something and expiry
// modify keys; XREADGROUP, XACK, XCLAIM, XSETID and the XGROUP subcommands
// do not (Redis does not abort a WATCH for them), but XGROUP CREATE, SETID
// and DESTROY wake blocked XREADGROUP clients. An XREADGROUP's own delivery
// wakes nobody.
func effectsOf(cmd wire.Command, res any, err error, e *keyEffects) {
	n, _ := res.(int64)
	switch c := cmd.(type) {
	case wire.XAdd:
		if err == nil && res != nil {
			if len(e.modified) == 0 && len(e.ready) == 0 {
				// The common case, one allocation: both lists are
				// only read (and an append to a full slice copies).
				k := []string{c.Key}
				e.modified, e.ready = k, k
			} else {
				e.modified = append(e.modified, c.Key)
				e.ready = append(e.ready, c.Key)
			}
		}
	case wire.XDel, wire.XTrim:
		if err == nil && n > 0 {
			e.modified = append(e.modified, cmd.Keys()...)
		}
	case wire.XGroupCreate:
		if err == nil {
			if c.MkStream {
				// Redis signals the key when MKSTREAM created it; the
				// answer does not say whether it did.
				e.modified = append(e.modified, c.Key)
			}
			e.ready = append(e.ready, c.Key)
		}
	case wire.XGroupSetID:
		if err == nil {
			e.ready = append(e.ready, c.Key)
		}
	case wire.XGroupDestroy:
		if err == nil && n > 0 {
			e.ready = append(e.ready, c.Key)
		}
	case wire.Del:
		if err == nil && n > 0 {
			e.modified = append(e.modified, c.Names...)
			e.ready = append(e.ready, c.Names...)
		}
	case wire.Expired:
		if err == nil && n > 0 {
			e.modified = append(e.modified, c.Names...)
			e.ready = append(e.ready, c.Names...)
		}
	case wire.Rename:
		if err == nil && c.Src != c.Dst && (!c.NX || n == 1) {
			e.modified = append(e.modified, c.Src, c.Dst)
			e.ready = append(e.ready, c.Src, c.Dst)
		}
	case wire.Expire:
		if err == nil && n == 1 {
			// A deadline in the past deletes the key: wake its readers.
			e.modified = append(e.modified, c.Key)
			e.ready = append(e.ready, c.Key)
		}
	case wire.Persist:
		if err == nil && n == 1 {
			e.modified = append(e.modified, c.Key)
		}
	case wire.FlushDB:
		if err == nil {
			e.flushDBs = append(e.flushDBs, c.DB)
		}
	case wire.FlushAll:
		if err == nil {
			e.flushAll = true
		}
	case wire.Exec:
		outs, _ := res.([]wire.Outcome)
		for i, op := range c.Ops {
			sub, ok := op.(wire.Command)
			if !ok || i >= len(outs) {
				continue
			}
			// Every op of an EXEC carries its own database (SELECT
			// inside MULTI); collect per op.
			se := keyEffects{db: sub.Database()}
			effectsOf(sub, outs[i].Result, outs[i].Err, &se)
			e.merge(se)
		}
	}
}

// merge keeps the effects of one operation of an EXEC (markDirty and
// notify apply them in its database).
func (e *keyEffects) merge(o keyEffects) {
	if len(o.modified) == 0 && len(o.ready) == 0 && len(o.flushDBs) == 0 && !o.flushAll {
		return
	}
	e.extra = append(e.extra, o)
}

// effects computes what an applied write did (see effectsOf).
func effects(cmd wire.Command, res any, err error) keyEffects {
	e := keyEffects{db: cmd.Database()}
	effectsOf(cmd, res, err, &e)
	return e
}

// markDirty marks the WATCHers of the keys a write modified (or flushed)
// dirty. It runs while the write still holds writeMu, so an EXEC that
// checks after the write sees it.
func (s *Server) markDirty(e keyEffects) {
	if e.flushAll {
		s.dirtyWatchersDB(-1)
	}
	for _, db := range e.flushDBs {
		s.dirtyWatchersDB(db)
	}
	if len(e.modified) > 0 {
		s.dirtyWatchers(e.db, e.modified)
	}
	for _, x := range e.extra {
		s.markDirty(x)
	}
}

// notify wakes the blocked readers of a write's ready keys and sends the
// tracking invalidations of its modified keys, after the write released
// the shard and writeMu (a slow client's push never holds up other writes'
// locks). c is the writing client (nil for the expiry sweep), for NOLOOP.
func (s *Server) notify(c *Client, e keyEffects) {
	h := s.hub()
	switch {
	case e.flushAll:
		h.waits.SignalDB(-1)
		s.invalidateFlushBy(c)
	case len(e.flushDBs) > 0:
		for _, db := range e.flushDBs {
			h.waits.SignalDB(db)
		}
		s.invalidateFlushBy(c)
	}
	for _, k := range e.ready {
		h.waits.Signal(e.db, k)
	}
	if len(e.modified) > 0 {
		s.invalidateKeys(c, e.modified)
	}
	for _, x := range e.extra {
		s.notify(c, x)
	}
}
