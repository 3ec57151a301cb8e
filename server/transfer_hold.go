package server

import (
	"strings"
	"time"

	"streamd/replication"
	"streamd/server/router"
)

// Writes during a planned leadership transfer (issue #15). While a shard's
// leader hands its leadership over (RAFT TRANSFER, the leader balancer, a
// graceful shutdown), it refuses writes without proposing them
// (replication.ErrTransferInProgress), so they were certainly not applied.
// Rather than answering TRYAGAIN, the node the client sent the write to
// holds it until the shard has a new leader and sends it there (forwarded,
// or run here if this node became the leader), for up to
// transfer-hold-timeout; past that the write fails with errTransferHold.
// A follower that forwarded a write and got the leader's transfer refusal
// holds it the same way. Requests from other nodes (internal) or pinned
// to a shard are never held: they get the refusal. A transaction is held
// as a whole at EXEC (transfer_hold_exec.go).

// errTransferHold is the reply to a write held for transfer-hold-timeout
// without the shard getting a new leader: it was not applied.
const errTransferHold ErrorReply = "TRYAGAIN leadership transfer in progress; the write was not applied"

// transferRetryEvery is how long a forwarded write held while the leader
// it went to stays the leader waits before asking it again.
const transferRetryEvery = 100 * time.Millisecond

// transferPoll is how often a held write looks at the shard's leadership.
const transferPoll = 5 * time.Millisecond

// holdForTransfer holds a write that was refused here because its shard's
// leadership is being transferred, then routes it again; nil when it is not
// held (transfer-hold-timeout 0, an internal connection, MULTI, a pinned
// shard): the refusal stands.
func (s *Server) holdForTransfer(c *Client, cmd *Command, args [][]byte) Reply {
	timeout := s.config().TransferHoldTimeout
	keys := commandKeys(cmd, args)
	if timeout <= 0 || c.internal || c.inMulti() || c.onShard >= 0 || len(keys) == 0 {
		return nil
	}
	s.stats.TransferHold.Held.Add(1)
	deadline := time.Now().Add(timeout)
	shard := s.node.ShardOfKey(string(keys[0]))
	sh := s.node.Shard(shard)
	for {
		if !s.awaitShardSettled(shard, sh, deadline) {
			s.stats.TransferHold.Failed.Add(1)
			return errTransferHold
		}
		rt := s.router.Route(keys, c.internal)
		switch rt.Kind {
		case router.Forward:
			return s.forwardRouted(c, cmd, args, rt)
		case router.Refuse:
			return rt.Reply
		}
		c.holding = true
		r := s.runLocal(c, cmd, args)
		c.holding = false
		if !c.transferRefused {
			return r
		}
		// Refused again (raft still transferring): look again shortly.
		c.transferRefused = false
		time.Sleep(transferPoll)
	}
}

// transferRefusal reports whether a forwarded write's reply is the leader's
// refusal during a leadership transfer (not applied).
func transferRefusal(r Reply) bool {
	e, ok := r.(ErrorReply)
	return ok && strings.HasPrefix(string(e), replication.ErrTransferInProgress.Error())
}

// holdForwarded waits, for a write the leader at addr refused while handing
// over shard's leadership, until another node (or this one) leads the
// shard, or transferRetryEvery passed (the transfer may have failed: addr
// is asked again). *deadline is set on the write's first hold (counted as held); false
// when it passed first (counted as failed).
func (s *Server) holdForwarded(shard int, addr string, deadline *time.Time) bool {
	if deadline.IsZero() {
		s.stats.TransferHold.Held.Add(1)
		*deadline = time.Now().Add(s.config().TransferHoldTimeout)
	}
	again := time.Now().Add(transferRetryEvery)
	ok := s.awaitTransfer(*deadline, func() bool {
		if s.router.Leads(shard) || !time.Now().Before(again) {
			return true
		}
		a := s.leaderAddr(shard)
		return a != "" && a != addr
	})
	if !ok {
		s.stats.TransferHold.Failed.Add(1)
	}
	return ok
}

// awaitShardSettled waits (awaitTransfer) until shard's transfer is over:
// this node leads it and is not handing it over, or another node is known
// to lead it.
func (s *Server) awaitShardSettled(shard int, sh *replication.Shard, deadline time.Time) bool {
	return s.awaitTransfer(deadline, func() bool {
		if s.router.Leads(shard) {
			return !sh.Transferring()
		}
		return s.leaderAddr(shard) != ""
	})
}

// awaitTransfer polls done every transferPoll until it holds (true), the
// deadline passes or the server closes (false).
func (s *Server) awaitTransfer(deadline time.Time, done func() bool) bool {
	t := time.NewTicker(transferPoll)
	defer t.Stop()
	for !done() {
		if !time.Now().Before(deadline) {
			return false
		}
		select {
		case <-s.done:
			return false
		case <-t.C:
		}
	}
	return true
}
