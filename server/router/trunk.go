package router

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"streamd/server/resp"
)

// Trunks (issue #16). Requests that clients pipeline to a node that does
// not lead their shard go to the leader over a trunk: a connection from
// this node's server to the leader's, shared by every client of the same
// ACL user, protocol and database (in TrunkLanes lanes, a client always in
// the same one). The leader then reads many clients' requests with one
// read and answers them with one write, and this node writes them with one
// write, where a connection per client would cost each client's pipeline
// its own read and write on both nodes.
//
// A client hands its requests for one leader to the trunk together, as a
// TrunkBatch (Submit), and waits for their replies (Wait). The trunk writes
// batches in the order they were submitted and its reader goroutine hands
// the replies, which the leader sends in request order, to the batches in
// that same order. A client's requests on one trunk therefore run in the
// order it sent them, and it reads their replies before it sends anything
// else (its pipeline drains), so requests it sends another way (its own
// upstream) never overtake them.
//
// A trunk that breaks (its connection fails or closes, the leader sends a
// reply nobody asked for, or no reply comes within ForwardTimeout of the
// oldest batch waiting) fails every batch it holds: the replies that had
// not come are lost (an unknown outcome for a write, as on a client's own
// upstream), and the next request dials a new trunk.

// TrunkLanes is how many trunks go to one node for one user, protocol and
// database: the leader serves each on one goroutine, with at most its
// pipeline's limit of writes in flight.
const TrunkLanes = 8

// trunkKey is what a trunk's requests share.
type trunkKey struct {
	addr  string
	user  string
	proto int
	db    int
	lane  int
}

// trunks are a node's trunks to other nodes, by key.
type trunks struct {
	mu     sync.Mutex
	m      map[trunkKey]*Trunk
	closed bool
}

// Trunk is one shared connection to another node's server.
type Trunk struct {
	key     trunkKey
	conn    net.Conn
	timeout time.Duration
	owner   *trunks

	mu sync.Mutex
	// wbuf holds requests submitted while another submitter writes;
	// spare is the buffer the last write went from, reused.
	wbuf, spare []byte
	writing     bool
	// queue holds the batches whose replies are due, in request order.
	queue []*TrunkBatch
	// err is set once the trunk broke; nothing is sent on it after.
	err error
}

// TrunkBatch is one client's requests to one leader, sent on a trunk
// together, and then their replies. The zero value is an empty batch; a
// batch is reused once Wait returned.
type TrunkBatch struct {
	reqs []byte
	n    int
	// buf holds the replies one after the other, ends[i] the end of
	// reply i; fewer ends than requests when the trunk broke (err).
	buf  []byte
	ends []int
	err  error
	done chan struct{}
	// waited: done was received (Wait or Ready); notify is called once
	// the batch is done (OnDone).
	waited bool
	notify func()
}

// OnDone has f called, on the trunk's goroutine, each time the batch is
// done after a Submit (an event loop wakes itself this way instead of
// waiting). f must not block.
func (b *TrunkBatch) OnDone(f func()) { b.notify = f }

// Add appends one request to the batch.
func (b *TrunkBatch) Add(args [][]byte) {
	b.reqs = resp.AppendCommand(b.reqs, args...)
	b.n++
}

// Len is the number of requests in the batch.
func (b *TrunkBatch) Len() int { return b.n }

// Reply is the reply to request i, its exact bytes; ok is false when it
// was lost with a broken trunk.
func (b *TrunkBatch) Reply(i int) (rep []byte, ok bool) {
	if i >= len(b.ends) {
		return nil, false
	}
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.buf[start:b.ends[i]], true
}

// Err is why replies were lost (nil when all came).
func (b *TrunkBatch) Err() error { return b.err }

// Wait waits until every reply came or the trunk broke.
func (b *TrunkBatch) Wait() {
	if !b.waited {
		<-b.done
		b.waited = true
	}
}

// Ready reports, without waiting, whether every reply came or the trunk
// broke (Wait then returns at once).
func (b *TrunkBatch) Ready() bool {
	if !b.waited {
		select {
		case <-b.done:
			b.waited = true
		default:
		}
	}
	return b.waited
}

// Reset empties the batch for reuse (after Wait). Big buffers are not
// kept.
func (b *TrunkBatch) Reset() {
	b.reqs, b.buf = trimBuf(b.reqs), trimBuf(b.buf)
	b.ends = b.ends[:0]
	b.n, b.err, b.waited = 0, nil, false
}

func trimBuf(b []byte) []byte {
	if cap(b) > 64<<10 {
		return nil
	}
	return b[:0]
}

// finish marks the batch done.
func (b *TrunkBatch) finish(err error) {
	b.err = err
	notify := b.notify
	b.done <- struct{}{}
	if notify != nil {
		notify()
	}
}

// errTrunkUnasked is a reply the leader sent with no request waiting.
var errTrunkUnasked = errors.New("the shard leader sent a reply nobody asked for")

// errTrunkClosed is the server's shutdown.
var errTrunkClosed = errors.New("the server is shutting down")

// Trunk returns cl's trunk to the node at addr, dialling it; lane picks
// one of TrunkLanes.
func (r *Cluster) Trunk(cl Client, addr string, lane int) (*Trunk, error) {
	key := trunkKey{addr: addr, user: cl.User(), proto: cl.Proto(), db: cl.DB(), lane: lane % TrunkLanes}
	ts := &r.trunks
	ts.mu.Lock()
	t := ts.m[key]
	closed := ts.closed
	ts.mu.Unlock()
	if t != nil {
		return t, nil
	}
	if closed {
		return nil, errTrunkClosed
	}
	nc, err := r.node.DialRESP(addr)
	if err != nil {
		return nil, err
	}
	t = &Trunk{key: key, conn: nc, timeout: r.ForwardTimeout(), owner: ts}
	br := bufio.NewReaderSize(nc, 64<<10)
	if err := t.setUp(resp.NewReplyReader(br)); err != nil {
		nc.Close()
		return nil, err
	}
	ts.mu.Lock()
	if old := ts.m[key]; old != nil || ts.closed {
		// Another client dialled it first, or the server is closing.
		ts.mu.Unlock()
		nc.Close()
		if old == nil {
			return nil, errTrunkClosed
		}
		return old, nil
	}
	if ts.m == nil {
		ts.m = make(map[trunkKey]*Trunk)
	}
	ts.m[key] = t
	ts.mu.Unlock()
	go t.read(resp.NewReplyReader(br))
	return t, nil
}

// setUp names the trunk's user, protocol and database to the leader and
// reads the answers, within ForwardTimeout.
func (t *Trunk) setUp(rr *resp.ReplyReader) error {
	buf := resp.AppendCommand(nil, []byte(AuthAsCommand), []byte(t.key.user))
	n := 1
	if t.key.proto != 2 {
		buf = resp.AppendCommand(buf, []byte("HELLO"), []byte(strconv.Itoa(t.key.proto)))
		n++
	}
	if t.key.db != 0 {
		buf = resp.AppendCommand(buf, []byte("SELECT"), []byte(strconv.Itoa(t.key.db)))
		n++
	}
	t.conn.SetDeadline(time.Now().Add(t.timeout))
	defer t.conn.SetDeadline(time.Time{})
	if _, err := t.conn.Write(buf); err != nil {
		return err
	}
	for range n {
		rep, err := rr.ReadRaw(nil)
		if err != nil {
			return err
		}
		if rep[0] == '-' || rep[0] == '!' {
			return fmt.Errorf("upstream refused the connection set-up: %s", bytes.TrimSpace(rep))
		}
	}
	return nil
}

// Submit sends b's requests on the trunk; Wait then waits for their
// replies. A trunk that broke finishes b at once with its error.
func (t *Trunk) Submit(b *TrunkBatch) {
	if b.done == nil {
		b.done = make(chan struct{}, 1)
	}
	if b.n == 0 {
		b.finish(nil)
		return
	}
	t.mu.Lock()
	if t.err != nil {
		b.finish(t.err)
		t.mu.Unlock()
		return
	}
	if len(t.queue) == 0 {
		// The oldest batch waiting bounds the wait for a reply.
		t.conn.SetReadDeadline(time.Now().Add(t.timeout))
	}
	t.queue = append(t.queue, b)
	t.wbuf = append(t.wbuf, b.reqs...)
	if t.writing {
		// The submitter writing now sends these too.
		t.mu.Unlock()
		return
	}
	t.writing = true
	for len(t.wbuf) > 0 && t.err == nil {
		out := t.wbuf
		t.wbuf = t.spare[:0]
		t.mu.Unlock()
		t.conn.SetWriteDeadline(time.Now().Add(t.timeout))
		_, err := t.conn.Write(out)
		t.mu.Lock()
		t.spare = trimBuf(out)
		if err != nil {
			t.writing = false
			t.mu.Unlock()
			t.fail(err)
			return
		}
	}
	t.writing = false
	t.mu.Unlock()
}

// read hands the leader's replies to the batches, in order, until the
// trunk breaks.
func (t *Trunk) read(rr *resp.ReplyReader) {
	var rep []byte
	for {
		var err error
		rep, err = rr.ReadRaw(rep[:0])
		if err != nil {
			t.fail(err)
			return
		}
		if rep[0] == '>' {
			continue // a push is no command's reply
		}
		t.mu.Lock()
		if len(t.queue) == 0 {
			t.mu.Unlock()
			t.fail(errTrunkUnasked)
			return
		}
		b := t.queue[0]
		b.buf = append(b.buf, rep...)
		b.ends = append(b.ends, len(b.buf))
		if len(b.ends) == b.n {
			// Shifted down rather than resliced: the queue's array is
			// reused, not reallocated each time it empties.
			n := copy(t.queue, t.queue[1:])
			t.queue[n] = nil
			t.queue = t.queue[:n]
			if n == 0 {
				t.conn.SetReadDeadline(time.Time{})
			} else {
				t.conn.SetReadDeadline(time.Now().Add(t.timeout))
			}
			b.finish(nil)
		}
		t.mu.Unlock()
		if cap(rep) > 64<<10 {
			rep = nil
		}
	}
}

// fail breaks the trunk: its batches finish with err, its connection is
// closed and it is forgotten (the next request dials a new one).
func (t *Trunk) fail(err error) {
	t.mu.Lock()
	if t.err == nil {
		t.err = err
	}
	for _, b := range t.queue {
		b.finish(t.err)
	}
	clear(t.queue)
	t.queue = t.queue[:0]
	t.mu.Unlock()
	t.conn.Close()
	ts := t.owner
	ts.mu.Lock()
	if ts.m[t.key] == t {
		delete(ts.m, t.key)
	}
	ts.mu.Unlock()
}

// closeTrunks breaks every trunk and refuses new ones (the server's
// shutdown).
func (r *Cluster) closeTrunks() {
	ts := &r.trunks
	ts.mu.Lock()
	ts.closed = true
	all := make([]*Trunk, 0, len(ts.m))
	for _, t := range ts.m {
		all = append(all, t)
	}
	ts.mu.Unlock()
	for _, t := range all {
		t.fail(errTrunkClosed)
	}
}
