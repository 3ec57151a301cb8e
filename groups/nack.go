package groups

import (
	"math"

	"streamd/pel"
	"streamd/streams"
)

// NackMode is XNACK's mode: how the delivery count of a NACKed entry
// changes when RETRYCOUNT does not set it.
type NackMode byte

// XNACK's modes (Redis 8.8's nackSetDeliveryCount).
const (
	// NackSilent undoes the delivery: the count drops by one (not below 0).
	NackSilent NackMode = iota
	// NackFail keeps the count: the delivery failed.
	NackFail
	// NackFatal sets the count to the maximum (LLONG_MAX): the entry is
	// poison, and consumers that check counts will dead-letter it.
	NackFatal
)

// Nack gives entries back to the group (XNACK), as Redis 8.8's
// xnackCommand: each ID (duplicates processed and counted each time) that
// is pending, owned or already NACKed, gets its new delivery count (the
// RETRYCOUNT given, when retryCount >= 0, else per mode), loses its owner
// (the consumer stays) and delivery time, and moves to the tail of the NACK
// zone, which XREADGROUP ... CLAIM serves first. With force, an ID not
// pending but still in the stream is made pending first, with count 0. Other
// IDs are skipped. It returns the number of IDs NACKed. Last-delivered-id,
// entries-read and lag do not change.
func (g *Group) Nack(s *streams.Stream, ids []streams.ID, mode NackMode, retryCount int64, force bool) int64 {
	var nacked int64
	for _, id := range ids {
		n, pending := g.PEL.Get(id)
		if !pending {
			if !force {
				continue
			}
			if _, ok := s.Get(id); !ok {
				continue
			}
			n = pel.NACK{ID: id}
		}
		count := n.DeliveryCount
		switch {
		case retryCount >= 0:
			count = retryCount
		case mode == NackSilent:
			count = max(count-1, 0)
		case mode == NackFatal:
			count = math.MaxInt64
		}
		g.PEL.Nack(id, count)
		nacked++
	}
	return nacked
}

// Claimed is an entry served by XREADGROUP ... CLAIM, with the two numbers
// its reply carries: the idle time it had and its delivery count before
// this delivery (both 0 for a new entry).
type Claimed struct {
	streams.Entry
	IdleMs        int64
	DeliveryCount int64
}

// ReadClaim serves XREADGROUP ... CLAIM minIdleMs with ">" for one stream,
// as Redis 8.4's xreadCommand: the consumer is looked up or created and its
// seen-time set; then the claim phase walks the PEL in time order (the NACK
// zone first, then oldest delivery first) and stops at the first entry idle
// for less than minIdleMs; entries whose stream entry is gone are skipped
// (not claimed, not removed, not counted). Each claimed entry moves to the
// consumer with delivery time nowMs and one more delivery (saturating), and
// sets the consumer's active-time; NOACK does not apply to it. Then new
// entries are read as ReadNew does, COUNT (count <= 0: no limit) being
// shared by both phases. allow, when not nil, is asked before each entry
// is served and ends the read when it says no (MAXCOUNT, MAXSIZE). It
// returns nil when nothing was served.
func (g *Group) ReadClaim(s *streams.Stream, consumer string, minIdleMs, count int64, noAck bool, nowMs int64, allow func(streams.Entry) bool) []Claimed {
	out, _ := g.readClaim(s, consumer, minIdleMs, count, noAck, nowMs, allow)
	return out
}

// MaxDeadLettersPerRead bounds how many entries one CLAIM or visibility
// read dead-letters (issue #15): the walk of the PEL stops there, and the
// read serves what it picked before.
const MaxDeadLettersPerRead = 1000

// readClaim is ReadClaim; it also returns how many of the entries were
// claimed (the others are new). An entry due for dead-lettering (issue
// #15) is dead-lettered instead of claimed and does not count against
// count (at most MaxDeadLettersPerRead are).
func (g *Group) readClaim(s *streams.Stream, consumer string, minIdleMs, count int64, noAck bool, nowMs int64, allow func(streams.Entry) bool) ([]Claimed, int) {
	c := g.touchConsumer(consumer, nowMs)
	var picked, dead []pel.NACK
	var entries, deadEntries []streams.Entry
	stopped := false
	g.PEL.AscendByTime(func(n pel.NACK) bool {
		if count > 0 && int64(len(picked)) >= count {
			return false
		}
		if nowMs-n.DeliveryMs < minIdleMs {
			return false
		}
		e, ok := s.Get(n.ID)
		if !ok {
			return true
		}
		if g.deadLetterDue(n) {
			dead = append(dead, n)
			deadEntries = append(deadEntries, e)
			// Bounded, so one read's apply stays short; the next
			// read goes on.
			return len(dead) < MaxDeadLettersPerRead
		}
		if allow != nil && !allow(e) {
			stopped = true
			return false
		}
		picked = append(picked, n)
		entries = append(entries, e)
		return true
	})
	for i, n := range dead {
		g.deadLetter(n, deadEntries[i])
	}
	var out []Claimed
	for i, n := range picked {
		out = append(out, Claimed{Entry: entries[i], IdleMs: nowMs - n.DeliveryMs, DeliveryCount: n.DeliveryCount})
		n.DeliveryMs = nowMs
		if n.DeliveryCount < math.MaxInt64 {
			n.DeliveryCount++
		}
		n.Consumer = c.Name
		g.PEL.Put(n)
		c.ActiveMs = nowMs
	}
	claimed := len(out)
	if stopped || (count > 0 && int64(len(out)) >= count) {
		return out, claimed
	}
	left := int64(0)
	if count > 0 {
		left = count - int64(len(out))
	}
	for _, e := range g.ReadNewLimit(s, consumer, left, noAck, nowMs, allow) {
		out = append(out, Claimed{Entry: e})
	}
	return out, claimed
}
