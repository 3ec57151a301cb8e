package server

import (
	"strconv"
	"sync/atomic"
	"time"

	"streamd/server/router"
)

// Forwarding (plain mode) is the router's (server/router: upstreams,
// Forward, ForwardTx, the relayed bytes); what stays here is what needs the
// client: its blocked state while a forwarded blocking read waits, its
// last write (WAIT), its transaction's WATCHes, and running a request here
// when re-routing finds it led here again.

// upClient is a Client as the router's forwarding sees it (router.Client).
type upClient Client

// fwd returns c as a router.Client.
func (c *Client) fwd() *upClient { return (*upClient)(c) }

// Proto is the client's protocol, mirrored on its upstreams.
func (u *upClient) Proto() int { return (*Client)(u).Proto() }

// DB is the client's database, mirrored on its upstreams.
func (u *upClient) DB() int { return (*Client)(u).DB() }

// User is the client's ACL user, named on its upstreams.
func (u *upClient) User() string { return (*Client)(u).userName() }

// Upstreams are the client's upstream connections.
func (u *upClient) Upstreams() *router.Upstreams { return &u.ups }

// UpstreamDropped forgets what died with the upstream to addr: the
// transaction's WATCHes there (the EXEC cannot be checked: it aborts) and
// the last write's upstream (WAIT answers here).
func (u *upClient) UpstreamDropped(addr string) {
	if u.tx != nil && u.tx.remoteWatch == addr {
		u.tx.remoteWatch = ""
		u.tx.dirty.Store(true)
	}
	if u.lastWr.up == addr {
		u.lastWr.up = ""
	}
}

// forward sends one request to the node at addr and returns its reply.
// kind says what a broken connection means; a read is retried once on a
// fresh connection by the caller (see forwardRouted).
func (s *Server) forward(c *Client, addr string, args [][]byte, kind router.FwdKind) (Reply, bool) {
	if kind != router.FwdBlocking {
		return s.cluster.Forward(c.fwd(), addr, args, kind)
	}
	up, err := s.cluster.Upstream(c.fwd(), addr)
	if err != nil {
		return router.DialFailedReply(addr, err), false
	}
	return s.forwardBlocking(c, up, args)
}

// forwardBlocking relays a blocking read: the client counts as blocked
// while the leader holds it, and its close, CLIENT UNBLOCK or the server's
// shutdown closes the upstream (the leader then drops the waiter).
// The leader's move away from that node (a failover while it is cut off
// or paused) also ends the wait, with the failover error.
func (s *Server) forwardBlocking(c *Client, up *router.Upstream, args [][]byte) (Reply, bool) {
	if err := s.cluster.SendBlocking(c.fwd(), up, args); err != nil {
		return router.BrokenReply(router.FwdBlocking), false
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
				if addr := s.leaderAddr(shard); addr != "" && addr != up.Addr() {
					r = blockFailover
				}
			}
		}
		why.Store(int32(r))
		up.Close()
	}()
	rep, err := up.ReadResult(nil)
	close(stop)
	<-done
	c.leaveBlocked()
	if err != nil {
		router.Drop(c.fwd(), up)
		switch BlockResult(why.Load()) {
		case BlockUnblockedError:
			return ErrUnblocked, false
		case BlockUnblockedTimeout:
			return NullArray{}, false
		case BlockClosed:
			return noReply{}, false
		}
		return router.BrokenReply(router.FwdBlocking), false
	}
	if why.Load() >= 0 {
		// Unblocked just as the reply came: the reply wins.
		router.Drop(c.fwd(), up)
	}
	return router.Relayed(rep), false
}

// leaderCheckEvery is how often a forwarded blocking read checks that its
// shard is still led by the node holding it.
const leaderCheckEvery = 250 * time.Millisecond

// blockFailover is the watcher's result when the shard's leadership moved
// away from the node holding a forwarded blocking read (the read ends with
// the router's failover error).
const blockFailover BlockResult = 100

// blockingShard is the shard a forwarded blocking request waits on: WAIT's
// last write's, or XREAD/XREADGROUP's keys' (-1 if unknown).
func (s *Server) blockingShard(c *Client, args [][]byte) int {
	if isOpt(args[0], "WAIT") || isOpt(args[0], waitLastCommand) {
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
func (s *Server) forwardRouted(c *Client, cmd *Command, args [][]byte, rt router.Route) Reply {
	kind := forwardKind(cmd, args)
	r, retry := s.forward(c, rt.Addr, args, kind)
	return s.forwardAgain(c, cmd, args, rt, kind, r, retry, nil)
}

// forwardAgain finishes a request forwarded to rt.Addr whose first answer
// was r (retry: a read whose upstream broke): routed again when it may be,
// and noted as the client's last write unless it is a read. pauseEnd, when
// set, is shared by the requests of one forwarded pipeline (see
// retryPause).
func (s *Server) forwardAgain(c *Client, cmd *Command, args [][]byte, rt router.Route, kind router.FwdKind,
	r Reply, retry bool, pauseEnd *time.Time) Reply {
	addr := rt.Addr
	// A read whose upstream broke, or any request the leader refused
	// without running it (TRYAGAIN: it no longer leads the shard, or is
	// handing it over), goes again to wherever the shard is led now. A
	// leader that cannot be reached at all (its process just died) is
	// waited out once, as an election is: the request then goes to the
	// new leader.
	waited := false
	var holdEnd time.Time // a write held during a leadership transfer (transfer_hold.go)
	hold := kind != router.FwdRead && !c.internal && s.config().TransferHoldTimeout > 0
	for attempt := 0; attempt < router.MaxForwardAttempts && (retry || router.RefusedUnrun(r)); attempt++ {
		var rt2 router.Route
		if !retry && hold && transferRefusal(r) {
			// The leader is handing the shard over: wait for the new
			// one (not counted as an attempt), or fail as not applied.
			if !s.holdForwarded(rt.Shard, addr, &holdEnd) {
				r = errTransferHold
				break
			}
			attempt--
			rt2 = s.router.RouteShard(rt.Shard, rt.Slot, c.internal)
		} else if router.DialFailed(r) {
			if waited {
				break
			}
			waited = true
			var ok bool
			if rt2, ok = s.cluster.RouteAfterDialFailure(rt.Shard, rt.Slot, addr, c.internal); !ok {
				break
			}
		} else {
			if !retry {
				retryPause(attempt, pauseEnd) // let the new leader settle
			}
			rt2 = s.router.RouteShard(rt.Shard, rt.Slot, c.internal)
		}
		retry = false
		switch rt2.Kind {
		case router.Forward:
			addr = rt2.Addr
			r, retry = s.forward(c, addr, args, kind)
		case router.Refuse:
			r = rt2.Reply
		case router.Local:
			addr = ""
			r = s.runLocal(c, cmd, args)
		}
	}
	if kind != router.FwdRead && addr != "" {
		c.lastWr = lastWrite{shard: rt.Shard, up: addr, ok: true}
	}
	return r
}

// retryPause is the pause before re-routing a refused request. Alone
// (shared nil), or refused again after a re-route (attempt > 0), it is
// ForwardRetryPause. The first refusals of a forwarded pipeline's requests
// (which all went to the same former leader) share one: each waits until
// ForwardRetryPause after the first of them, not one pause per request.
func retryPause(attempt int, shared *time.Time) {
	if attempt > 0 || shared == nil {
		time.Sleep(router.ForwardRetryPause)
		return
	}
	if shared.IsZero() {
		*shared = time.Now().Add(router.ForwardRetryPause)
	}
	time.Sleep(time.Until(*shared))
}

// forwardKind says what a broken upstream means for this request: a
// blocking read (BLOCK given), a write, or a plain read.
func forwardKind(cmd *Command, args [][]byte) router.FwdKind {
	switch {
	case cmd.blocking && router.BlockingArgs(args):
		return router.FwdBlocking
	case cmd.write:
		return router.FwdWrite
	}
	return router.FwdRead
}

// forwardWAIT sends WAIT to the upstream that took the client's last
// write, when that write was forwarded, and relays its answer; ok is false
// when the last write was not forwarded (WAIT is answered here).
//
// A write that went on a trunk (a pipelined one) is not the last write of
// the client's own upstream there: WAIT goes as STREAMD.WAITLAST, which
// waits for what the leader had applied when it came, the write included.
func (s *Server) forwardWAIT(c *Client, args [][]byte) (Reply, bool) {
	if !c.lastWr.ok || c.lastWr.up == "" {
		return nil, false
	}
	if c.lastWr.trunk {
		args = [][]byte{[]byte(waitLastCommand), []byte(strconv.Itoa(c.lastWr.shard)), args[1], args[2]}
	} else if !c.ups.Has(c.lastWr.up) {
		return nil, false
	}
	r, _ := s.forward(c, c.lastWr.up, args, router.FwdBlocking)
	if r == router.ErrFailoverUnblocked {
		// The leader is gone: nothing can be said about replicas.
		return Int(0), true
	}
	return r, true
}

// forwardTx runs a queued transaction at the node at addr (the router's
// ForwardTx: MULTI, the queue and EXEC over the client's upstream, where
// its WATCH went) and relays EXEC's reply.
func (s *Server) forwardTx(c *Client, addr string, shard int, queue []queuedCmd) Reply {
	reqs := make([][][]byte, len(queue))
	for i, q := range queue {
		reqs[i] = q.args
	}
	r, ran := s.cluster.ForwardTx(c.fwd(), addr, reqs)
	if !ran {
		return r
	}
	// SELECT inside the transaction moved the upstream's database, and
	// the client's: run it here too (it only sets the database).
	for _, q := range queue {
		if q.cmd.Control == ctlSelect && q.cmd.Handler != nil {
			q.cmd.Handler(c, q.args)
		}
	}
	c.lastWr = lastWrite{shard: shard, up: addr, ok: true}
	return r
}
