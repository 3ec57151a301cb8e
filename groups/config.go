package groups

import (
	"math"

	"streamd/pel"
	"streamd/streams"
)

// Config is a group's XGROUP CONFIG settings (issue #15). The zero value is
// the default: no delivery limit, no dead-letter stream, no visibility
// timeout.
type Config struct {
	// MaxDeliveries (MAXDELIVERIES n): an entry whose delivery count has
	// reached it is dead-lettered instead of being delivered again; 0: no
	// limit.
	MaxDeliveries int64
	// DeadLetterKey (DEADLETTER key) is the stream dead-lettered entries
	// are appended to; "": none (they are only acknowledged).
	DeadLetterKey string
	// VisibilityMs (VISIBILITY ms): a plain XREADGROUP ... > first
	// redelivers pending entries idle for at least this long; 0: none.
	VisibilityMs int64
}

// IsZero reports whether c is the default configuration.
func (c Config) IsZero() bool { return c == Config{} }

// DeadLetter is an entry a claiming read took out of the group instead of
// delivering it: its stream entry, the consumer that last owned it ("" for
// an XNACKed entry) and its delivery count.
type DeadLetter struct {
	Entry      streams.Entry
	Consumer   string
	Deliveries int64
}

// deadLetterDue reports whether the pending entry n must be dead-lettered
// rather than delivered again: its delivery count has reached
// MaxDeliveries, or it was XNACKed FATAL (count LLONG_MAX) while the group
// has a dead-letter stream.
func (g *Group) deadLetterDue(n pel.NACK) bool {
	c := g.Config
	if c.MaxDeliveries > 0 && n.DeliveryCount >= c.MaxDeliveries {
		return true
	}
	return n.DeliveryCount == math.MaxInt64 && c.DeadLetterKey != ""
}

// deadLetter acknowledges n (its entry e is live) and queues it for the
// caller to append to the dead-letter stream (TakeDeadLetters).
func (g *Group) deadLetter(n pel.NACK, e streams.Entry) {
	g.PEL.Remove(n.ID)
	g.DeadLettered++
	g.deadLetters = append(g.deadLetters, DeadLetter{Entry: e, Consumer: n.Consumer, Deliveries: n.DeliveryCount})
}

// TakeDeadLetters returns the entries the last claiming call (Claim,
// AutoClaim, ReadClaim, ReadVisible) dead-lettered, in the order it met
// them, and forgets them. They are already acknowledged in the group; the
// caller appends them to Config.DeadLetterKey in the same apply.
func (g *Group) TakeDeadLetters() []DeadLetter {
	d := g.deadLetters
	g.deadLetters = nil
	return d
}

// ReadVisible serves a plain XREADGROUP ... > on a group with a visibility
// timeout: pending entries idle for at least VisibilityMs are redelivered
// first (as ReadClaim does, oldest delivery first, the NACK zone before
// them, counting against count), then new entries. It returns the entries
// and how many of them were redelivered; nil when nothing was served.
func (g *Group) ReadVisible(s *streams.Stream, consumer string, count int64, noAck bool, nowMs int64, allow func(streams.Entry) bool) ([]streams.Entry, int64) {
	cl, claimed := g.readClaim(s, consumer, g.Config.VisibilityMs, count, noAck, nowMs, allow)
	if len(cl) == 0 {
		return nil, 0
	}
	out := make([]streams.Entry, len(cl))
	for i, x := range cl {
		out[i] = x.Entry
	}
	return out, int64(claimed)
}
