package server

import (
	"errors"
	"math"
	"sync"

	"streamd/server/resp"
	"streamd/server/router"
)

// A client's output goes through an outBuf: replies and pushes are rendered
// whole into one queue, so they never interleave, and a writer copies the
// queue to the socket without holding the queue's lock. The writer is the
// connection goroutine when it flushes, or a short-lived drain goroutine
// started by Push when nobody is writing; so Push never waits for the
// network, and a client that stops reading stalls only itself. A client
// whose pending output passes pushOutputLimit when a push is queued is
// disconnected, as Redis's client-output-buffer-limit (pubsub class, 32mb
// hard limit) does.

// Output limits.
const (
	// pushOutputLimit is the pending output (queued and being written) past
	// which queuing a push disconnects the client: Redis's hard limit for
	// pub/sub clients, the class whose output is pushed unasked.
	pushOutputLimit = 32 << 20
	// replyFlushAt is how much reply output the connection goroutine queues
	// before it writes it out itself, even with pipelined requests pending
	// (so a pipeline of big replies does not pile up in memory). A reply
	// being rendered is written out each time this much is queued, so a
	// huge reply (XRANGE - + of a long stream) is never whole in memory.
	// It is below maxSpareBuf so a chunk's buffer is reused for the next.
	replyFlushAt = 48 << 10
	// maxSpareBuf bounds the chunk kept for reuse after a write.
	maxSpareBuf = 64 << 10
)

// errOutputLimit is why a client past pushOutputLimit was disconnected.
var errOutputLimit = errors.New("client output buffer limit reached")

// outBuf is a client's outbound queue (Client.out).
type outBuf struct {
	mu   sync.Mutex
	cond sync.Cond // L is &mu; broadcast when bytes are written or the queue fails

	buf      []byte // rendered output not yet taken by the writer
	spare    []byte // the previous chunk, reused as buf
	inflight int    // bytes the writer is writing now
	queued   int64  // bytes ever queued
	written  int64  // bytes ever written (or dropped by a failed write)
	writing  bool   // a writer is active
	err      error  // first write error or errOutputLimit; output is dropped after it

	// afterReply holds pushes for this client caused by its own command
	// (invalidations of keys it wrote): Redis sends them after the
	// command's reply, so the next reply writes them after itself.
	afterReply []Push
	// heldBytes is the rendered size of afterReply's pushes held for
	// another client's write (counted against pushOutputLimit, so a
	// client stalled in a huge reply is still disconnected as its
	// pushes pile up); scratch is where they are measured.
	heldBytes int
	scratch   []byte
	// hold is set from a tracked read until its reply is queued: pushes
	// from other clients' writes wait in afterReply meanwhile, so an
	// invalidation never overtakes the reply carrying the value it
	// invalidates (the client would cache that value for good).
	hold bool
	// enc renders replies (reply), kept so that rendering one allocates
	// nothing; encBusy is set while it is in use, encStart is where the
	// reply being rendered began in buf.
	enc      resp.Encoder
	encBusy  bool
	encStart int
}

// init sets up the condition variable; newClient calls it.
func (ob *outBuf) init() { ob.cond.L = &ob.mu }

// appendLocked renders r at the end of the queue; ob.mu is held.
func (ob *outBuf) appendLocked(r Reply, proto int) {
	n := len(ob.buf)
	ob.buf = resp.AppendReply(ob.buf, r, proto)
	ob.queued += int64(len(ob.buf) - n)
}

// pendingLocked is the output not yet written; ob.mu is held.
func (ob *outBuf) pendingLocked() int { return len(ob.buf) + ob.inflight }

// failLocked drops the queue and makes every later write a no-op; ob.mu is
// held.
func (ob *outBuf) failLocked(err error) {
	if ob.err == nil {
		ob.err = err
	}
	ob.buf, ob.spare, ob.afterReply, ob.scratch, ob.heldBytes = nil, nil, nil, nil, 0
	ob.cond.Broadcast()
}

// Push queues an out-of-band reply (a tracking invalidation) and returns
// without waiting for the network: a drain goroutine writes it if the
// connection goroutine is not writing. It is safe from any goroutine and
// never splits a reply. A client whose pending output then exceeds
// pushOutputLimit is disconnected.
func (c *Client) Push(p Push) {
	ob := &c.out
	ob.mu.Lock()
	if ob.err != nil {
		ob.mu.Unlock()
		return
	}
	if ob.hold {
		ob.afterReply = append(ob.afterReply, p)
		ob.scratch = resp.AppendReply(ob.scratch[:0], p, c.Proto())
		ob.heldBytes += len(ob.scratch)
		if cap(ob.scratch) > maxSpareBuf {
			ob.scratch = nil
		}
		if pending := ob.pendingLocked() + ob.heldBytes; pending > pushOutputLimit {
			c.failOutputLocked(pending)
			return
		}
		ob.mu.Unlock()
		return
	}
	c.queuePushLocked(p)
}

// queuePushLocked appends r to the output (c.out.mu held; it releases it),
// disconnects the client if its pending output passes pushOutputLimit, and
// starts a drain goroutine unless one is writing.
func (c *Client) queuePushLocked(r Reply) {
	ob := &c.out
	ob.appendLocked(r, c.Proto())
	if pending := ob.pendingLocked(); pending > pushOutputLimit {
		c.failOutputLocked(pending)
		return
	}
	start := !ob.writing
	if start {
		ob.writing = true
	}
	ob.mu.Unlock()
	if start {
		go c.drain()
	}
}

// failOutputLocked disconnects a client whose pending output passed
// pushOutputLimit; c.out.mu is held and released.
func (c *Client) failOutputLocked(pending int) {
	c.out.failLocked(errOutputLimit)
	c.out.mu.Unlock()
	c.srv.log.Warn("client closed for overcoming of output buffer limits",
		"client", c.id, "addr", c.addr, "pending", pending, "limit", pushOutputLimit)
	c.nc.Close()
}

// pushAfterReply holds p to be written after the reply of the command the
// client is running (its own write's invalidation): the next reply or flush
// queues it. Only the client's own goroutine calls it, during a command.
func (c *Client) pushAfterReply(p Push) {
	ob := &c.out
	ob.mu.Lock()
	if ob.err == nil {
		ob.afterReply = append(ob.afterReply, p)
	}
	ob.mu.Unlock()
}

// releaseAfterReply queues the pushes held by pushAfterReply or hold, for a
// caller that has no reply to queue with them (a blocked read, which
// answered nothing yet).
func (c *Client) releaseAfterReply() {
	c.out.mu.Lock()
	c.releaseLocked()
	c.out.mu.Unlock()
}

// holdPushes makes later pushes wait until the current command's reply is
// queued (see outBuf.hold); trackRead calls it before a tracked read.
func (c *Client) holdPushes() {
	c.out.mu.Lock()
	c.out.hold = true
	c.out.mu.Unlock()
}

// releaseLocked queues the held pushes and ends the hold; c.out.mu is held.
func (c *Client) releaseLocked() {
	ob := &c.out
	ob.hold = false
	if ob.err == nil && len(ob.afterReply) > 0 {
		proto := c.Proto()
		for _, p := range ob.afterReply {
			ob.appendLocked(p, proto)
		}
	}
	ob.afterReply, ob.heldBytes = nil, 0
}

// reply queues a command's reply, followed by the pushes its command
// caused for this client (pushAfterReply). It is written when the
// connection goroutine flushes (when no pipelined request is pending), or
// as it is rendered once replyFlushAt bytes are queued: a huge reply goes
// out in chunks, each chunk's buffer reused for the next, and a client
// that does not read stalls its connection goroutine holding one chunk,
// not the whole rendered reply. Pushes wait (as with hold) until the reply
// is queued whole, so they never split it.
func (c *Client) reply(r Reply) {
	ob := &c.out
	ob.mu.Lock()
	if ob.err == nil {
		ob.hold = true // released by releaseLocked below
		if ob.encBusy {
			// Never expected (only the connection goroutine renders
			// replies), but a second renderer must not share enc.
			c.renderSeparately(r)
		} else {
			ob.encBusy = true
			ob.encStart = len(ob.buf)
			if ob.enc.Flush == nil {
				ob.enc.Flush = c.encFlush // bound once per client
			}
			enc := &ob.enc
			enc.Reset(ob.buf, c.Proto(), replyFlushAt)
			enc.Reply(r)
			if ob.err == nil {
				ob.buf = enc.Buf
				ob.queued += int64(len(enc.Buf) - ob.encStart)
			}
			enc.Buf = nil
			ob.encBusy = false
		}
	}
	c.releaseLocked()
	big := len(ob.buf) >= replyFlushAt
	ob.mu.Unlock()
	if big {
		c.flush()
	}
}

// renderSeparately is reply's rendering with an encoder of its own (ob.mu
// held, ob.err nil).
func (c *Client) renderSeparately(r Reply) {
	ob := &c.out
	n := len(ob.buf)
	enc := resp.Encoder{Buf: ob.buf, Proto: c.Proto(), Limit: replyFlushAt}
	enc.Flush = func(b []byte) ([]byte, bool) {
		ob.buf = b
		ob.queued += int64(len(b) - n)
		c.writeOutLocked()
		n = len(ob.buf)
		return ob.buf, ob.err == nil
	}
	enc.Reply(r)
	if ob.err == nil {
		ob.buf = enc.Buf
		ob.queued += int64(len(enc.Buf) - n)
	}
}

// encFlush is the reply encoder's Flush: it queues what was rendered since
// encStart, writes it out (ob.mu held, released while writing) and returns
// the buffer to go on in. Bound once per client, so rendering allocates no
// closure.
func (c *Client) encFlush(b []byte) ([]byte, bool) {
	ob := &c.out
	ob.buf = b
	ob.queued += int64(len(b) - ob.encStart)
	c.writeOutLocked()
	ob.encStart = len(ob.buf)
	return ob.buf, ob.err == nil
}

// writeOutLocked writes everything queued so far as the active writer,
// waiting first for a drain goroutine that is writing; ob.mu is held, and
// released during each write. reply calls it while rendering, with pushes
// held, so nothing else is queued meanwhile.
func (c *Client) writeOutLocked() {
	ob := &c.out
	target := ob.queued
	for ob.err == nil && ob.written < target {
		if ob.writing {
			ob.cond.Wait()
			continue
		}
		ob.writing = true
		c.writeLocked(target)
		ob.writing = false
		ob.cond.Broadcast()
	}
}

// flush writes everything queued so far, including pushes still held for
// after a reply (a pipelined write's effects run after its reply was
// queued), and returns the connection's output error, if any. It writes on
// the calling goroutine, or waits for an active drain goroutine to get past
// what was queued. Only the connection goroutine calls it, between
// commands.
func (c *Client) flush() error {
	ob := &c.out
	ob.mu.Lock()
	defer ob.mu.Unlock()
	c.releaseLocked()
	target := ob.queued
	for ob.err == nil && ob.written < target {
		if ob.writing {
			ob.cond.Wait()
			continue
		}
		ob.writing = true
		c.writeLocked(target)
		if ob.err == nil && len(ob.buf) > 0 {
			// Pushes queued meanwhile: leave them to a drain goroutine.
			go c.drain()
		} else {
			ob.writing = false
		}
	}
	return ob.err
}

// drain writes the queue until it is empty, as the active writer; Push and
// flush start it with ob.writing already set.
func (c *Client) drain() {
	ob := &c.out
	ob.mu.Lock()
	c.writeLocked(math.MaxInt64)
	ob.writing = false
	failed := ob.err != nil
	ob.cond.Broadcast()
	ob.mu.Unlock()
	if failed {
		c.nc.Close() // wake the reader of a connection that cannot be written
	}
}

// writeLocked writes queued chunks until the queue is empty, upto bytes
// have been written or a write fails. ob.mu is held, and released during
// each write; the caller is the active writer.
func (c *Client) writeLocked(upto int64) {
	ob := &c.out
	for ob.err == nil && len(ob.buf) > 0 && ob.written < upto {
		chunk := ob.buf
		ob.buf, ob.spare = ob.spare[:0], nil
		ob.inflight = len(chunk)
		ob.mu.Unlock()
		n, err := c.nc.Write(chunk)
		c.srv.stats.NetOutput.Add(int64(n))
		ob.mu.Lock()
		ob.inflight = 0
		ob.written += int64(len(chunk))
		if cap(chunk) <= maxSpareBuf {
			ob.spare = chunk[:0]
		}
		if err != nil {
			ob.failLocked(err)
		}
		ob.cond.Broadcast()
	}
}

// replyRaw queues relayed reply bytes, as reply does for a Reply value.
func (c *Client) replyRaw(b []byte) {
	ob := &c.out
	ob.mu.Lock()
	if ob.err == nil {
		ob.buf = append(ob.buf, b...)
		ob.queued += int64(len(b))
	}
	c.releaseLocked()
	big := len(ob.buf) >= replyFlushAt
	ob.mu.Unlock()
	if big {
		c.flush()
	}
}

// send queues a reply: relayed bytes as they are, any other value rendered.
func (c *Client) send(r Reply) {
	if raw, ok := r.(router.Raw); ok {
		c.replyRaw(raw)
		return
	}
	c.reply(r)
}

// flushNow writes what is queued (pushes held for after a reply included)
// with one call of write, which must not block (the event loop's socket
// write; it returns 0 and no error when the socket takes nothing now). It
// reports whether everything queued went out; what did not stays queued,
// in order, for a writer that may wait (the connection's goroutine). While
// another writer is active (a push's drain goroutine) it writes nothing and
// reports done: that writer goes on until the queue is empty.
func (c *Client) flushNow(write func([]byte) (int, error)) (done bool, err error) {
	ob := &c.out
	ob.mu.Lock()
	defer ob.mu.Unlock()
	c.releaseLocked()
	switch {
	case ob.err != nil:
		return false, ob.err
	case ob.writing, len(ob.buf) == 0:
		return true, nil
	}
	n, err := write(ob.buf)
	n = max(n, 0)
	c.srv.stats.NetOutput.Add(int64(n))
	ob.written += int64(n)
	if err != nil {
		ob.failLocked(err)
		return false, err
	}
	rest := copy(ob.buf, ob.buf[n:])
	ob.buf = ob.buf[:rest]
	return rest == 0, nil
}

// startDrain starts a drain goroutine for what is queued, unless a writer
// is active or nothing is queued: the event loop's connection handed to its
// own goroutine with output the socket did not take yet.
func (c *Client) startDrain() {
	ob := &c.out
	ob.mu.Lock()
	start := ob.err == nil && !ob.writing && len(ob.buf) > 0
	if start {
		ob.writing = true
	}
	ob.mu.Unlock()
	if start {
		go c.drain()
	}
}
