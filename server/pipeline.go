package server

import (
	"slices"
	"time"

	"streamd/replication/wire"
	"streamd/server/xreply"
	"streamd/streams"
)

// Group commit for pipelines (issue #3). A client that sends several
// commands at once should not pay one log write (fsync) per command: while
// more requests are already buffered on the connection, consecutive plain
// writes are handed to the shard with ProposeAsync before waiting on any of
// them, so the shard's batcher can put them in one log entry and one fsync.
// Their replies are then written strictly in request order, each followed
// by its key effects (wake blocked readers, invalidate tracking, dirty
// WATCHers), exactly as the one-at-a-time path does.

// maxPipeline bounds the writes one connection has in flight (and is the
// capacity of its request queue).
const maxPipeline = 128

// pendingWrite is a proposed write whose outcome is not known yet
// (*replication.Pending).
type pendingWrite interface {
	Wait() (any, error)
}

// pipeline is one connection's proposed-but-unanswered writes. Only the
// connection's goroutine uses it.
type pipeline struct {
	s     *Server
	c     *Client
	calls []pipelineCall
	// hub is the keyspace hub whose writeMu is held shared while calls is
	// not empty (nil otherwise). One shared hold covers the whole batch:
	// taking the read lock again per write could deadlock behind an EXEC
	// waiting for the exclusive lock.
	hub *keyspaceHub
	// outs is reused between drains.
	outs []pipelineOut
	// fwds are the requests forwarded to other nodes' leaders whose
	// replies are not read yet, and trunks their batches, one per leader
	// (forward_pipeline.go). A pipeline holds local writes or forwarded
	// requests, never both: adding one kind drains the other first.
	fwds   []fwdCall
	trunks []pipeTrunk
	// touch holds the XADDs whose key accesses a drain records together.
	touch []wire.Command
	// keys holds a drain's XADD keys, one per call (see xaddKey).
	keys []string
	// ops and pends are propose's scratch, reused.
	ops   []wire.Command
	pends []pendingWrite
	// proposed counts the calls already handed to their shards.
	proposed int
	// id is the reply finish sends for a new ID (Plan.Added).
	id xreply.ID
	// turn, when set, is the event loop's turn this pipeline is part of
	// (loop_linux.go): it holds writeMu for every pipeline of the turn and
	// drains them all together.
	turn *loopTurn
}

// calledRun counts consecutive successful calls of one command with one
// duration (a pipeline's writes, timed from one batch start to one clock
// read), recorded in commandstats with one Stats.CalledN.
type calledRun struct {
	cmd *Command
	d   time.Duration
	n   int64
}

// add counts a call, recording the run before it if this one differs.
func (r *calledRun) add(s *Server, cmd *Command, d time.Duration) {
	if r.n > 0 && (r.cmd != cmd || r.d != d) {
		r.flush(s)
	}
	r.cmd, r.d = cmd, d
	r.n++
}

// flush records the run (if any) and empties it.
func (r *calledRun) flush(s *Server) {
	if r.n > 0 {
		s.stats.CalledN(r.cmd.Name, r.d, r.n)
	}
	*r = calledRun{}
}

// pipelineCall is one pending write: its command, when it started, its plan
// (for Format) and the shard's handle on it.
type pipelineCall struct {
	cmd   *Command
	args  [][]byte // the request, routed again if the shard moved away
	start time.Time
	plan  Plan
	op    wire.Command
	shard int
	pend  pendingWrite
}

// xaddKey is a pipelined XADD's database and key; key is one element of
// the pipeline's keys, its Effects' Modified and Ready keys.
type xaddKey struct {
	db  int
	key []string
}

// pipelineOut is a pending write's answer and what it did to the keyspace.
type pipelineOut struct {
	res any
	err error
	e   wire.Effects
}

func newPipeline(s *Server, c *Client) *pipeline {
	return &pipeline{s: s, c: c}
}

// pipelinable reports whether cmd may join a pipeline batch: a keyspace
// write that never blocks, from a client that is neither in MULTI nor
// WATCHing keys. Its planner must not read the keyspace (it runs before the
// batch's earlier writes are applied); planners only parse, except
// XREADGROUP's, which is a blocking command and excluded.
func pipelinable(c *Client, cmd *Command) bool {
	if cmd.Planner == nil || !cmd.write || cmd.blocking {
		return false
	}
	return c.tx == nil || (!c.tx.multi && len(c.tx.watched) == 0)
}

// add keeps op pending until drain, which proposes it first (with the
// writes queued after it: one hold of the shard's batcher for the run).
func (pl *pipeline) add(cmd *Command, args [][]byte, start time.Time, p Plan, op wire.Command) {
	if pl.turn != nil && len(pl.fwds) > 0 {
		pl.turn.sendForwards()
	} else {
		pl.drainForwards()
	}
	if pl.hub == nil {
		if pl.turn != nil {
			pl.hub = pl.turn.holdHub(pl.s)
		} else {
			pl.hub = pl.s.hub()
			pl.hub.writeMu.RLock()
		}
	}
	shard := pl.s.opShard(pl.c, op)
	pl.calls = append(pl.calls, pipelineCall{cmd: cmd, args: args, start: start, plan: p, op: op, shard: shard})
}

// propose hands the pending writes not yet proposed to their shards in
// request order, each run of consecutive writes to one shard together,
// before any is waited for: the shard's batcher can put them all in one log
// entry.
func (pl *pipeline) propose() {
	calls := pl.calls
	for i := pl.proposed; i < len(calls); {
		j := i + 1
		for j < len(calls) && calls[j].shard == calls[i].shard {
			j++
		}
		ops, pends := pl.ops[:0], pl.pends[:0]
		for k := i; k < j; k++ {
			ops = append(ops, calls[k].op)
			pends = append(pends, nil)
		}
		pl.s.proposeMany(calls[i].shard, ops, pends, pl.turn != nil)
		for k := i; k < j; k++ {
			calls[k].pend = pends[k-i]
		}
		clear(ops)
		clear(pends)
		pl.ops, pl.pends = ops[:0], pends[:0]
		i = j
	}
	pl.proposed = len(calls)
}

// full reports whether the batch reached the client's limit (maxInFlight)
// and must drain.
func (pl *pipeline) full() bool { return len(pl.calls)+len(pl.fwds) >= pl.c.maxInFlight() }

// maxTrunkPipeline bounds the writes in flight on another node's
// connection: a trunk (router/trunk.go) carries the pipelines of many
// clients, and draining it every maxPipeline requests would cut a
// follower's turn into small log entries.
const maxTrunkPipeline = 1024

// maxInFlight is how many requests c may have in flight: maxPipeline, or
// maxTrunkPipeline for another node's connection.
func (c *Client) maxInFlight() int {
	if c.internal {
		return maxTrunkPipeline
	}
	return maxPipeline
}

// drain answers every pending request in order: the local writes
// (drainLocal) or the forwarded requests (drainForwards). It is a no-op on
// a nil or empty pipeline. A pipeline of an event loop's turn drains the
// whole turn (loopTurn.drain): the command about to run may take writeMu
// itself, which the turn must not hold then.
func (pl *pipeline) drain() {
	if pl == nil {
		return
	}
	if pl.turn != nil {
		pl.turn.drain()
		return
	}
	pl.drainLocal()
	pl.drainForwards()
}

// drainLocal waits for every pending local write in order, marks their WATCHers dirty
// while still holding writeMu (settleWrite, as applyOn does), releases it,
// then finishes each write in request order (afterWrite: wake-ups and
// invalidations, the client's own after its reply, as Redis) and writes its
// reply.
func (pl *pipeline) drainLocal() {
	if len(pl.calls) == 0 {
		return
	}
	pl.propose()
	now := pl.settle()
	pl.hub.writeMu.RUnlock()
	pl.hub = nil
	pl.finish(now)
}

// settle waits for every proposed write in order and marks their WATCHers
// dirty (settleWrite), writeMu still held; it returns the clock read that
// times the batch.
func (pl *pipeline) settle() time.Time {
	s := pl.s
	outs := pl.outs[:0]
	touch := pl.touch[:0]
	keys := slices.Grow(pl.keys[:0], len(pl.calls))[:len(pl.calls)]
	for i, call := range pl.calls {
		db, key, add := wire.XAddKey(call.op)
		if !add && len(touch) > 0 {
			// Earlier XADDs' accesses first: this write may drop a key.
			s.access.touchAll(touch, time.Now())
			touch = touch[:0]
		}
		var xadd xaddKey
		if add {
			keys[i] = key
			xadd = xaddKey{db: db, key: keys[i : i+1 : i+1]}
		}
		res, err, e, later := s.settleWriteAt(call.op, call.pend, xadd)
		if later {
			touch = append(touch, call.op)
		}
		outs = append(outs, pipelineOut{res: res, err: err, e: e})
	}
	now := time.Now() // one clock read for the batch's accesses and commandstats
	s.access.touchAll(touch, now)
	clear(touch)
	pl.touch = touch[:0]
	pl.outs, pl.keys = outs, keys
	return now
}

// finish runs each settled write's effects in request order (afterWrite:
// wake-ups and invalidations, the client's own after its reply, as Redis)
// and queues its reply, once writeMu is released; it empties the pipeline.
func (pl *pipeline) finish(now time.Time) {
	s, outs, keys := pl.s, pl.outs, pl.keys
	var run calledRun
	for i, call := range pl.calls {
		var r Reply
		pl.c.notLeader, pl.c.transferRefused = false, false
		// Wake-ups and invalidations go out first; the client's own
		// invalidations are held until send queues its reply, as Redis
		// sends them after it.
		s.afterWrite(pl.c, call.shard, call.pend, outs[i].err, outs[i].e)
		if pl.c.transferRefused {
			// Refused unproposed during a leadership transfer: held
			// for the new leader (transfer-hold-timeout).
			pl.c.transferRefused = false
			r = s.holdForTransfer(pl.c, call.cmd, call.args)
		} else if pl.c.notLeader {
			// The shard's leadership moved after the write was
			// routed here (it was not applied): route it again.
			pl.c.notLeader = false
			r = s.reroute(pl.c, call.cmd, call.args)
		}
		if r == nil && call.plan.Added && outs[i].err == nil {
			// xreply.Added's reply, pointing at the pipeline's own
			// ID: send renders it at once, nothing keeps it.
			if id, ok := outs[i].res.(streams.ID); ok {
				pl.id = xreply.ID(id)
				r = &pl.id
			}
		}
		if r == nil {
			r = call.plan.Format(outs[i].res, outs[i].err)
		}
		d := now.Sub(call.start)
		if _, failed := r.(ErrorReply); failed {
			s.noteCallHere(pl.c, call.cmd, call.args, d, r)
		} else {
			run.add(s, call.cmd, d)
			s.noteSlow(pl.c, call.cmd, call.args, d)
		}
		pl.c.send(r)
	}
	run.flush(s)
	s.persist.noteBatch(len(pl.calls))
	clear(pl.calls)
	pl.calls, pl.proposed = pl.calls[:0], 0
	clear(outs)
	pl.outs = outs[:0]
	clear(keys)
	pl.keys = keys[:0]
}
