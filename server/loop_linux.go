//go:build linux

package server

import (
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"streamd/config"
	"streamd/server/resp"
)

// The event loop (issue #16). A goroutine per connection pays, per request,
// the wake-ups between the goroutine reading the socket, the one running
// the command and the threads under them; at one request per client in
// flight (redis-benchmark -P 1) that costs more than the write itself. The
// loop serves many connections from one goroutine, as Redis does: each
// turn it reads every connection epoll says is readable, once, runs the
// requests that arrived whole, proposes the turn's writes together, waits
// for them once, and writes each connection's replies with one
// non-blocking write.
//
// It serves only what it can run without waiting on anything but the
// turn's own writes: plain writes (pipelinable), the connection commands
// of loopCommands, and requests refused before they run. A client that
// sends anything else, a request the fast parser does not take whole,
// more output than its socket takes at once, or that the "timeout"
// setting would have to watch, is handed to the goroutine path for good
// (serveClient), with its unread bytes, the requests it sent from that one
// on and its pending output; nothing about the client changes for it. The loop
// serves plain TCP clients (no TLS, not in cluster mode, where clients are
// sent MOVED), AUTH included; the rest get goroutines from the start. On a
// node of a cluster its writes are those it forwards (runs): a turn's go
// to their leaders together, on trunks, and the loop serves other clients
// until their replies come (sendLater, completeOut). A request that
// Redis's limits for clients not yet authenticated may refuse is left to
// the goroutine path (ReadBuffered and Partial consult authed).
//
// Every close of a loop connection goes through the loop (loopConn.Close),
// so a file descriptor number the kernel gives to a new connection is never
// read as the old one's.

// loopPoll is how long the loop sleeps in epoll_wait without events before
// it looks at the server's shutdown and the timeout setting again.
const loopPoll = 100 * time.Millisecond

// loopCommands are the commands besides plain writes the loop runs itself:
// they neither block nor take the keyspace's write lock.
var loopCommands = []string{"ping", "echo", "hello", "auth", "select", "client|setinfo", "client|setname", "client|getname", "client|id"}

// errWouldBlock is a loop source's read that found no bytes.
var errWouldBlock = errors.New("read would block")

// eventLoop is the server's loop (one per server, started with its first
// client).
type eventLoop struct {
	s    *Server
	ep   int // epoll
	wake [2]int
	safe map[*Command]bool

	mu      sync.Mutex // guards the fields below
	inbox   []*Client  // accepted, not yet registered
	closes  []*Client  // closes asked for by other goroutines
	woken   bool       // a byte is in the wake pipe
	stopped bool

	// splits counts the turns the loop shared with its helper, sentLater
	// those it answered later (tests read them).
	splits, sentLater atomic.Int64

	// The loop goroutine's own.
	conns  map[int32]*Client
	events []syscall.EpollEvent
	ready  []*Client
	turn   loopTurn
	// help is the helper goroutine that takes half of a heavy turn's
	// reading and replies; lastReqs is the previous turn's request count.
	help     loopHelper
	lastReqs int
}

// loopClient is a loop connection's state (Client.lp); the loop
// goroutine's.
type loopClient struct {
	fd   int
	conn *loopConn
	src  *loopSource
	rr   *resp.RequestReader
	pl   *pipeline
	// handoff is set when the client goes to the goroutine path at the
	// end of the turn; next holds the requests it sent that the loop does
	// not run (the first of them is one it does not run), closing that it
	// goes away instead.
	handoff bool
	next    [][][]byte
	closing bool
	// held: forwarded requests of the client wait for its goroutine
	// (Client.heldFwds); it runs nothing more in the loop.
	held bool
	// busy: the client's requests of a sent turn are not answered yet
	// (loopTurn.out); it is out of epoll until they are.
	busy bool
	// parsed holds the requests read this turn, not yet run; flushed says
	// whether the turn's replies went out whole.
	parsed  [][][]byte
	flushed bool
}

// loopAccept makes the client for a new connection the loop serves (nil if
// it is not one), starting the loop with its first client; s.mu is held.
// The client's connection is then a loopConn and nc is closed (the loop
// has its own descriptor); loopStart hands the client to the loop.
func (s *Server) loopAccept(nc net.Conn, cfg *config.Config) *Client {
	tc, ok := nc.(*net.TCPConn)
	if !ok || !cfg.EventLoop || s.loopBroken || cfg.Timeout > 0 || (s.cluster != nil && s.cluster.ClusterMode()) {
		return nil
	}
	// The loop's own descriptor for the socket; closing Go's takes the
	// socket out of Go's poller.
	fd := -1
	if rc, err := tc.SyscallConn(); err == nil {
		rc.Control(func(f uintptr) { fd, _ = dupCloexec(int(f)) })
	}
	if fd < 0 {
		return nil
	}
	if s.loop == nil {
		l, err := newEventLoop(s)
		if err != nil {
			syscall.Close(fd)
			s.log.Warn("event loop unavailable; clients get a goroutine each", "err", err)
			s.loopBroken = true
			return nil
		}
		s.loop = l
		s.wg.Add(2)
		go l.run()
		go l.help.serve(s)
	}
	l := s.loop
	w := &loopConn{l: l, laddr: tc.LocalAddr(), raddr: tc.RemoteAddr(), fd: fd, inLoop: true}
	tc.Close()
	c := newClient(s, w, s.nextClientID.Add(1), s.defaultAuthed())
	w.c = c
	src := &loopSource{fd: fd, w: w, inLoop: true, total: &s.stats.NetInput}
	c.lp = &loopClient{
		fd:   fd,
		conn: w,
		src:  src,
		rr: resp.NewRequestReader(src, func() int64 { return s.config().ProtoMaxBulkLen },
			func() bool { return c.authed.Load() || s.defaultAuthed() }),
		pl: newPipeline(s, c),
	}
	c.lp.pl.turn = &l.turn
	return c
}

// loopStart gives a client loopAccept made to the loop, once it is
// registered; if the loop has stopped, it starts the client's goroutine
// instead.
func (s *Server) loopStart(c *Client) {
	if !s.loop.post(c, nil) {
		s.loop.toGoroutines(c)
	}
}

func newEventLoop(s *Server) (*eventLoop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	l := &eventLoop{s: s, ep: ep, conns: make(map[int32]*Client), events: make([]syscall.EpollEvent, 256)}
	if err := syscall.Pipe2(l.wake[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		syscall.Close(ep)
		return nil, err
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(l.wake[0])}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, l.wake[0], &ev); err != nil {
		l.closeFDs()
		return nil, err
	}
	l.help.init()
	l.turn.notify = l.wakeUp
	l.safe = make(map[*Command]bool)
	for _, name := range loopCommands {
		if cmd := s.cmds.lookupFull(name); cmd != nil {
			l.safe[cmd] = true
		}
	}
	return l, nil
}

func (l *eventLoop) closeFDs() {
	syscall.Close(l.wake[0])
	syscall.Close(l.wake[1])
	syscall.Close(l.ep)
}

// post gives the loop a new client (add) or asks it to close one (kill),
// and wakes it; false if the loop has stopped.
func (l *eventLoop) post(add, kill *Client) bool {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return false
	}
	if add != nil {
		l.inbox = append(l.inbox, add)
	}
	if kill != nil {
		l.closes = append(l.closes, kill)
	}
	wake := !l.woken
	l.woken = true
	l.mu.Unlock()
	if wake {
		syscall.Write(l.wake[1], []byte{1})
	}
	return true
}

// wakeUp wakes the loop (a batch of a sent turn is done).
func (l *eventLoop) wakeUp() { l.post(nil, nil) }

// run is the loop goroutine.
func (l *eventLoop) run() {
	defer l.s.wg.Done()
	defer l.closeFDs()
	defer l.help.stop()
	for {
		n, err := syscall.EpollWait(l.ep, l.events, int(loopPoll/time.Millisecond))
		if err != nil && err != syscall.EINTR {
			l.s.log.Error("event loop: epoll_wait failed; its clients go to goroutines", "err", err)
			l.abandon()
			return
		}
		l.takeInbox()
		l.completeOut(false)
		ready := l.ready[:0]
		for _, ev := range l.events[:max(n, 0)] {
			if ev.Fd == int32(l.wake[0]) {
				continue
			}
			if c := l.conns[ev.Fd]; c != nil {
				ready = append(ready, c)
			}
		}
		l.serve(ready)
		clear(ready)
		l.ready = ready[:0]
		if l.idle() {
			return
		}
	}
}

// takeInbox registers new clients and closes those whose close was asked.
func (l *eventLoop) takeInbox() {
	l.mu.Lock()
	inbox, closes := l.inbox, l.closes
	l.inbox, l.closes = nil, nil
	if l.woken {
		var b [16]byte
		syscall.Read(l.wake[0], b[:])
		l.woken = false
	}
	l.mu.Unlock()
	for _, c := range inbox {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(c.lp.fd)}
		if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, c.lp.fd, &ev); err != nil {
			l.s.log.Warn("event loop: cannot watch a connection; it gets a goroutine", "client", c.id, "err", err)
			l.toGoroutines(c)
			continue
		}
		l.conns[int32(c.lp.fd)] = c
		l.s.stats.LoopClients.Add(1)
	}
	for _, c := range closes {
		if c.lp != nil && l.conns[int32(c.lp.fd)] == c {
			if c.lp.busy {
				c.lp.closing = true // once its turn is answered
				continue
			}
			l.close(c)
		}
	}
}

// serve is one turn over the readable clients.
func (l *eventLoop) serve(ready []*Client) {
	s := l.s
	if s.config().Timeout > 0 {
		// Idle clients must be watched: goroutines do that.
		l.completeOut(true)
		for _, c := range l.conns {
			l.handoff(c)
		}
		return
	}
	if len(ready) > 0 {
		s.stats.LoopTurns.Add(1)
	}
	t := &l.turn
	t.active = append(t.active[:0], ready...)
	// A heavy turn (the last one had many requests) shares its reading and
	// parsing, then its replies, with the helper: the second half of the
	// clients on the helper's goroutine, the first half here.
	split := len(ready) >= 2 && l.lastReqs >= splitRequests
	mine, theirs := ready, ready[:0]
	if split {
		l.splits.Add(1)
		mine, theirs = ready[:len(ready)/2], ready[len(ready)/2:]
		l.help.start(func() { l.readAll(theirs) })
	}
	l.readAll(mine)
	if split {
		l.help.wait()
	}
	now := time.Now()
	reqs := 0
	for _, c := range ready {
		reqs += len(c.lp.parsed)
		l.runParsed(c, now)
	}
	l.lastReqs = reqs
	if l.canSendLater() {
		l.sendLater()
	} else {
		t.drainSplit(l, split && reqs >= splitRequests)
		for _, c := range ready {
			l.endTurn(c, false)
		}
	}
	clear(t.active)
	t.active = t.active[:0]
}

// endTurn closes a client whose turn was answered, or hands it to the
// goroutine path, if it is to; else, after a sent turn (rewatch), epoll
// watches it again.
func (l *eventLoop) endTurn(c *Client, rewatch bool) {
	lc := c.lp
	switch {
	case lc.closing:
		l.close(c)
	case !lc.flushed || lc.handoff:
		l.handoff(c)
	case rewatch:
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(lc.fd)}
		if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, lc.fd, &ev); err != nil {
			l.s.log.Warn("event loop: cannot watch a connection again; it gets a goroutine", "client", c.id, "err", err)
			l.handoff(c)
		}
	}
}

// readAll reads each client once and parses the requests whole in its
// buffer (ReadBuffered), on the loop's goroutine or the helper's.
func (l *eventLoop) readAll(cs []*Client) {
	for _, c := range cs {
		lc := c.lp
		lc.parsed = lc.parsed[:0]
		if err := lc.rr.Fill(); err != nil && err != errWouldBlock {
			lc.closing = true
			continue
		}
		for {
			args, ok := lc.rr.ReadBuffered()
			if !ok {
				break
			}
			lc.parsed = append(lc.parsed, args)
		}
		if lc.rr.Buffered() > 0 && !lc.rr.Partial() {
			lc.handoff = true // the general parser judges the rest
		}
	}
}

// runParsed runs a client's parsed requests in order, until one the loop
// does not run: that one and those after it go to the goroutine path.
func (l *eventLoop) runParsed(c *Client, now time.Time) {
	s, lc := l.s, c.lp
	for i, args := range lc.parsed {
		cmd, rej := s.lookup(args)
		if l.turn.forwarded > 0 && (rej != "" || !pipelinable(c, cmd)) {
			// It drains the turn's forwarded requests first: do it
			// now, in case that leaves some of this client's for its
			// goroutine (answerForwards), which then runs this one.
			lc.pl.drain()
		}
		if lc.held || !l.runs(c, cmd, rej, args) {
			lc.handoff, lc.next = true, slices.Clone(lc.parsed[i:])
			break
		}
		s.dispatchCmd(c, args, cmd, rej, lc.pl, now)
		if c.quit {
			lc.closing = true
			break
		}
		if lc.pl.full() {
			lc.pl.drain()
		}
	}
	clear(lc.parsed)
	lc.parsed = lc.parsed[:0]
}

// runs reports whether the loop runs a request itself, given what lookup
// found for it. On a node of a cluster the loop's writes are those it
// forwards to a leader known now: a write this node leads goes to the
// goroutine path, where its wait for a quorum holds up no other client, and
// so does one whose shard has no leader known (routing it waits for one).
func (l *eventLoop) runs(c *Client, cmd *Command, rej ErrorReply, args [][]byte) bool {
	if c.tx != nil || c.track != nil {
		return false
	}
	if rej != "" {
		return true // refused before it runs
	}
	if l.safe[cmd] {
		return true
	}
	if !pipelinable(c, cmd) {
		return false
	}
	return l.s.cluster == nil || l.s.cluster.ForwardsNow(commandKeys(cmd, args))
}

// flush writes the client's queued output with one non-blocking write; false
// if some is left (the goroutine path writes it) or the write failed.
func (l *eventLoop) flush(c *Client) bool {
	fd := c.lp.fd
	done, err := c.flushNow(func(b []byte) (int, error) {
		for {
			n, err := syscall.Write(fd, b)
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN:
				return 0, nil
			}
			return n, err
		}
	})
	if err != nil {
		c.lp.closing = true
		return true
	}
	return done
}

// forget stops watching a client's connection.
func (l *eventLoop) forget(c *Client) {
	syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, c.lp.fd, nil)
	delete(l.conns, int32(c.lp.fd))
	l.s.stats.LoopClients.Add(-1)
}

// handoff gives a client to the goroutine path for good: the requests the
// loop did not run first, then what its buffer and socket hold; its
// pending output is written by a drain goroutine.
func (l *eventLoop) handoff(c *Client) {
	l.forget(c)
	l.toGoroutines(c)
}

// toGoroutines is handoff for a client the loop does not watch.
func (l *eventLoop) toGoroutines(c *Client) {
	l.s.stats.LoopHandoffs.Add(1)
	lc := c.lp
	lc.src.inLoop = false
	if n := len(lc.next); n > 0 {
		batch := make([]request, n)
		for i, args := range lc.next {
			batch[i].args = args
		}
		c.backlog.Add(int64(n))
		c.preloaded = int64(n)
		c.reqs <- batch
	}
	c.rr = lc.rr
	lc.pl.turn = nil
	c.lp = nil
	closeReq, err := lc.conn.handOff()
	if err != nil {
		l.s.log.Warn("event loop: cannot hand a connection to a goroutine; closing it", "client", c.id, "err", err)
	}
	if closeReq || err != nil {
		c.nc.Close()
	}
	c.startDrain()
	go l.s.serveClient(c)
}

// close ends a loop client, as serveClient and readLoop end a goroutine
// client.
func (l *eventLoop) close(c *Client) {
	s, lc := l.s, c.lp
	l.forget(c)
	lc.conn.release()
	close(c.closed)
	close(c.stop)
	s.resetClientState(c)
	c.ups.Close()
	s.removeClient(c)
	c.lp = nil
	s.wg.Done()
}

// abandon hands every client to goroutines (the loop cannot go on).
func (l *eventLoop) abandon() {
	l.mu.Lock()
	l.stopped = true // from now on, new clients get goroutines (loopStart)
	l.mu.Unlock()
	l.takeInbox()
	l.completeOut(true)
	for _, c := range l.conns {
		l.handoff(c)
	}
}

// idle reports whether the loop should end: the server is closing and the
// loop has no client left (none can come: accept checks done under s.mu).
func (l *eventLoop) idle() bool {
	select {
	case <-l.s.done:
	default:
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) > 0 || len(l.inbox) > 0 || len(l.closes) > 0 {
		return false
	}
	l.stopped = true
	return true
}
