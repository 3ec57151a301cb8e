package groups

import (
	"math"

	"streamd/pel"
	"streamd/streams"
)

// ClaimArgs are XCLAIM's arguments after the consumer.
type ClaimArgs struct {
	// MinIdleMs: only entries idle at least this long are claimed (<= 0:
	// any).
	MinIdleMs int64
	// IDs are the entries to claim, in argument order.
	IDs []streams.ID
	// IdleMs (IDLE) sets the new delivery time to nowMs - IdleMs; -1 when
	// not given. It wins over TimeMs when both are set.
	IdleMs int64
	// TimeMs (TIME) sets the new delivery time to this unix time in ms; -1
	// when not given.
	TimeMs int64
	// RetryCount (RETRYCOUNT) sets the delivery count; -1 when not given.
	RetryCount int64
	// Force creates a NACK for an entry that exists but is not pending.
	Force bool
	// JustID does not increment the delivery count (the reply has IDs only).
	JustID bool
	// LastID (LASTID) moves the group's last-delivered-id forward; nil when
	// not given.
	LastID *streams.ID
}

// Claim changes the ownership of pending entries to consumer (XCLAIM), as
// Redis 7.2's xclaimCommand: LASTID first moves the group's
// last-delivered-id forward; the consumer is looked up or created and its
// seen-time set; then, for each ID in order, an entry no longer in the
// stream is dropped from the PEL and skipped, an entry that is not pending
// is skipped (or, with FORCE, made pending), and an entry idle for less than
// MinIdleMs is skipped. A claimed entry gets the new delivery time, a
// delivery count of RETRYCOUNT or one more (unchanged with JUSTID), the new
// owner, and sets the consumer's active-time. Claiming to the owner itself
// refreshes the delivery time: clients use it as a keep-alive.
//
// It returns the claimed entries in order (with JustID, use only their IDs).
func (g *Group) Claim(s *streams.Stream, consumer string, a ClaimArgs, nowMs int64) []streams.Entry {
	if a.LastID != nil && g.LastID.Less(*a.LastID) {
		g.LastID = *a.LastID
	}
	deliveryMs := nowMs
	switch {
	case a.IdleMs != -1:
		deliveryMs = nowMs - a.IdleMs
	case a.TimeMs != -1:
		deliveryMs = a.TimeMs
	}
	// Redis does not fail on a bogus time (client clocks drift): it uses
	// now instead.
	if deliveryMs < 0 || deliveryMs > nowMs {
		deliveryMs = nowMs
	}
	c := g.touchConsumer(consumer, nowMs)
	out := []streams.Entry{}
	for _, id := range a.IDs {
		n, pending := g.PEL.Get(id)
		e, exists := s.Get(id)
		if !exists {
			// Redis 7 clears a NACK whose entry was deleted.
			if pending {
				g.PEL.Remove(id)
			}
			continue
		}
		forced := false
		if !pending {
			if !a.Force {
				continue
			}
			// streamCreateNACK: delivered now, once, to nobody yet; the
			// claim below then counts one more delivery, as Redis does.
			n = pel.NACK{ID: id, DeliveryMs: nowMs, DeliveryCount: 1}
			forced = true
		}
		// An unowned (XNACKed) entry skips the min-idle check (8.8).
		if !forced && a.MinIdleMs > 0 && nowMs-n.DeliveryMs < a.MinIdleMs && !g.PEL.Nacked(id) {
			continue
		}
		// A delivery beyond MAXDELIVERIES dead-letters the entry instead
		// (issue #15); JUSTID delivers nothing, so it never does.
		if !forced && !a.JustID && g.deadLetterDue(n) {
			g.deadLetter(n, e)
			continue
		}
		n.DeliveryMs = deliveryMs
		if a.RetryCount >= 0 {
			n.DeliveryCount = a.RetryCount
		} else if !a.JustID {
			n.DeliveryCount++
		}
		n.Consumer = c.Name
		g.PEL.Put(n)
		if a.JustID {
			e = streams.Entry{ID: id}
		}
		out = append(out, e)
		c.ActiveMs = nowMs
	}
	return out
}

// AutoClaimResult is what AutoClaim returns.
type AutoClaimResult struct {
	// Next is the cursor for the next call: the first pending ID not
	// scanned, or 0-0 when the scan reached the end of the PEL.
	Next streams.ID
	// Claimed are the claimed entries (with JustID, use only their IDs).
	Claimed []streams.Entry
	// Deleted are the scanned IDs no longer in the stream, removed from the
	// PEL.
	Deleted []streams.ID
}

// AutoClaim claims pending entries idle for at least minIdleMs to consumer,
// scanning the PEL from start (XAUTOCLAIM), as Redis 7.2's
// xautoclaimCommand: at most count × 10 PEL entries are scanned, and the
// scan stops once count entries were claimed or found deleted. A claimed
// entry gets delivery time nowMs and one more delivery (not with JustID).
func (g *Group) AutoClaim(s *streams.Stream, consumer string, minIdleMs int64, start streams.ID, count int64, justID bool, nowMs int64) AutoClaimResult {
	c := g.touchConsumer(consumer, nowMs)
	res := AutoClaimResult{Claimed: []streams.Entry{}, Deleted: []streams.ID{}}
	attempts := int64(math.MaxInt64)
	if count < math.MaxInt64/10 {
		attempts = count * 10
	}
	cursor, more := start, true
	for more && attempts > 0 && count > 0 {
		n, ok := g.firstPendingFrom(cursor)
		if !ok {
			return res // scanned to the end: Next stays 0-0
		}
		attempts--
		cursor, more = n.ID.Next()
		e, exists := s.Get(n.ID)
		if !exists {
			g.PEL.Remove(n.ID)
			res.Deleted = append(res.Deleted, n.ID)
			count-- // deleted IDs count toward the reply size limit
			continue
		}
		if minIdleMs > 0 && nowMs-n.DeliveryMs < minIdleMs && !g.PEL.Nacked(n.ID) {
			continue
		}
		if !justID && g.deadLetterDue(n) {
			// Dead-lettered (issue #15): no longer pending, so listed
			// with the deleted IDs, and counted as they are.
			g.deadLetter(n, e)
			res.Deleted = append(res.Deleted, n.ID)
			count--
			continue
		}
		n.DeliveryMs = nowMs
		if !justID {
			n.DeliveryCount++
		}
		n.Consumer = c.Name
		g.PEL.Put(n)
		if justID {
			e = streams.Entry{ID: n.ID}
		}
		res.Claimed = append(res.Claimed, e)
		c.ActiveMs = nowMs
		count--
	}
	if more {
		if n, ok := g.firstPendingFrom(cursor); ok {
			res.Next = n.ID
		}
	}
	return res
}

// firstPendingFrom returns the first pending entry with ID >= from.
func (g *Group) firstPendingFrom(from streams.ID) (n pel.NACK, ok bool) {
	g.PEL.Ascend(from, func(x pel.NACK) bool {
		n, ok = x, true
		return false
	})
	return n, ok
}
