package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"streamd/config"
	"streamd/replication"
	"streamd/server/resp"
)

// Forwarding (plain mode): a command for a shard led by another node is
// sent, as the client sent it, over an upstream connection from this
// client to that node's server (Node.DialRESP over the raft port, an
// internal connection there: authenticated, never forwarded again), and the
// leader's reply bytes are relayed verbatim. Each client has at most one
// upstream per remote node, dialled lazily; it mirrors the client's
// protocol (HELLO) and selected database (SELECT) before a request, and is
// closed with the client. A WATCH of a remote key and the whole MULTI/EXEC
// of a remote shard go over the same upstream, so EXEC there sees the WATCH.

// upstream is one client's connection to another node's server.
type upstream struct {
	addr  string
	conn  net.Conn
	r     *resp.ReplyReader
	w     *bufio.Writer
	proto int
	db    int
}

// rawReply is a reply relayed from an upstream: its exact RESP bytes.
type rawReply []byte

// fwdKind says how a broken upstream is reported.
type fwdKind uint8

const (
	// fwdRead: nothing changed; the caller may retry.
	fwdRead fwdKind = iota
	// fwdWrite: the write may or may not have been applied.
	fwdWrite
	// fwdBlocking: a blocked read; the client is told it was unblocked.
	fwdBlocking
)

// Forwarding replies.
const (
	// errFailoverUnblocked is Redis's text to a client blocked on a master
	// that became a replica; a forwarded blocking read whose upstream
	// broke gets it too.
	errFailoverUnblocked = ErrorReply("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")
)

// errLostUpstream is the cause of an unknown outcome on a broken upstream.
var errLostUpstream = errors.New("lost the connection to the shard leader")

// upstreamTo returns c's upstream to the node at addr, dialling it.
func (s *Server) upstreamTo(c *Client, addr string) (*upstream, error) {
	if up := c.ups[addr]; up != nil {
		return up, nil
	}
	nc, err := s.dialRESP(addr)
	if err != nil {
		return nil, err
	}
	up := &upstream{addr: addr, conn: nc, r: resp.NewReplyReader(bufio.NewReaderSize(nc, 16<<10)),
		w: bufio.NewWriterSize(nc, 16<<10), proto: 2}
	if c.ups == nil {
		c.ups = make(map[string]*upstream)
	}
	c.ups[addr] = up
	return up, nil
}

// dropUpstream closes and forgets an upstream.
func (c *Client) dropUpstream(up *upstream) {
	up.conn.Close()
	if c.ups[up.addr] == up {
		delete(c.ups, up.addr)
	}
	if c.tx != nil && c.tx.remoteWatch == up.addr {
		// Its WATCHes died with it: the transaction cannot be checked.
		c.tx.remoteWatch = ""
		c.tx.dirty.Store(true)
	}
	if c.lastWr.up == up.addr {
		c.lastWr.up = ""
	}
}

// closeUpstreams closes every upstream of a client that is going away.
func (c *Client) closeUpstreams() {
	for _, up := range c.ups {
		up.conn.Close()
	}
	c.ups = nil
}

// send writes requests on up after mirroring the client's protocol and
// database, and reads the mirroring replies. It returns how many replies
// the caller must read (one per request).
func (up *upstream) send(c *Client, reqs ...[][]byte) error {
	var buf []byte
	prefix := 0
	if p := c.Proto(); p != up.proto {
		buf = resp.AppendCommand(buf, []byte("HELLO"), []byte(strconv.Itoa(p)))
		prefix++
		up.proto = p
	}
	if db := c.DB(); db != up.db {
		buf = resp.AppendCommand(buf, []byte("SELECT"), []byte(strconv.Itoa(db)))
		prefix++
		up.db = db
	}
	for _, args := range reqs {
		buf = resp.AppendCommand(buf, args...)
	}
	if _, err := up.w.Write(buf); err != nil {
		return err
	}
	if err := up.w.Flush(); err != nil {
		return err
	}
	for range prefix {
		rep, err := up.readResult(nil)
		if err != nil {
			return err
		}
		if len(rep) > 0 && (rep[0] == '-' || rep[0] == '!') {
			return fmt.Errorf("upstream refused the connection set-up: %s", bytes.TrimSpace(rep))
		}
	}
	return nil
}

// readResult reads one reply, skipping RESP3 pushes (an upstream never
// enables tracking, but a push is never a command's reply).
func (up *upstream) readResult(dst []byte) ([]byte, error) {
	for {
		start := len(dst)
		var err error
		dst, err = up.r.ReadRaw(dst)
		if err != nil {
			return dst, err
		}
		if dst[start] != '>' {
			return dst[start:], nil
		}
		dst = dst[:start]
	}
}

// relayed turns an upstream's reply bytes into a Reply: a simple error
// becomes an ErrorReply (the same bytes, and counted in errorstats), the
// rest is relayed as is.
func relayed(b []byte) Reply {
	if len(b) > 2 && b[0] == '-' {
		return ErrorReply(b[1 : len(b)-2])
	}
	return rawReply(b)
}

// brokenReply is the answer when an upstream broke during a request.
func brokenReply(kind fwdKind) ErrorReply {
	switch kind {
	case fwdWrite:
		return ErrorReply((&replication.OutcomeUnknownError{Cause: errLostUpstream}).Error())
	case fwdBlocking:
		return errFailoverUnblocked
	}
	return ErrorReply("TRYAGAIN " + errLostUpstream.Error() + "; the command was not run")
}

// dialFailedReply is the answer when the leader cannot be reached at all:
// nothing was sent.
func dialFailedReply(addr string, err error) ErrorReply {
	return ErrorReply("TRYAGAIN cannot reach the shard leader at " + addr + ": " + err.Error() +
		"; the command was not run")
}

// forward sends one request to the node at addr and returns its reply.
// kind says what a broken connection means; a read is retried once on a
// fresh connection by the caller (see forwardRouted).
func (s *Server) forward(c *Client, addr string, args [][]byte, kind fwdKind) (Reply, bool) {
	up, err := s.upstreamTo(c, addr)
	if err != nil {
		return dialFailedReply(addr, err), false
	}
	if kind == fwdBlocking {
		return s.forwardBlocking(c, up, args)
	}
	// The leader answers a write within its quorum timeout and a read
	// within its read barrier's; a leader that does not answer at all
	// (paused, cut off) must not hold the client forever.
	up.conn.SetDeadline(time.Now().Add(s.forwardTimeout()))
	defer up.conn.SetDeadline(time.Time{})
	if err := up.send(c, args); err != nil {
		c.dropUpstream(up)
		return brokenReply(kind), kind == fwdRead
	}
	rep, err := up.readResult(nil)
	if err != nil {
		c.dropUpstream(up)
		return brokenReply(kind), kind == fwdRead
	}
	return relayed(rep), false
}

// forwardTimeout bounds a forwarded non-blocking request: twice the quorum
// timeout (the leader's own bound on a write or a read barrier) plus a
// second for the round trip.
func (s *Server) forwardTimeout() time.Duration {
	q := s.config().QuorumTimeout
	if q <= 0 {
		q = config.DefaultQuorumTimeout
	}
	return 2*q + time.Second
}

// forwardBlocking relays a blocking read: the client counts as blocked
// while the leader holds it, and its close, CLIENT UNBLOCK or the server's
// shutdown closes the upstream (the leader then drops the waiter).
// The leader's move away from that node (a failover while it is cut off
// or paused) also ends the wait, with the failover error.
func (s *Server) forwardBlocking(c *Client, up *upstream, args [][]byte) (Reply, bool) {
	// Sending (and reading the HELLO/SELECT set-up replies) is bounded;
	// the blocked read that follows is not.
	up.conn.SetDeadline(time.Now().Add(s.forwardTimeout()))
	err := up.send(c, args)
	up.conn.SetDeadline(time.Time{})
	if err != nil {
		c.dropUpstream(up)
		return brokenReply(fwdBlocking), false
	}
	shard := s.blockingShard(c, args)
	c.enterBlocked()
	var why atomic.Int32 // a BlockResult once the watcher closed the upstream
	why.Store(-1)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(leaderCheckEvery)
		defer tick.Stop()
		r := BlockResult(-1)
		for r < 0 {
			select {
			case <-stop:
				return
			case r = <-c.unblockCh:
			case <-c.closed:
				r = BlockClosed
			case <-s.done:
				r = BlockClosed
			case <-tick.C:
				if shard < 0 {
					continue
				}
				if addr := s.leaderAddr(shard); addr != "" && addr != up.addr {
					r = blockFailover
				}
			}
		}
		why.Store(int32(r))
		up.conn.Close()
	}()
	rep, err := up.readResult(nil)
	close(stop)
	<-done
	c.leaveBlocked()
	if err != nil {
		c.dropUpstream(up)
		switch BlockResult(why.Load()) {
		case BlockUnblockedError:
			return ErrUnblocked, false
		case BlockUnblockedTimeout:
			return NullArray{}, false
		case BlockClosed:
			return noReply{}, false
		}
		return brokenReply(fwdBlocking), false
	}
	if why.Load() >= 0 {
		// Unblocked just as the reply came: the reply wins.
		c.dropUpstream(up)
	}
	return relayed(rep), false
}

// leaderCheckEvery is how often a forwarded blocking read checks that its
// shard is still led by the node holding it.
const leaderCheckEvery = 250 * time.Millisecond

// blockFailover is the watcher's result when the shard's leadership moved
// away from the node holding a forwarded blocking read (the read ends with
// brokenReply's failover error).
const blockFailover BlockResult = 100

// blockingShard is the shard a forwarded blocking request waits on: WAIT's
// last write's, or XREAD/XREADGROUP's keys' (-1 if unknown).
func (s *Server) blockingShard(c *Client, args [][]byte) int {
	if isOpt(args[0], "WAIT") {
		if c.lastWr.ok {
			return c.lastWr.shard
		}
		return -1
	}
	if keys := xreadKeys(args); len(keys) > 0 {
		return s.node.ShardOfKey(string(keys[0]))
	}
	return -1
}

// forwardRouted forwards a request routed to another node, retrying a read
// once (re-routed: the leader may have moved) when the upstream broke.
func (s *Server) forwardRouted(c *Client, cmd *Command, args [][]byte, rt route) Reply {
	kind := forwardKind(cmd, args)
	addr := rt.addr
	r, retry := s.forward(c, addr, args, kind)
	// A read whose upstream broke, or any request the leader refused
	// without running it (TRYAGAIN: it no longer leads the shard, or is
	// handing it over), goes again to wherever the shard is led now.
	for attempt := 0; attempt < maxForwardAttempts && (retry || refusedUnrun(r)); attempt++ {
		if !retry {
			time.Sleep(forwardRetryPause) // let the new leader settle
		}
		rt2 := s.routeShard(c, rt.shard, rt.slot)
		retry = false
		switch rt2.kind {
		case routeForward:
			addr = rt2.addr
			r, retry = s.forward(c, addr, args, kind)
		case routeReply:
			r = rt2.reply
		case routeLocal:
			addr = ""
			r = s.runLocal(c, cmd, args)
		}
	}
	if kind != fwdRead && addr != "" {
		c.lastWr = lastWrite{shard: rt.shard, up: addr, ok: true}
	}
	return r
}

// maxForwardAttempts bounds the re-routes of one forwarded request;
// forwardRetryPause is the pause before re-routing a refused one.
const (
	maxForwardAttempts = 3
	forwardRetryPause  = 50 * time.Millisecond
)

// refusedUnrun reports whether a relayed reply is a TRYAGAIN error: the
// leader refused the request before running it (every TRYAGAIN streamd
// sends says so).
func refusedUnrun(r Reply) bool {
	e, ok := r.(ErrorReply)
	return ok && strings.HasPrefix(string(e), "TRYAGAIN ")
}

// forwardKind says what a broken upstream means for this request: a
// blocking read (BLOCK given), a write, or a plain read.
func forwardKind(cmd *Command, args [][]byte) fwdKind {
	switch {
	case cmd.blocking && blockingArgs(args):
		return fwdBlocking
	case cmd.write:
		return fwdWrite
	}
	return fwdRead
}

// blockingArgs reports whether an XREAD/XREADGROUP request has BLOCK.
func blockingArgs(args [][]byte) bool {
	for _, a := range args[1:] {
		if isOpt(a, "STREAMS") {
			return false
		}
		if isOpt(a, "BLOCK") {
			return true
		}
	}
	return false
}

// forwardWAIT sends WAIT to the upstream that took the client's last
// write, when that write was forwarded, and relays its answer; ok is false
// when the last write was not forwarded (WAIT is answered here).
func (s *Server) forwardWAIT(c *Client, args [][]byte) (Reply, bool) {
	if !c.lastWr.ok || c.lastWr.up == "" || c.ups[c.lastWr.up] == nil {
		return nil, false
	}
	r, _ := s.forward(c, c.lastWr.up, args, fwdBlocking)
	if r == errFailoverUnblocked {
		// The leader is gone: nothing can be said about replicas.
		return Int(0), true
	}
	return r, true
}

// forwardTx runs a queued transaction at the node at addr: MULTI, the
// queued requests and EXEC go over the client's upstream (where its WATCH
// went), and EXEC's reply is relayed. A broken upstream is an unknown
// outcome (the EXEC may have run).
func (s *Server) forwardTx(c *Client, addr string, shard int, queue []queuedCmd) Reply {
	up, err := s.upstreamTo(c, addr)
	if err != nil {
		return dialFailedReply(addr, err)
	}
	reqs := make([][][]byte, 0, len(queue)+2)
	reqs = append(reqs, [][]byte{[]byte("MULTI")})
	for _, q := range queue {
		reqs = append(reqs, q.args)
	}
	reqs = append(reqs, [][]byte{[]byte("EXEC")})
	up.conn.SetDeadline(time.Now().Add(s.forwardTimeout()))
	defer up.conn.SetDeadline(time.Time{})
	if err := up.send(c, reqs...); err != nil {
		c.dropUpstream(up)
		return brokenReply(fwdWrite)
	}
	var rep []byte
	for range reqs {
		if rep, err = up.readResult(nil); err != nil {
			c.dropUpstream(up)
			return brokenReply(fwdWrite)
		}
	}
	// SELECT inside the transaction moved the upstream's database, and
	// the client's: run it here too (it only sets the database).
	for _, q := range queue {
		if q.cmd.Name == "select" && q.cmd.Handler != nil {
			q.cmd.Handler(c, q.args)
		}
	}
	up.db = -1
	c.lastWr = lastWrite{shard: shard, up: addr, ok: true}
	return relayed(rep)
}

// forwardSimple sends a request that must reach the upstream at addr if
// the client has one (UNWATCH after a remote WATCH), ignoring the reply.
func (s *Server) forwardSimple(c *Client, addr string, args ...[]byte) {
	up := c.ups[addr]
	if up == nil {
		return
	}
	up.conn.SetDeadline(time.Now().Add(s.forwardTimeout()))
	defer up.conn.SetDeadline(time.Time{})
	if err := up.send(c, args); err != nil {
		c.dropUpstream(up)
		return
	}
	if _, err := up.readResult(nil); err != nil {
		c.dropUpstream(up)
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
	if raw, ok := r.(rawReply); ok {
		c.replyRaw(raw)
		return
	}
	c.reply(r)
}
