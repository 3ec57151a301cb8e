package server

import (
	"errors"
	"time"

	"streamd/replication"
	"streamd/replication/wire"
	"streamd/server/router"
)

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
	return s.runPlan(c, &p)
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
	return s.applyOn(c, s.opShard(c, op), op)
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
		res, err, e := s.settleWrite(o, p)
		h.writeMu.RUnlock()
		s.afterWrite(c, i, p, err, e)
		return res, err
	case wire.Query:
		c.awaitOwnWrites()
		if err := s.router.ReadBarrier(i); err != nil {
			if c != nil && router.IsNotLeader(err) {
				c.notLeader = true
			}
			return nil, err
		}
		s.trackRead(c, o.Keys())
		s.access.touch(o, time.Now())
		return sh.Query(o)
	}
	panic("server: operation is neither a wire.Command nor a wire.Query")
}

// Every write is finished by the same two steps, whether it ran alone
// (applyOn), in a pipeline batch (pipeline.drain) or as an EXEC: settleWrite
// while the write still holds writeMu, afterWrite once it is released.

// settleWrite waits for a proposed write's answer and marks the WATCHers of
// the keys it modified dirty. The caller holds writeMu (shared; exclusive
// for an EXEC with WATCH), so an EXEC that checks after the write sees it.
func (s *Server) settleWrite(op wire.Command, p pendingWrite) (any, error, wire.Effects) {
	res, err, e, _ := s.settleWriteAt(op, p, xaddKey{})
	return res, err, e
}

// settleWriteAt is settleWrite. For a pipelined XADD, xadd holds its
// database and key (a slice the pipeline owns, see wire.XAddEffects; zero
// for any other write), and the access to a successful write's key is left
// to the caller (touchLater reports it) when nothing else about access
// times follows from the write (no key dropped, renamed or moved): a
// pipeline records its XADDs' accesses together (accessTimes.touchAll),
// before it settles any other write.
func (s *Server) settleWriteAt(op wire.Command, p pendingWrite, xadd xaddKey) (res any, err error, e wire.Effects, touchLater bool) {
	res, err = p.Wait()
	if la, ok := p.(leaderAcked); ok {
		if applied, early := la.LeaderAcked(); early {
			// ACKLEVEL LEADER: answered before the entry is applied; what
			// it does to the keyspace is signalled once it is.
			go s.settleLate(op, la, applied)
			return res, err, wire.Effects{}, false
		}
	}
	batchTouch := xadd.key != nil
	if batchTouch {
		e = wire.XAddEffects(xadd.db, xadd.key, res, err)
	} else {
		e = wire.EffectsOf(op, res, err)
	}
	s.markDirty(e)
	if err == nil {
		if batchTouch && !accessAffected(op, e) {
			touchLater = true
		} else {
			s.access.touch(op, time.Now())
			s.access.applied(op, res, err, e)
		}
		res = s.unwrapDelivered(res)
	}
	return res, err, e, touchLater
}

// unwrapDelivered counts what a claiming write's dead-lettering and
// visibility redelivery did (issue #15; the effects were taken from the
// wrapped answer) and returns the plain answer, also inside an EXEC's.
func (s *Server) unwrapDelivered(res any) any {
	switch r := res.(type) {
	case wire.Delivered:
		s.stats.Delivery.DeadLettered.Add(r.DeadLettered)
		s.stats.Delivery.VisibilityRedeliveries.Add(r.Redelivered)
		return r.Result
	case []wire.Outcome:
		for i := range r {
			r[i].Result = s.unwrapDelivered(r[i].Result)
		}
	}
	return res
}

// afterWrite, once writeMu is released, records the write for its client
// (c may be nil: the expiry sweep) — its last write for WAIT, or
// c.notLeader when the shard was led elsewhere — and wakes the blocked
// readers and invalidates the tracking of what it did (notify).
func (s *Server) afterWrite(c *Client, shard int, p pendingWrite, err error, e wire.Effects) {
	if c != nil {
		c.noteWrite(shard, p, err)
	}
	s.notify(c, e)
}

// noteWrite records a write the client proposed to shard i: its last write
// for WAIT (with the log index of its entry when the pending write knows
// it), or, when the shard was led elsewhere, that the request must be
// routed again.
func (c *Client) noteWrite(i int, p pendingWrite, err error) {
	if err != nil && router.IsNotLeader(err) {
		c.notLeader = true
		return
	}
	if err != nil && errors.Is(err, replication.ErrTransferInProgress) {
		c.transferRefused = true
		return
	}
	var index uint64
	if ix, ok := p.(interface{ Index() uint64 }); ok {
		index = ix.Index() // *replication.Pending; a test's wrapper may not know
	}
	c.lastWr = lastWrite{shard: i, index: index, ok: true}
	if la, ok := p.(leaderAcked); ok {
		if applied, early := la.LeaderAcked(); early {
			c.lateApplied = applied
		}
	}
}

// awaitOwnWrites waits until the client's last write answered at ACKLEVEL
// LEADER (before its entry was applied) has been applied or has failed, so
// that the client's reads see its own acknowledged writes, as they do
// after any other write. Entries apply in log order: the last one covers
// every earlier one. It resolves within the quorum timeout.
func (c *Client) awaitOwnWrites() {
	if c == nil || c.lateApplied == nil {
		return
	}
	select {
	case <-c.lateApplied:
	case <-c.srv.done:
	}
	c.lateApplied = nil
}

// markDirty marks the WATCHers of the keys a write modified (or flushed)
// dirty. It runs while the write still holds writeMu, so an EXEC that
// checks after the write sees it.
func (s *Server) markDirty(e wire.Effects) {
	if e.FlushAll {
		s.dirtyWatchersDB(-1)
	}
	for _, db := range e.FlushDBs {
		s.dirtyWatchersDB(db)
	}
	for _, db := range e.SwapDBs {
		s.dirtyWatchersDB(db)
	}
	if len(e.Modified) > 0 {
		s.dirtyWatchers(e.DB, e.Modified)
	}
	for _, x := range e.Extra {
		s.markDirty(x)
	}
}

// notify wakes the blocked readers of a write's ready keys and sends the
// tracking invalidations of its modified keys, after the write released
// the shard and writeMu (a slow client's push never holds up other writes'
// locks). c is the writing client (nil for the expiry sweep), for NOLOOP.
func (s *Server) notify(c *Client, e wire.Effects) {
	h := s.hub()
	switch {
	case e.FlushAll:
		h.waits.SignalDB(-1)
		s.invalidateFlushBy(c)
	case len(e.FlushDBs) > 0:
		for _, db := range e.FlushDBs {
			h.waits.SignalDB(db)
		}
		s.invalidateFlushBy(c)
	}
	for _, db := range e.SwapDBs {
		h.waits.SignalDB(db) // Redis's scanDatabaseForReadyKeys on both
	}
	for _, k := range e.Ready {
		h.waits.Signal(e.DB, k)
	}
	if len(e.Modified) > 0 {
		s.invalidateKeys(c, e.Modified)
	}
	for _, x := range e.Extra {
		s.notify(c, x)
	}
}
