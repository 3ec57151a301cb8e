package server

import (
	"strings"
	"time"

	"streamd/internal/keywait"
	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/router"
	"streamd/server/xargs"
)

// Blocking makes a plan wait for its keys when its first answer is empty
// (XREAD / XREADGROUP with BLOCK). Inside MULTI/EXEC it is ignored: Redis
// runs a blocking command in a transaction as if its timeout had expired.
type Blocking struct {
	// Timeout is BLOCK's time; 0 waits forever. The deadline is fixed when
	// the command starts and kept across wake-ups.
	Timeout time.Duration
	// Group is set for XREADGROUP: when a retry after a wake fails because
	// the key or the group is gone, the client gets Redis's UNBLOCKED /
	// NOGROUP error instead of the engine's.
	Group bool
	// Prepare, if set, runs after the client subscribed to its keys and
	// before the first try; it may rewrite p.Op (XREAD resolves "$" there,
	// so an entry added in between is seen by the try or wakes the wait).
	// A non-nil Reply ends the command with it.
	Prepare func(s *Server, p *Plan) Reply
	// ClaimWake, for XREADGROUP ... CLAIM, asks when the oldest pending
	// entry of its streams becomes idle enough to claim: the wait also
	// ends then and the command is retried (a new log entry, so the claim
	// uses the leader's time), as Redis checks blocked CLAIM clients in
	// beforeSleep.
	ClaimWake *wire.XClaimWake
	// VisibilityWake, for a plain XREADGROUP ... >, asks when a pending
	// entry becomes due for redelivery by its group's VISIBILITY (issue
	// #15): the wait also ends then and the command is retried, as for
	// ClaimWake.
	VisibilityWake *wire.XVisibilityWake
}

// claimRetryFloor is the shortest wait before a CLAIM retry, so a
// pending entry that stays unclaimable cannot make the wait spin.
const claimRetryFloor = 5 * time.Millisecond

// claimIdlePoll is the shortest wait before a CLAIM retry when nothing is
// pending (a small min-idle-time would otherwise poll the state machine
// in a tight loop).
const claimIdlePoll = 100 * time.Millisecond

// Errors a blocked XREADGROUP gets when its stream or group goes away, as
// Redis's blocked.c sends them.
const (
	errUnblockedNoKey = ErrorReply("UNBLOCKED the stream key no longer exists")
	errUnblockedGroup = ErrorReply("NOGROUP the consumer group this client was blocked on no longer exists")
)

// runBlocking runs a plan that may block: subscribe to its keys, try, and
// while the answer is empty wait for a wake-up, the deadline, CLIENT UNBLOCK
// or the connection closing, retrying after each wake-up.
func (s *Server) runBlocking(c *Client, p *Plan) Reply {
	b := p.Block
	var deadline time.Time
	if b.Timeout > 0 {
		deadline = time.Now().Add(b.Timeout)
	}
	db := p.Op.Database()
	names := p.Op.Keys()
	// Captured before the first try: if this node stops leading the keys'
	// shard from here on, the wait ends with the failover error.
	shard := s.opShard(c, p.Op)
	lost := s.lostChan(shard)
	if lost != nil && !s.router.Leads(shard) {
		// Leadership went between routing and here: nothing applied
		// on this node would wake the wait.
		return router.ErrFailoverUnblocked
	}
	keys := make([]keywait.Key, len(names))
	for i, k := range names {
		keys[i] = keywait.Key{DB: db, Name: k}
	}
	w := s.hub().waits.Subscribe(keys)
	defer w.Unsubscribe()
	if b.Prepare != nil {
		if r := b.Prepare(s, p); r != nil {
			return r
		}
	}
	woken := false
	for {
		res, err := s.apply(c, p.Op)
		if err != nil {
			// The engine's NOGROUP on a retry: the stream or the group
			// went while we waited. Any other error (the shard refused
			// the retry: led elsewhere now, or being handed over) is
			// answered as on a first try, so the read is routed again.
			if woken && b.Group && strings.HasPrefix(err.Error(), "NOGROUP ") {
				return s.groupWaitError(db, names)
			}
			return p.Format(res, err)
		}
		if !emptyRead(res) {
			return p.Format(res, err)
		}
		if woken {
			// Nothing for us this time (another consumer took the
			// entry): let the next waiter on the key try.
			w.Done()
		}
		until, claimAt := deadline, s.claimAt(b.ClaimWake)
		if v := s.visibilityAt(b.VisibilityWake); !v.IsZero() && (claimAt.IsZero() || v.Before(claimAt)) {
			claimAt = v
		}
		if !claimAt.IsZero() && (until.IsZero() || claimAt.Before(until)) {
			until = claimAt
		}
		r := c.waitBlocked(until, w.Wake(), lost)
		if r == BlockTimeout && !until.Equal(deadline) {
			// The claim timer, not a key: nothing to pass on, and for
			// the slow log the wait ended as if woken.
			woken = false
			c.slow.notWoken = false
			continue
		}
		switch r {
		case BlockWoken:
			woken = true
		case BlockUnblockedError:
			return ErrUnblocked
		case BlockFailover:
			return router.ErrFailoverUnblocked
		default: // timeout, CLIENT UNBLOCK TIMEOUT, closed connection
			return NullArray{}
		}
	}
}

// claimAt is when a blocked CLAIM read should retry (zero: only on a
// wake-up or the deadline): when its oldest pending entry becomes idle
// enough or, with nothing pending (another consumer's read adds entries
// without waking anyone), min-idle-time from now, as Redis's beforeSleep
// check; never sooner than claimRetryFloor, nor, with nothing pending,
// than claimIdlePoll.
func (s *Server) claimAt(q *wire.XClaimWake) time.Time {
	if q == nil {
		return time.Time{}
	}
	res, err := s.keyShard(q.Names[0]).Query(*q)
	if err != nil {
		return time.Time{}
	}
	now := time.Now()
	ms, _ := res.(int64)
	if ms < 0 {
		wait := claimIdlePoll
		if q.MinIdleMs > claimIdlePoll.Milliseconds() {
			wait = xargs.DurationMs(q.MinIdleMs)
			if wait == 0 {
				return time.Time{} // beyond any deadline
			}
		}
		return now.Add(wait)
	}
	at := time.UnixMilli(ms)
	if floor := now.Add(claimRetryFloor); at.Before(floor) {
		at = floor
	}
	return at
}

// visibilityAt is when a blocked plain XREADGROUP should retry because of
// its groups' visibility timeouts (zero: no group has one), never sooner
// than claimRetryFloor.
func (s *Server) visibilityAt(q *wire.XVisibilityWake) time.Time {
	if q == nil {
		return time.Time{}
	}
	res, err := s.keyShard(q.Names[0]).Query(*q)
	ms, _ := res.(int64)
	if err != nil || ms < 0 {
		return time.Time{}
	}
	at := time.UnixMilli(ms)
	if floor := time.Now().Add(claimRetryFloor); at.Before(floor) {
		at = floor
	}
	return at
}

// emptyRead reports whether an XREAD/XREADGROUP answer has nothing to send,
// which is when the command blocks (a history read of XREADGROUP answers
// every key, even with no entries, so it never blocks).
func emptyRead(res any) bool {
	if res == nil {
		return true
	}
	kes, ok := res.([]state.KeyEntries)
	return ok && len(kes) == 0
}

// groupWaitError is the error of a blocked XREADGROUP whose retry failed:
// the stream was deleted (DEL, RENAME, FLUSH*, expiry) → UNBLOCKED, else the
// group was destroyed → NOGROUP, as Redis's serveClientsBlockedOnKey tells
// them apart.
func (s *Server) groupWaitError(db int, names []string) Reply {
	uniq := make(map[string]bool, len(names))
	for _, k := range names {
		uniq[k] = true
	}
	for k := range uniq {
		res, err := s.keyShard(k).Query(wire.Exists{DB: db, Names: []string{k}})
		if n, _ := res.(int64); err == nil && n == 0 {
			return errUnblockedNoKey
		}
	}
	return errUnblockedGroup
}
