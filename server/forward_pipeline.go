package server

import (
	"bytes"
	"slices"
	"time"

	"streamd/server/router"
)

// Pipelined forwarding (issue #16). Requests a client pipelines to a node
// that does not lead their shard are sent to the leader on a trunk (shared
// with the other clients of the same user, protocol and database: see
// router/trunk.go), without waiting for the replies of those before them,
// as the client sent them: the pipeline's requests for one leader go
// together as one batch when the connection's pipeline drains (which
// everything else that answers the client does first, so replies keep
// request order), and their replies are then read in request order.
// Requests to several leaders go in one batch each; each trunk's replies
// come in the order its requests went, so reading them in request order is
// reading each batch in order.
//
// What is not pipelined goes the one-at-a-time way (forwardRouted, on the
// client's own upstream) after a drain: blocking reads, transactions and
// their WATCHes, and a request whose leader cannot be dialled (that path
// waits for a new leader). Replies that call for routing again — TRYAGAIN
// (the leader refused without running it) or a broken trunk under a read —
// are routed again only once every reply of the pipeline was read, so
// that no new request overtakes one whose reply is still to come, and only
// when no later request of the pipeline for the same shard may have run
// (else the refusal is the answer, as a client of the leader gets it): the
// pipeline's requests never run out of order.

// fwdCall is a request forwarded without its reply read yet.
type fwdCall struct {
	cmd   *Command
	args  [][]byte
	start time.Time
	rt    router.Route
	kind  router.FwdKind
	// tr is the request's batch in the pipeline's trunks (-1: it was not
	// sent, rep says why), ti its place in that batch.
	tr, ti int
	// rep and retry are the request's first answer once known (see
	// forwardAgain); rep stays nil for a reply that is no error (relayed
	// as it came, raw).
	rep   Reply
	retry bool
	raw   []byte
	// lost: the trunk broke before the reply came.
	lost bool
	// final: rep is the answer, not routed again (a later request of the
	// same shard may have run).
	final bool
}

// pipeTrunk is a pipeline's batch of requests for one leader and the
// trunk it goes on.
type pipeTrunk struct {
	addr   string
	t      *router.Trunk
	b      *router.TrunkBatch
	shared bool
}

// forwardQueued is routeRequest's answer for a request forwarded in a
// pipeline: its reply is written when the pipeline drains.
type forwardQueued struct{}

// forwardPipelined forwards a request routed to rt without waiting for its
// reply, which is written when pl drains; false when it must go the
// one-at-a-time way (pl is then to be drained). start is when the request
// started (its commandstats duration runs from it).
//
// On an event loop's turn the request joins the turn's batch for its
// trunk (loopTurn.trunkFor), which carries the requests of every client of
// the turn; a trunk that cannot be dialled then answers it TRYAGAIN
// unsent, so that the client's goroutine, not the loop, waits for a new
// leader (answerForwards).
func (s *Server) forwardPipelined(c *Client, cmd *Command, args [][]byte, rt router.Route, pl *pipeline, start time.Time) bool {
	if pl == nil || s.cluster == nil {
		return false
	}
	kind := forwardKind(cmd, args)
	if kind == router.FwdBlocking {
		return false
	}
	if pl.turn != nil {
		if len(pl.calls) > 0 {
			pl.turn.drain() // local writes before it answer first
		}
		pl.turn.forwarded++
	} else {
		pl.drainLocal()
	}
	call := fwdCall{cmd: cmd, args: args, start: start, rt: rt, kind: kind, tr: pl.trunkTo(rt.Addr)}
	if call.tr < 0 {
		if pl.turn != nil {
			b, err := pl.turn.trunkFor(s, c, rt.Addr)
			if err != nil {
				call.rep = router.DialFailedReply(rt.Addr, err)
				pl.fwds = append(pl.fwds, call)
				return true
			}
			call.tr = pl.addTrunk(rt.Addr, nil, b)
		} else {
			t, err := s.cluster.Trunk(c.fwd(), rt.Addr, int(c.id&0x7fffffff))
			if err != nil {
				return false
			}
			call.tr = pl.addTrunk(rt.Addr, t, nil)
		}
	}
	b := pl.trunks[call.tr].b
	call.ti = b.Len()
	b.Add(args)
	pl.fwds = append(pl.fwds, call)
	return true
}

// trunkTo is the index of the pipeline's batch for the leader at addr, -1
// when it has none yet.
func (pl *pipeline) trunkTo(addr string) int {
	for i := range pl.trunks {
		if pl.trunks[i].addr == addr {
			return i
		}
	}
	return -1
}

// addTrunk starts the pipeline's batch for the leader at addr: its own, to
// go on t (the batches of earlier drains are reused), or the turn's
// shared one.
func (pl *pipeline) addTrunk(addr string, t *router.Trunk, shared *router.TrunkBatch) int {
	n := len(pl.trunks)
	if n < cap(pl.trunks) {
		pl.trunks = pl.trunks[:n+1]
	} else {
		pl.trunks = append(pl.trunks, pipeTrunk{})
	}
	pt := &pl.trunks[n]
	pt.addr, pt.t = addr, t
	switch {
	case shared != nil:
		pt.b, pt.shared = shared, true
	case pt.b == nil || pt.shared:
		pt.b, pt.shared = new(router.TrunkBatch), false
	}
	return n
}

// drainForwards sends the pipeline's own batches (an event loop's turn
// sends its shared ones itself, sendForwards), reads the replies of the
// pipelined forwarded requests in request order, then routes again those
// that call for it and answers each (as forwardRouted would have). A
// broken trunk fails its requests whose replies had not come (unknown
// outcome for a write).
func (pl *pipeline) drainForwards() {
	if len(pl.fwds) == 0 {
		return
	}
	for i := range pl.trunks {
		if !pl.trunks[i].shared {
			pl.trunks[i].t.Submit(pl.trunks[i].b)
		}
	}
	for i := range pl.trunks {
		if !pl.trunks[i].shared {
			pl.trunks[i].b.Wait()
		}
	}
	for i := range pl.fwds {
		f := &pl.fwds[i]
		if f.tr < 0 {
			continue // not sent: rep says why
		}
		rep, ok := pl.trunks[f.tr].b.Reply(f.ti)
		if !ok {
			f.rep, f.retry, f.lost = router.BrokenReply(f.kind), f.kind == router.FwdRead, true
			continue
		}
		// Errors become replies (they are routed again, counted); the
		// rest is relayed as it came (rep stays nil).
		f.raw = rep
		if rep[0] == '-' {
			f.rep = router.Relayed(rep)
		}
	}
	// A request that was not run is routed again only when no later
	// request of its shard may have run: running it after one would
	// reorder the client's pipeline. Otherwise it gets the answer it got
	// (TRYAGAIN: not run), as a client sending to the leader directly.
	var ranAfter []int // shards with a request that may have run, from the end
	for i := len(pl.fwds) - 1; i >= 0; i-- {
		f := &pl.fwds[i]
		again := f.again()
		if again && slices.Contains(ranAfter, f.rt.Shard) {
			f.final = true
		}
		if !again && !slices.Contains(ranAfter, f.rt.Shard) {
			ranAfter = append(ranAfter, f.rt.Shard)
		}
	}
	pl.answerForwards()
	for i := range pl.trunks {
		if !pl.trunks[i].shared {
			pl.trunks[i].b.Reset()
		}
		pl.trunks[i].t = nil
	}
	pl.trunks = pl.trunks[:0]
	clear(pl.fwds)
	pl.fwds = pl.fwds[:0]
}

// again reports whether f's first answer calls for routing it again: a
// read whose trunk broke, or a refusal before it ran (TRYAGAIN), unless a
// later request of its shard may have run (final).
func (f *fwdCall) again() bool {
	return !f.final && (f.retry || router.RefusedUnrun(f.rep))
}

// answerForwards answers the pipeline's forwarded requests in order. On
// an event loop's turn, the first that is to be routed again (which may
// wait: a pause, a new leader, a leadership transfer) and those after it
// are held, their replies copied, for the client's goroutine, to which
// the loop hands the client at the end of the turn (serveClient answers
// them first, answerHeld).
func (pl *pipeline) answerForwards() {
	s, c := pl.s, pl.c
	var pauseEnd time.Time
	now := time.Now() // one clock read for the replies read
	for i := range pl.fwds {
		f := &pl.fwds[i]
		if pl.turn != nil && f.again() {
			held := slices.Clone(pl.fwds[i:])
			for j := range held {
				held[j].raw = bytes.Clone(held[j].raw)
				held[j].args = cloneArgs(held[j].args)
			}
			c.heldFwds = append(c.heldFwds, held...)
			c.lp.handoff, c.lp.held = true, true
			return
		}
		s.answerForward(c, f, now, &pauseEnd)
	}
}

// answerHeld answers the forwarded requests the event loop held for the
// client's goroutine (answerForwards), in order.
func (s *Server) answerHeld(c *Client) {
	held := c.heldFwds
	c.heldFwds = nil
	var pauseEnd time.Time
	now := time.Now()
	for i := range held {
		s.answerForward(c, &held[i], now, &pauseEnd)
	}
}

// answerForward answers one forwarded request whose first answer is known
// (its reply, or why it has none), routing it again when that calls for
// it; now is when its reply was read. pauseEnd is shared by the requests of
// one pipeline (see retryPause).
func (s *Server) answerForward(c *Client, f *fwdCall, now time.Time, pauseEnd *time.Time) {
	r := f.rep
	end := now
	if f.again() {
		r = s.forwardAgain(c, f.cmd, f.args, f.rt, f.kind, f.rep, f.retry, pauseEnd)
		end = time.Now()
	} else if f.kind != router.FwdRead {
		c.lastWr = trunkWrite(f)
	}
	if r == nil {
		// Relayed as it came (finishAt for a reply that is no error,
		// without making it a Reply).
		s.noteCallDur(f.cmd, end.Sub(f.start), nil)
		c.replyRaw(f.raw)
		c.slow = slowNote{}
		return
	}
	s.finishAt(c, f.cmd, f.args, f.start, end, r, false)
}

// trunkWrite is the client's last write after the forwarded write f: on
// its shard's leader, sent on a trunk, where WAIT asks about it
// (forwardWAIT). A write whose reply was lost with its trunk, or that was
// never sent, is held by no replica we can name.
func trunkWrite(f *fwdCall) lastWrite {
	if f.lost || f.tr < 0 {
		return lastWrite{shard: f.rt.Shard, ok: true}
	}
	return lastWrite{shard: f.rt.Shard, up: f.rt.Addr, trunk: true, ok: true}
}

// cloneArgs copies a request's arguments out of the buffer they were read
// into.
func cloneArgs(args [][]byte) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = bytes.Clone(a)
	}
	return out
}
