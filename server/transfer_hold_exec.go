package server

import (
	"bufio"
	"bytes"
	"time"

	"streamd/replication"
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/server/router"
)

// EXEC during a planned leadership transfer (issue #15), as single writes
// are held (transfer_hold.go): a transaction whose operations the leader
// refused unproposed while handing the shard over was certainly not
// applied, so the node the client sent EXEC to holds it until the shard
// has a new leader, for up to transfer-hold-timeout, and then runs it
// there: proposed again here (the same operations, planned once) when this
// node still or again leads the shard, else MULTI, the queue and EXEC sent
// to the new leader over the client's upstream. A follower that forwarded
// the transaction and got the leader's refusal holds it the same way.
//
// WATCH stays exact. Keys watched here are checked again, under writeMu,
// before the transaction is proposed again here; if this node lost the
// shard's leadership meanwhile (even if it leads it again), or the hold
// ends at another node, which cannot check them, the EXEC aborts (null
// reply), as any EXEC whose WATCH was made under another leader does
// (routeExec). Keys watched at the leader a follower forwarded to were
// unwatched by that leader's refused EXEC: such an EXEC aborts too.
// Commands of the transaction that are not keyspace operations (PING,
// SELECT, …) ran once for the refused attempt and run again wherever the
// transaction finally runs, as they would for a client that retried.

// errTransferHoldTx is EXEC's reply when its transaction was held for
// transfer-hold-timeout without the shard getting a new leader: no command
// of it was applied.
const errTransferHoldTx ErrorReply = "TRYAGAIN leadership transfer in progress; the transaction was not applied"

// execHoldable reports whether c's EXEC may be held during a transfer:
// transfer-hold-timeout is not 0, and c is a client's connection, not
// another node's (whose transactions the forwarding node holds) or one
// pinned to a shard.
func (s *Server) execHoldable(c *Client) bool {
	return s.config().TransferHoldTimeout > 0 && !c.internal && c.onShard < 0
}

// execPropose proposes a transaction's operations (cmd) on shard, after
// checking its WATCHes under writeMu; aborted when a watched key was
// touched or expired (the EXEC answers a null array). With no operations
// it only checks. reads are the keys the transaction reads, for client
// tracking.
func (s *Server) execPropose(c *Client, tx *txState, shard int, cmd wire.Exec, reads []string) (res any, err error, aborted bool) {
	h := s.hub()
	watched := len(tx.watched) > 0
	if watched {
		h.writeMu.Lock()
		if tx.dirty.Load() || s.watchedExpired(tx) {
			h.writeMu.Unlock()
			return nil, nil, true
		}
	} else {
		h.writeMu.RLock()
	}
	unlock := func() {
		if watched {
			h.writeMu.Unlock()
		} else {
			h.writeMu.RUnlock()
		}
	}
	if len(cmd.Ops) == 0 {
		unlock()
		return nil, nil, false
	}
	s.trackRead(c, reads)
	p := s.node.Shard(shard).ProposeAsync(cmd)
	res, err, e := s.settleWrite(cmd, p)
	unlock()
	s.afterWrite(c, shard, p, err, e)
	return res, err, false
}

// holdExec holds a transaction whose proposal (cmd, on shard) was refused
// here during a leadership transfer, then runs it where the shard is led.
// Either r is EXEC's whole reply (run elsewhere, aborted, or the bound
// passed), or res and err are the outcome of proposing cmd here again.
// deadline is the hold's end when the EXEC was already held before
// (forwarded first), else zero: the hold starts now and is counted. db is
// the database the transaction started in.
func (s *Server) holdExec(c *Client, tx *txState, shard int, cmd wire.Exec, queue []queuedCmd, db int,
	deadline time.Time) (r Reply, res any, err error) {
	if deadline.IsZero() {
		s.stats.TransferHold.Held.Add(1)
		deadline = time.Now().Add(s.config().TransferHoldTimeout)
	}
	sh := s.node.Shard(shard)
	for {
		if !s.awaitShardSettled(shard, sh, deadline) {
			s.stats.TransferHold.Failed.Add(1)
			return errTransferHoldTx, nil, nil
		}
		rt := s.router.RouteShard(shard, -1, c.internal)
		if rt.Kind != router.Local {
			if len(tx.watched) > 0 {
				return NullArray{}, nil, nil // a WATCH made here cannot be checked there
			}
			if rt.Kind == router.Refuse {
				return s.execRefusal(rt, shard, queue), nil, nil
			}
			c.db.Store(int32(db)) // a queued SELECT moved it
			return s.forwardTxHeld(c, rt.Addr, shard, queue, false, deadline), nil, nil
		}
		if watchLostLeadership(tx) {
			tx.dirty.Store(true)
		}
		res, err, aborted := s.execPropose(c, tx, shard, cmd, nil)
		if aborted {
			return NullArray{}, nil, nil
		}
		if !c.transferRefused {
			return nil, res, err
		}
		// Refused again (raft still transferring): look again shortly.
		c.transferRefused = false
		time.Sleep(transferPoll)
	}
}

// forwardTxHeld runs a queued transaction at the node at addr (forwardTx)
// and, when that leader refused it because it is handing the shard over,
// holds it as holdExec does and runs it where the shard is then led; when
// addr refused it unrun because it no longer leads the shard (the
// leadership moved after routing), it routes it again, up to
// router.MaxForwardAttempts times as forwardAgain does a single request.
// remoteWatch says the client's WATCHes went to addr: its refused EXEC
// unwatched them, so the transaction aborts. deadline is the hold's end,
// zero until the transaction is first held.
func (s *Server) forwardTxHeld(c *Client, addr string, shard int, queue []queuedCmd, remoteWatch bool,
	deadline time.Time) Reply {
	db := c.DB()
	for attempt := 1; ; attempt++ {
		c.db.Store(int32(db)) // a queued SELECT ran again after the last try
		r := s.forwardTx(c, addr, shard, queue)
		held := s.execHoldable(c) && execTransferRefused(r)
		if !held && (!router.RefusedUnrun(r) || transferRefusal(r) || attempt >= router.MaxForwardAttempts) {
			return r
		}
		c.db.Store(int32(db))
		if remoteWatch {
			return NullArray{}
		}
		if !held {
			time.Sleep(router.ForwardRetryPause) // the view of the leader catches up
		} else if !s.holdForwarded(shard, addr, &deadline) {
			return errTransferHoldTx
		}
		rt := s.router.RouteShard(shard, -1, c.internal)
		switch rt.Kind {
		case router.Refuse:
			return s.execRefusal(rt, shard, queue)
		case router.Local:
			// Led here now: queue the transaction again and run it.
			tx := c.txOf()
			tx.multi, tx.queue, tx.shard, tx.holdEnd = true, queue, shard, deadline
			return cmdEXEC(c, nil)
		}
		addr = rt.Addr
	}
}

// execRefusal is EXEC's reply when its shard cannot be reached from here
// (rt refuses): MOVED to the slot of its first key in cluster mode, else
// the route's refusal.
func (s *Server) execRefusal(rt router.Route, shard int, queue []queuedCmd) Reply {
	if s.router.ClusterMode() && len(queue) > 0 {
		if keys := firstKeys(queue); len(keys) > 0 {
			return s.router.Moved(router.KeySlot(keys[0]), s.leaderAddr(shard))
		}
	}
	return rt.Reply
}

// transferRefusedLine is how a leader's refusal during a transfer appears
// in a relayed EXEC reply (one error per refused command).
var transferRefusedLine = []byte("\r\n-" + replication.ErrTransferInProgress.Error() + "\r\n")

// execTransferRefused reports whether a forwarded EXEC's reply r is the
// leader's refusal during a leadership transfer: an array in which a
// command's reply is that refusal (its operations were proposed as one,
// so none was applied), or that refusal alone.
func execTransferRefused(r Reply) bool {
	raw, ok := r.(router.Raw)
	if !ok {
		return transferRefusal(r)
	}
	if len(raw) == 0 || raw[0] != '*' || !bytes.Contains(raw, transferRefusedLine) {
		return false
	}
	v, err := resp.NewReplyReader(bufio.NewReader(bytes.NewReader(raw))).Read()
	if err != nil {
		return false
	}
	for _, e := range v.Elems {
		if e.Kind == '-' && e.Str == replication.ErrTransferInProgress.Error() {
			return true
		}
	}
	return false
}
