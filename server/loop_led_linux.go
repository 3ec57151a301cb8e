//go:build linux

package server

import (
	"sync"
	"syscall"
	"time"
)

// Writes a cluster node leads, in its event loop (issue #16). A write this
// node leads waits for a quorum: a turn of them is proposed by the loop,
// then settled, answered and written by a goroutine of its own
// (settleLater, ledTurn.run), so that the wait holds up no other client.
// The turn's clients are out of epoll until then, as a sent turn of
// forwards (sendLater): each client's requests still run, and answer, in
// order. Whatever would have to wait for those writes inside the loop
// instead (a request after them that is not such a write, a full
// pipeline) hands the client to the goroutine path once the turn is
// answered (runs, runParsed). A turn never holds both these writes and
// forwarded ones (runs). A single node keeps settling its writes in the
// loop: its log write is one fsync, not a round trip.

// ledTurn is a turn of writes this node leads, being settled: its clients
// (those with writes; the others were answered at once) and the hold of
// writeMu the turn took, which it releases once its writes are settled.
type ledTurn struct {
	l       *eventLoop
	clients []*Client
	hub     *keyspaceHub
}

// ledTurns counts the turns out (settleLater), so that the loop can wait
// for them before it hands every client to goroutines.
type ledTurns struct {
	wg sync.WaitGroup
}

// settleLater ends a turn of writes this node leads (on a node of a
// cluster): proposed now, all of them before any is waited for, then
// settled and answered by a goroutine. Clients without writes in the turn
// are answered at once.
func (l *eventLoop) settleLater() {
	t := &l.turn
	j := &ledTurn{l: l, hub: t.hub}
	t.hub = nil // the turn's hold is the goroutine's to release
	for _, c := range t.active {
		lc := c.lp
		if len(lc.pl.calls) == 0 {
			lc.flushed = false
			if !lc.closing || c.quit {
				lc.flushed = l.flush(c)
			}
			l.endTurn(c, false)
			continue
		}
		lc.pl.propose()
		lc.busy = true
		syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, lc.fd, nil)
		j.clients = append(j.clients, c)
	}
	l.settledLater.Add(1)
	l.led.wg.Add(1)
	go j.run()
}

// run waits for the turn's writes, marks their WATCHers dirty and
// releases writeMu (as loopTurn.settle), then runs their effects, queues
// their replies and writes each client's output (as answer); it may wait
// more (a write to route again after a leadership change). Then the loop
// takes the clients back (resumeLed).
func (j *ledTurn) run() {
	l := j.l
	times := make([]time.Time, len(j.clients))
	for i, c := range j.clients {
		times[i] = c.lp.pl.settle()
	}
	j.hub.writeMu.RUnlock()
	for i, c := range j.clients {
		lc := c.lp
		lc.pl.hub = nil
		lc.pl.finish(times[i])
		lc.flushed = false
		if !lc.closing || c.quit {
			lc.flushed = l.flush(c) // a failed write sets closing
		}
	}
	l.resumeLed(j.clients)
}

// resumeLed gives the loop back the clients of a settled turn (takeInbox
// ends their turn), and wakes it; unlike post it does so even once the
// loop has stopped taking new clients (abandon waits for these).
func (l *eventLoop) resumeLed(cs []*Client) {
	l.mu.Lock()
	l.resumed = append(l.resumed, cs...)
	wake := !l.woken
	l.woken = true
	l.mu.Unlock()
	if wake {
		syscall.Write(l.wake[1], []byte{1})
	}
	l.led.wg.Done()
}

// waitLed waits until every turn out is settled and ends those turns: the
// loop is about to hand its clients to goroutines.
func (l *eventLoop) waitLed() {
	l.led.wg.Wait()
	l.takeInbox()
}
