//go:build linux

package server

import (
	"syscall"
	"time"

	"streamd/server/router"
)

// splitRequests is how many requests make a turn heavy: its reading and
// its replies are then shared with the helper goroutine (a -P 16 load of
// 50 clients brings 800 a turn, a -P 1 load 25).
const splitRequests = 128

// loopTurn is one turn's pipelines: writeMu is held once for all of them
// (two shared holds by one goroutine could deadlock behind an EXEC), and
// they drain together, so the writes of every client of the turn reach the
// shards before any is waited for.
type loopTurn struct {
	active []*Client
	hub    *keyspaceHub
	times  []time.Time // drain's, reused
	// trunks are the turn's batches of forwarded requests not sent yet,
	// spare the batches to reuse.
	trunks []turnTrunk
	spare  []*router.TrunkBatch
	// forwarded counts the requests forwarded since the last
	// sendForwards (some may have no trunk: not sent).
	forwarded int
	// out holds the turns whose forwarded requests are at their leaders
	// (sendLater), oldest first; spareOut those to reuse. notify wakes
	// the loop when a batch of theirs is done.
	out      []*outTurn
	spareOut []*outTurn
	notify   func()
	// lane is the trunk lane of the turn's batches: the next one after
	// each send, so that the leader runs turns that are out at once on
	// several connections (it runs one connection's requests one batch
	// after the other). A client's requests never are on two lanes at
	// once: it sends nothing more until its turn is answered.
	lane int
}

// maxOutTurns is how many turns may have their forwarded requests at the
// leaders at once: the loop serves other clients meanwhile, so that the
// leaders always have requests of this node to run.
const maxOutTurns = 4

// outTurn is a turn sent, not answered yet (loopTurn.sendLater): its
// clients, which the loop does not read meanwhile, and its batches.
type outTurn struct {
	clients []*Client
	trunks  []turnTrunk
}

// turnTrunk is a turn's batch for one trunk: the forwarded requests of
// every client of the turn with the same leader, user, protocol and
// database.
type turnTrunk struct {
	addr, user string
	proto, db  int
	t          *router.Trunk
	b          *router.TrunkBatch
}

// trunkFor is the turn's batch for c's requests to the leader at addr,
// dialling its trunk if needed.
func (t *loopTurn) trunkFor(s *Server, c *Client, addr string) (*router.TrunkBatch, error) {
	user, proto, db := c.userName(), c.Proto(), c.DB()
	for i := range t.trunks {
		tt := &t.trunks[i]
		if tt.addr == addr && tt.user == user && tt.proto == proto && tt.db == db {
			return tt.b, nil
		}
	}
	tr, err := s.cluster.Trunk(c.fwd(), addr, t.lane)
	if err != nil {
		return nil, err
	}
	var b *router.TrunkBatch
	if n := len(t.spare); n > 0 {
		b, t.spare = t.spare[n-1], t.spare[:n-1]
	} else {
		b = new(router.TrunkBatch)
		b.OnDone(t.notify)
	}
	t.trunks = append(t.trunks, turnTrunk{addr: addr, user: user, proto: proto, db: db, t: tr, b: b})
	return b, nil
}

// sendForwards sends the turn's forwarded requests, one batch per trunk,
// waits for all their replies, and answers each client's (drainForwards).
func (t *loopTurn) sendForwards() {
	if t.forwarded == 0 {
		return
	}
	t.forwarded = 0
	t.lane = (t.lane + 1) % router.TrunkLanes
	for i := range t.trunks {
		t.trunks[i].t.Submit(t.trunks[i].b)
	}
	for i := range t.trunks {
		t.trunks[i].b.Wait()
	}
	t.answerTrunks(t.active, t.trunks)
	t.trunks = t.trunks[:0]
}

// answerTrunks answers the forwarded requests of clients, whose batches
// (trunks) are all done, and keeps the batches for reuse.
func (t *loopTurn) answerTrunks(clients []*Client, trunks []turnTrunk) {
	// The answers run nothing that forwards (a request to be routed
	// again is held for the client's goroutine).
	for _, c := range clients {
		c.lp.pl.drainForwards()
	}
	for i := range trunks {
		trunks[i].b.Reset()
		t.spare = append(t.spare, trunks[i].b)
	}
	clear(trunks)
}

// sendLater ends a turn whose only waits are its forwarded requests: it
// sends them, and leaves their answers to completeOut, so that the loop
// serves other clients while the leaders run them. The turn's clients are
// taken out of epoll until then (a client's requests run in order, and
// their replies go out in order).
func (l *eventLoop) sendLater() {
	t := &l.turn
	var o *outTurn
	if n := len(t.spareOut); n > 0 {
		o, t.spareOut = t.spareOut[n-1], t.spareOut[:n-1]
	} else {
		o = new(outTurn)
	}
	o.clients = append(o.clients[:0], t.active...)
	o.trunks = append(o.trunks[:0], t.trunks...)
	clear(t.trunks)
	t.trunks = t.trunks[:0]
	t.forwarded = 0
	for _, c := range o.clients {
		c.lp.busy = true
		syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, c.lp.fd, nil)
	}
	t.out = append(t.out, o)
	t.lane = (t.lane + 1) % router.TrunkLanes
	l.sentLater.Add(1)
	for i := range o.trunks {
		o.trunks[i].t.Submit(o.trunks[i].b)
	}
}

// canSendLater reports whether the turn just run may end with sendLater:
// it forwarded requests, ran no local write, and none of its clients is
// to close or leave the loop (those end as drainSplit ends a turn).
func (l *eventLoop) canSendLater() bool {
	t := &l.turn
	if t.forwarded == 0 || t.hub != nil || len(t.out) >= maxOutTurns {
		return false
	}
	for _, c := range t.active {
		if lc := c.lp; lc.closing || lc.handoff || lc.held {
			return false
		}
	}
	return true
}

// completeOut answers the sent turns whose batches are all done, oldest
// first (all of them, waiting, with wait set): each client's forwarded
// requests are answered and its output written, then it is watched again,
// closed, or handed to the goroutine path, as at the end of a turn.
func (l *eventLoop) completeOut(wait bool) {
	t := &l.turn
	for len(t.out) > 0 {
		o := t.out[0]
		for i := range o.trunks {
			if !wait && !o.trunks[i].b.Ready() {
				return
			}
			o.trunks[i].b.Wait()
		}
		n := copy(t.out, t.out[1:])
		t.out[n] = nil
		t.out = t.out[:n]
		t.answerTrunks(o.clients, o.trunks)
		o.trunks = o.trunks[:0]
		for _, c := range o.clients {
			lc := c.lp
			lc.busy = false
			lc.flushed = false
			if !lc.closing || c.quit {
				lc.flushed = l.flush(c)
			}
			l.endTurn(c, true)
		}
		clear(o.clients)
		o.clients = o.clients[:0]
		t.spareOut = append(t.spareOut, o)
	}
}

// holdHub takes writeMu shared for the turn, once.
func (t *loopTurn) holdHub(s *Server) *keyspaceHub {
	if t.hub == nil {
		t.hub = s.hub()
		t.hub.writeMu.RLock()
	}
	return t.hub
}

// drain answers every pending write of the turn: all proposed, then all
// settled under the turn's hold, which is released before their effects run
// and their replies are queued (as drainLocal does for one pipeline). A
// command about to run in the turn calls it (pipeline.drain): it needs the
// writes sent before it answered, and may take writeMu itself.
func (t *loopTurn) drain() {
	if t.settle() {
		t.finish(0, len(t.active))
	}
	t.sendForwards()
}

// settle proposes and settles the turn's writes and releases its hold;
// false if it had none.
func (t *loopTurn) settle() bool {
	if t.hub == nil {
		return false
	}
	for _, c := range t.active {
		c.lp.pl.propose()
	}
	times := t.times[:0]
	for _, c := range t.active {
		var now time.Time
		if len(c.lp.pl.calls) > 0 {
			now = c.lp.pl.settle()
		}
		times = append(times, now)
	}
	t.hub.writeMu.RUnlock()
	t.hub = nil
	t.times = times
	return true
}

// finish runs the settled writes' effects and queues their replies, for
// the clients active[lo:hi].
func (t *loopTurn) finish(lo, hi int) {
	for i, c := range t.active[lo:hi] {
		pl := c.lp.pl
		pl.hub = nil
		if len(pl.calls) > 0 {
			pl.finish(t.times[lo+i])
		}
	}
}

// drainSplit ends the turn: its writes answered and every client's output
// written with one non-blocking write, the second half of the clients on
// the helper's goroutine when split is set.
func (t *loopTurn) drainSplit(l *eventLoop, split bool) {
	settled := t.settle()
	t.sendForwards()
	n, half := len(t.active), len(t.active)
	if split && n >= 2 {
		half = n / 2
		l.help.start(func() { l.answer(t, half, n, settled) })
	}
	l.answer(t, 0, half, settled)
	if half < n {
		l.help.wait()
	}
	clear(t.times)
	t.times = t.times[:0]
}

// answer finishes the writes of the clients active[lo:hi] (if the turn had
// any) and writes their output.
func (l *eventLoop) answer(t *loopTurn, lo, hi int, settled bool) {
	if settled {
		t.finish(lo, hi)
	}
	for _, c := range t.active[lo:hi] {
		lc := c.lp
		lc.flushed = false
		if !lc.closing || c.quit {
			lc.flushed = l.flush(c) // a failed write sets closing
		}
	}
}

// loopHelper is a goroutine that runs one function at a time for the loop,
// which waits for it.
type loopHelper struct {
	work chan func()
	done chan struct{}
}

func (h *loopHelper) init() {
	h.work = make(chan func())
	h.done = make(chan struct{})
}

// serve runs the functions until stop.
func (h *loopHelper) serve(s *Server) {
	defer s.wg.Done()
	for f := range h.work {
		f()
		h.done <- struct{}{}
	}
}

// start has the helper run f; wait waits until it has.
func (h *loopHelper) start(f func()) { h.work <- f }
func (h *loopHelper) wait()          { <-h.done }

// stop ends the helper's goroutine.
func (h *loopHelper) stop() { close(h.work) }
