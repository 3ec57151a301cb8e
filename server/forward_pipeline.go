package server

import (
	"slices"
	"time"

	"streamd/server/router"
)

// Pipelined forwarding (issue #16). Requests a client pipelines to a node
// that does not lead their shard are sent to the leader over the client's
// upstream without waiting for the replies of those before them, as the
// client sent them; the replies are read, in request order, when the
// connection's pipeline drains (which everything else that answers the
// client does first, so replies keep request order). Requests to several
// leaders go over one upstream each; each upstream's replies come in the
// order its requests went, so reading them in request order is reading
// each upstream in order.
//
// What is not pipelined goes the one-at-a-time way (forwardRouted) after a
// drain: blocking reads, a request whose upstream would first need the
// client's user, protocol or database mirrored (HELLO, SELECT and AUTH run
// here, after a drain, so this is the first request after them), and a
// request whose leader cannot be dialled (that path waits for a new
// leader). Replies that call for routing again — TRYAGAIN (the leader
// refused without running it) or a broken upstream under a read — are
// routed again only once every reply of the pipeline was read, so that no
// new request goes on an upstream that still has replies to come, and
// only when no later request of the pipeline for the same shard may have
// run (else the refusal is the answer, as a client of the leader gets it):
// the pipeline's requests never run out of order.

// fwdCall is a request forwarded without its reply read yet.
type fwdCall struct {
	cmd   *Command
	args  [][]byte
	start time.Time
	rt    router.Route
	kind  router.FwdKind
	// up carries the request; nil when sending failed (rep is set).
	up *router.Upstream
	// rep and retry are the request's first answer once known (see
	// forwardAgain); rep stays nil for a reply that is no error (relayed
	// from the reply buffer, off:end).
	rep   Reply
	retry bool
	// off and end delimit the reply in the pipeline's reply buffer.
	off, end int
	// final: rep is the answer, not routed again (a later request of the
	// same shard may have run).
	final bool
}

// forwardQueued is routeRequest's answer for a request forwarded in a
// pipeline: its reply is written when the pipeline drains.
type forwardQueued struct{}

// forwardPipelined forwards a request routed to rt without waiting for its
// reply, which is written when pl drains; false when it must go the
// one-at-a-time way (pl is then to be drained). start is when the request
// started (its commandstats duration runs from it).
func (s *Server) forwardPipelined(c *Client, cmd *Command, args [][]byte, rt router.Route, pl *pipeline, start time.Time) bool {
	if pl == nil || s.cluster == nil {
		return false
	}
	kind := forwardKind(cmd, args)
	if kind == router.FwdBlocking {
		return false
	}
	pl.drainLocal() // local writes before it answer first
	cl := c.fwd()
	up := pl.inFlight(c, rt.Addr)
	if up != nil && up.NeedsSetup(cl) {
		pl.drain()
		up = nil
	}
	call := fwdCall{cmd: cmd, args: args, start: start, rt: rt, kind: kind}
	var err error
	if up == nil {
		if up, err = s.cluster.Upstream(cl, rt.Addr); err != nil {
			return false
		}
		// One deadline for the pipeline's requests on it and their
		// replies (a pipeline drains once no request is waiting, or
		// at maxPipeline).
		up.SetDeadline(time.Now().Add(s.cluster.ForwardTimeout()))
		pl.ups = append(pl.ups, up)
		if up.NeedsSetup(cl) {
			err = up.Send(cl, args)
		} else {
			err = up.Queue(args)
		}
	} else {
		err = up.Queue(args)
	}
	if err != nil {
		router.Drop(cl, up)
		call.rep, call.retry = router.BrokenReply(kind), kind == router.FwdRead
	} else {
		call.up = up
	}
	pl.fwds = append(pl.fwds, call)
	return true
}

// inFlight is the client's upstream to addr when requests of this pipeline
// went on it and it was not dropped since (nil otherwise).
func (pl *pipeline) inFlight(c *Client, addr string) *router.Upstream {
	up := c.ups.Get(addr)
	if up == nil {
		return nil
	}
	for _, u := range pl.ups {
		if u == up {
			return up
		}
	}
	return nil
}

// drainForwards reads the replies of the pipelined forwarded requests in
// request order, then routes again those that call for it and answers
// each (as forwardRouted would have). A broken upstream fails its
// requests whose replies had not come (unknown outcome for a write) and is
// dropped.
func (pl *pipeline) drainForwards() {
	if len(pl.fwds) == 0 {
		return
	}
	s, c := pl.s, pl.c
	cl := c.fwd()
	for _, up := range pl.ups {
		if c.ups.Get(up.Addr()) == up && up.Flush() != nil {
			router.Drop(cl, up)
		}
	}
	// The replies go into one buffer (c.send copies them); off/end mark
	// each, taken once it stopped growing.
	buf := pl.repBuf[:0]
	for i := range pl.fwds {
		f := &pl.fwds[i]
		if f.up == nil {
			continue
		}
		if c.ups.Get(f.up.Addr()) != f.up {
			// Dropped after the request went: its reply is lost.
			f.rep, f.retry = router.BrokenReply(f.kind), f.kind == router.FwdRead
			continue
		}
		start := len(buf)
		var err error
		if buf, err = f.up.AppendResult(buf); err != nil {
			buf = buf[:start]
			router.Drop(cl, f.up)
			f.rep, f.retry = router.BrokenReply(f.kind), f.kind == router.FwdRead
			continue
		}
		f.off, f.end = start, len(buf)
	}
	// Errors become replies (they are routed again, counted); the rest
	// is relayed from buf as it is (rep stays nil).
	for i := range pl.fwds {
		if f := &pl.fwds[i]; f.rep == nil && buf[f.off] == '-' {
			f.rep = router.Relayed(buf[f.off:f.end])
		}
	}
	if cap(buf) <= 64<<10 {
		pl.repBuf = buf[:0] // reused once the replies below were sent
	} else {
		pl.repBuf = nil
	}
	for _, up := range pl.ups {
		if c.ups.Get(up.Addr()) == up {
			up.SetDeadline(time.Time{})
		}
	}
	// A request that was not run is routed again only when no later
	// request of its shard may have run: running it after one would
	// reorder the client's pipeline. Otherwise it gets the answer it got
	// (TRYAGAIN: not run), as a client sending to the leader directly.
	var ranAfter []int // shards with a request that may have run, from the end
	for i := len(pl.fwds) - 1; i >= 0; i-- {
		f := &pl.fwds[i]
		again := f.retry || router.RefusedUnrun(f.rep)
		if again && slices.Contains(ranAfter, f.rt.Shard) {
			f.final = true
		}
		if !again && !slices.Contains(ranAfter, f.rt.Shard) {
			ranAfter = append(ranAfter, f.rt.Shard)
		}
	}
	var pauseEnd time.Time
	now := time.Now() // one clock read for the replies read above
	for i := range pl.fwds {
		f := &pl.fwds[i]
		r := f.rep
		end := now
		if f.final {
			if f.kind != router.FwdRead {
				c.lastWr = lastWrite{shard: f.rt.Shard, up: f.rt.Addr, ok: true}
			}
		} else if f.retry || router.RefusedUnrun(f.rep) {
			r = s.forwardAgain(c, f.cmd, f.args, f.rt, f.kind, f.rep, f.retry, &pauseEnd)
			end = time.Now()
		} else if f.kind != router.FwdRead {
			c.lastWr = lastWrite{shard: f.rt.Shard, up: f.rt.Addr, ok: true}
		}
		if r == nil {
			// Relayed as it came (finishAt for a reply that is no
			// error, without making it a Reply).
			s.noteCallDur(f.cmd, end.Sub(f.start), nil)
			c.replyRaw(buf[f.off:f.end])
			c.slow = slowNote{}
			continue
		}
		s.finishAt(c, f.cmd, f.args, f.start, end, r, false)
	}
	clear(pl.fwds)
	pl.fwds = pl.fwds[:0]
	clear(pl.ups)
	pl.ups = pl.ups[:0]
}
