package server

import (
	"errors"
	"io"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"streamd/server/resp"
	"streamd/server/router"
	"streamd/server/tracking"
)

// Client is one connection. Its commands run one at a time on the
// connection's goroutine; fields other goroutines read (CLIENT LIST, INFO,
// CLIENT KILL/UNBLOCK, tracking pushes) are atomics or guarded by mu.
type Client struct {
	id        int64
	srv       *Server
	nc        net.Conn
	addr      string
	laddr     string
	createdAt time.Time

	db     atomic.Int32
	proto  atomic.Int32
	authed atomic.Bool

	// What CLIENT LIST shows of the command running or last run, set
	// twice per command by the connection goroutine without a lock:
	// lastCmd points at the command table's name, lastActive is unix
	// nanoseconds.
	lastCmd    atomic.Pointer[string]
	lastActive atomic.Int64
	inCommand  atomic.Bool

	mu      sync.Mutex // guards the fields below
	name    string
	libName string
	libVer  string
	noEvict bool
	noTouch bool

	// out is the outbound queue (outbuf.go): replies and pushes never
	// interleave, and a push never waits for the network.
	out outBuf

	// closed is closed when the read side ends (EOF, error, CLIENT KILL,
	// server Close): a blocked command stops waiting on it.
	closed chan struct{}
	// stop is closed when the connection goroutine exits, so the reader
	// never blocks forever handing over a request nobody will run.
	stop chan struct{}
	// quit makes the connection close after the current reply (QUIT,
	// CLIENT KILL of itself).
	quit bool

	blockMu   sync.Mutex
	blocked   bool
	unblockCh chan BlockResult // capacity 1; CLIENT UNBLOCK sends here

	tx    *txState
	track *tracking.State

	// reqs carries the requests the reader parsed, in batches: each batch
	// is what one read brought in (every complete request already
	// buffered, at most maxPipeline), so the connection goroutine is woken
	// once per batch and knows where a client's pipeline ends. Set by
	// accept before the connection goroutine starts.
	reqs chan []request
	// spare carries batches the connection goroutine has run back to the
	// reader, to be filled again instead of allocated (newBatch).
	spare chan []request
	// backlog counts the requests the reader parsed that the connection
	// goroutine has not started yet (the pipelined backlog).
	backlog atomic.Int64
	// ran counts the requests the connection goroutine has run; while
	// ranWait is set it signals ranCh after each, for a reader waiting
	// for an AUTH it handed over to run (waitRan).
	ran     atomic.Int64
	ranWait atomic.Bool
	ranCh   chan struct{}

	// Cluster routing (route.go, forward.go); the connection goroutine's.

	// internal is set on a connection from another node (Server.ServeInternal):
	// authenticated, never forwarded again, never answered MOVED.
	internal bool
	// onShard pins keyless operations to one shard (STREAMD.ONSHARD); -1
	// when not pinned.
	onShard int
	// notLeader is set when an operation failed because its shard is led
	// elsewhere: the request is routed again once.
	notLeader bool
	// transferRefused is set when a write was refused, unproposed, because
	// its shard's leadership is being transferred (transfer_hold.go);
	// holding is set while such a write is held and run here again.
	transferRefused, holding bool
	// ups are the client's upstream connections, by raft address.
	ups router.Upstreams
	// lastWr is the client's last write, for WAIT.
	lastWr lastWrite
	// heldFwds are forwarded requests the event loop left for the
	// client's goroutine to route again and answer (answerForwards).
	heldFwds []fwdCall
	// lateApplied, when not nil, is closed once the client's last write
	// answered at ACKLEVEL LEADER is applied (awaitOwnWrites).
	lateApplied <-chan struct{}
	// slow is the running command's blocked time, for SLOWLOG
	// (cmd_slowlog.go); the connection goroutine's.
	slow slowNote

	// acl is the client's ACL user and its cached rules (acl.go).
	acl clientACL

	// lp is the event loop's state while the loop serves the client
	// (loop_linux.go), nil otherwise. A client the loop hands to the
	// goroutine path brings the reader that holds its unread bytes (rr)
	// and the number of requests already put in reqs (preloaded).
	lp        *loopClient
	rr        *resp.RequestReader
	preloaded int64
}

// lastWrite is where a client's last write went: the shard and the log
// index of the entry holding it (0 when unknown), or the upstream it was
// forwarded to (up, its raft address; trunk when it went on a trunk
// rather than the client's own upstream).
type lastWrite struct {
	shard int
	index uint64
	up    string
	trunk bool
	ok    bool
}

// lastWrite returns the shard and log index of the client's last write
// (index 0 when it was forwarded or not known); ok is false before its
// first write. WAIT counts the replicas holding it.
func (c *Client) lastWrite() (shard int, index uint64, ok bool) {
	return c.lastWr.shard, c.lastWr.index, c.lastWr.ok
}

// BlockResult says why WaitBlocked returned.
type BlockResult int

// Outcomes of WaitBlocked.
const (
	// BlockWoken: wake received.
	BlockWoken BlockResult = iota
	// BlockTimeout: the deadline passed; reply as the command's timeout.
	BlockTimeout
	// BlockUnblockedTimeout: CLIENT UNBLOCK id [TIMEOUT]; reply as a timeout.
	BlockUnblockedTimeout
	// BlockUnblockedError: CLIENT UNBLOCK id ERROR; reply
	// "-UNBLOCKED client unblocked via CLIENT UNBLOCK".
	BlockUnblockedError
	// BlockClosed: the connection closed or the server is shutting down;
	// send nothing.
	BlockClosed
	// BlockFailover: this node stopped leading the shard of the keys;
	// reply Redis's "UNBLOCKED force unblock … (master -> replica?)".
	BlockFailover
)

// ErrUnblocked is the reply Redis sends a client released by
// CLIENT UNBLOCK id ERROR.
const ErrUnblocked = ErrorReply("UNBLOCKED client unblocked via CLIENT UNBLOCK")

func newClient(s *Server, nc net.Conn, id int64, authed bool) *Client {
	now := time.Now()
	c := &Client{
		id:        id,
		srv:       s,
		nc:        nc,
		addr:      nc.RemoteAddr().String(),
		laddr:     nc.LocalAddr().String(),
		createdAt: now,
		closed:    make(chan struct{}),
		stop:      make(chan struct{}),
		unblockCh: make(chan BlockResult, 1),
		ranCh:     make(chan struct{}, 1),
		onShard:   -1,
	}
	c.out.init()
	c.proto.Store(2)
	c.authed.Store(authed)
	c.lastActive.Store(now.UnixNano())
	return c
}

// ID returns the client's ID (CLIENT ID).
func (c *Client) ID() int64 { return c.id }

// DB returns the selected database (SELECT).
func (c *Client) DB() int { return int(c.db.Load()) }

// Proto returns the protocol version, 2 or 3 (HELLO).
func (c *Client) Proto() int { return int(c.proto.Load()) }

// Server returns the server the client is connected to.
func (c *Client) Server() *Server { return c.srv }

// Push, reply and flush (the write path) are in outbuf.go.

// WaitBlocked parks the client as blocked (counted in INFO blocked_clients,
// flag "b" in CLIENT LIST) until wake receives or is closed, the deadline
// passes (zero: wait forever), CLIENT UNBLOCK releases it, the connection
// closes or the server shuts down.
func (c *Client) WaitBlocked(deadline time.Time, wake <-chan struct{}) BlockResult {
	return c.waitBlocked(deadline, wake, nil)
}

// waitBlocked is WaitBlocked that also ends with BlockFailover when lost
// is closed (the shard of the keys is no longer led here).
func (c *Client) waitBlocked(deadline time.Time, wake, lost <-chan struct{}) (res BlockResult) {
	c.enterBlocked()
	defer c.leaveBlocked()
	defer func(t0 time.Time) { c.noteBlocked(t0, res) }(time.Now())
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return BlockTimeout
		}
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-wake:
		return BlockWoken
	case <-timeout:
		return BlockTimeout
	case r := <-c.unblockCh:
		return r
	case <-c.closed:
		return BlockClosed
	case <-c.srv.done:
		return BlockClosed
	case <-lost:
		return BlockFailover
	}
}

// enterBlocked marks the client blocked (INFO blocked_clients, CLIENT
// UNBLOCK applies), after writing what is queued: a blocked read answered
// nothing yet, so pushes held for its reply (a tracked XREAD) go now.
func (c *Client) enterBlocked() {
	c.releaseAfterReply()
	c.flush()
	c.blockMu.Lock()
	c.blocked = true
	c.blockMu.Unlock()
	c.srv.stats.BlockedClients.Add(1)
}

// leaveBlocked ends enterBlocked, dropping an UNBLOCK that raced with
// another outcome.
func (c *Client) leaveBlocked() {
	c.srv.stats.BlockedClients.Add(-1)
	c.blockMu.Lock()
	c.blocked = false
	select {
	case <-c.unblockCh:
	default:
	}
	c.blockMu.Unlock()
}

// isBlocked reports whether the client is parked in WaitBlocked.
func (c *Client) isBlocked() bool {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	return c.blocked
}

// unblock releases a blocked client with r (CLIENT UNBLOCK); false if it
// was not blocked.
func (c *Client) unblock(r BlockResult) bool {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	if !c.blocked {
		return false
	}
	select {
	case c.unblockCh <- r:
	default: // already being released
	}
	return true
}

// request is one parsed request, or the error that ended reading.
type request struct {
	args [][]byte
	err  error
}

// reqQueue is how many batches the reader may parse ahead of the
// connection goroutine: as many as it could hand over single requests
// before batching, so a blocked client's close is seen as early as then.
const reqQueue = maxPipeline

// serveClient runs a connection: a reader goroutine parses requests (so a
// close is seen even while a command is blocked), this goroutine runs them
// in order and flushes when no pipelined request is waiting: once per batch
// the reader handed over, so a pipeline's replies leave in one write.
// Consecutive plain writes of a pipeline are proposed together and answered
// in order (see pipeline); anything else first drains them.
func (s *Server) serveClient(c *Client) {
	defer s.wg.Done()
	reqs := c.reqs
	go c.readLoop(reqs)
	pl := newPipeline(s, c)
	if c.heldFwds != nil {
		s.answerHeld(c)
		c.flush()
	}
	defer func() {
		pl.drain()
		close(c.stop)
		s.resetClientState(c)
		c.ups.Close()
		c.nc.Close()
		s.removeClient(c)
	}()
	for batch := range reqs {
		// One clock read per batch: the start of its pipelined writes
		// (everything else reads the clock itself, see dispatchIn).
		now := time.Now()
		for i, req := range batch {
			c.backlog.Add(-1)
			if req.err != nil {
				pl.drain()
				var pe resp.ProtocolError
				if errors.As(req.err, &pe) {
					s.stats.ErrorReply("ERR")
					c.reply(ErrorReply("ERR " + pe.Error()))
					c.flush()
					s.log.Debug("protocol error", "client", c.id, "addr", c.addr, "err", pe.Error())
				}
				return
			}
			s.dispatchIn(c, req.args, pl, now)
			batch[i] = request{} // let the arguments go
			c.ran.Add(1)
			if c.ranWait.Load() {
				select {
				case c.ranCh <- struct{}{}:
				default:
				}
			}
			if c.quit {
				pl.drain()
				c.flush()
				return
			}
			if pl.full() || (i == len(batch)-1 && len(reqs) == 0) {
				pl.drain()
			}
		}
		c.reuseBatch(batch)
		if len(reqs) == 0 {
			if c.flush() != nil {
				return
			}
		}
	}
}

// readLoop parses requests and hands them to the connection goroutine. It
// closes c.closed and reqs when reading ends. With "timeout" set, a client
// idle that long is closed unless it is blocked (Redis exempts those).
// After each read that may block it also takes every complete request
// already buffered (without blocking on a partial one) and hands them over
// as one batch.
func (c *Client) readLoop(reqs chan<- []request) {
	defer close(reqs)
	defer close(c.closed)
	s := c.srv
	if !s.handshake(c) {
		return
	}
	// handed counts the requests handed over; collecting is set while a
	// batch is gathered (not yet handed over).
	handed := c.preloaded
	collecting := false
	authed := func() bool {
		return c.authed.Load() || s.defaultAuthed()
	}
	limitsLifted := func() bool {
		// Redis runs the requests before this one (an AUTH among
		// them) before it applies the limits for clients that have
		// not authenticated; a request taken while a batch is
		// gathered is left to the general path, which waits.
		if authed() {
			return true
		}
		return !collecting && c.waitRan(handed) && authed()
	}
	rr := c.rr // the event loop's, holding the bytes it did not take
	if rr == nil {
		rr = resp.NewRequestReader(countingReader{c.nc, &s.stats.NetInput},
			func() int64 { return s.config().ProtoMaxBulkLen }, limitsLifted)
	} else {
		rr.SetAuthed(limitsLifted)
	}
	send := func(batch []request) bool {
		handed += int64(len(batch))
		c.backlog.Add(int64(len(batch)))
		select {
		case reqs <- batch:
			return true
		case <-c.stop:
			return false
		}
	}
	for {
		// Another node's upstream is idle between its client's requests:
		// the idle timeout does not apply to it.
		if t := s.config().Timeout; t > 0 && !c.internal {
			c.nc.SetReadDeadline(time.Now().Add(time.Duration(t) * time.Second))
		}
		args, err := rr.ReadCommand()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && (c.isBlocked() || c.isInCommand()) {
				continue
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				var pe resp.ProtocolError
				if errors.As(err, &pe) {
					send([]request{{err: err}})
				}
			}
			return
		}
		batch := c.newBatch()
		batch = append(batch, request{args: args})
		collecting = true
		for len(batch) < c.maxInFlight() && rr.Buffered() > 0 {
			more, ok := rr.ReadBuffered()
			if !ok {
				break
			}
			batch = append(batch, request{args: more})
		}
		collecting = false
		if !send(batch) {
			return
		}
	}
}

// newBatch returns an empty batch for the reader to fill: one the
// connection goroutine gave back, or a new one.
func (c *Client) newBatch() []request {
	select {
	case b := <-c.spare:
		return b
	default:
		return make([]request, 0, 16)
	}
}

// reuseBatch gives a run batch (its requests cleared) back to the reader.
func (c *Client) reuseBatch(b []request) {
	select {
	case c.spare <- b[:0]:
	default:
	}
}

// waitRan waits until the connection goroutine has run n requests; false
// if the connection ended first.
func (c *Client) waitRan(n int64) bool {
	c.ranWait.Store(true)
	defer c.ranWait.Store(false)
	for c.ran.Load() < n {
		select {
		case <-c.ranCh:
		case <-c.stop:
			return false
		}
	}
	return true
}

func (c *Client) isInCommand() bool { return c.inCommand.Load() }

// sortClients orders clients by ID.
func sortClients(list []*Client) {
	sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
}

// countingReader adds the bytes read from a client to total_net_input_bytes.
type countingReader struct {
	r     io.Reader
	total *atomic.Int64
}

func (cr countingReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	cr.total.Add(int64(n))
	return n, err
}
