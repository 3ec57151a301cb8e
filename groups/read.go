package groups

import (
	"streamd/pel"
	"streamd/streams"
)

// ReadNew serves XREADGROUP with ">" for one stream, as Redis 7.2's
// xreadCommand and streamReplyWithRange do for a group: the consumer is
// looked up or created and its seen-time set to nowMs (even when nothing is
// delivered); then up to count entries after the group's last-delivered-id
// are delivered (count <= 0: all). Each delivery advances last-delivered-id
// and entries-read and, unless noAck, adds a NACK owned by the consumer with
// delivery count 1 (an ID already pending, possible after XGROUP SETID moved
// backwards, is taken over and reset) and sets the consumer's active-time.
// It returns nil when there was nothing new.
func (g *Group) ReadNew(s *streams.Stream, consumer string, count int64, noAck bool, nowMs int64) []streams.Entry {
	return g.ReadNewLimit(s, consumer, count, noAck, nowMs, nil)
}

// ReadNewLimit is ReadNew that asks allow, when not nil, before delivering
// each entry and stops when it says no (Redis 8.10's MAXCOUNT and MAXSIZE):
// an entry not allowed is neither delivered nor pending, and the group's
// last-delivered-id stays before it.
func (g *Group) ReadNewLimit(s *streams.Stream, consumer string, count int64, noAck bool, nowMs int64, allow func(streams.Entry) bool) []streams.Entry {
	c := g.touchConsumer(consumer, nowMs)
	// Redis serves the read only if the last live entry is past the
	// group's last-delivered-id (streamLastValidID).
	last, ok := s.Last()
	if !ok || !g.LastID.Less(last.ID) {
		return nil
	}
	start, _ := g.LastID.Next() // cannot overflow: last.ID > LastID
	var out []streams.Entry
	s.Ascend(start, func(e streams.Entry) bool {
		if allow != nil && !allow(e) {
			return false
		}
		g.advance(s, e.ID)
		out = append(out, e)
		if !noAck {
			g.PEL.Put(pel.NACK{ID: e.ID, Consumer: c.Name, DeliveryMs: nowMs, DeliveryCount: 1})
			c.ActiveMs = nowMs
		}
		return count <= 0 || int64(len(out)) < count
	})
	return out
}

// ReadHistory serves XREADGROUP with an explicit ID for one stream: the
// consumer's own pending entries with IDs greater than after, up to count
// (count <= 0: all), as streamReplyWithRangeFromConsumerPEL. The consumer is
// looked up or created and its seen-time set. Each entry still in the stream
// counts as delivered again (delivery time nowMs, delivery count + 1); an
// entry deleted from the stream comes back with nil Fields and its NACK is
// left as it was. The result is never nil: Redis replies with the stream and
// an empty array when there is no history.
func (g *Group) ReadHistory(s *streams.Stream, consumer string, after streams.ID, count int64, nowMs int64) []streams.Entry {
	return g.ReadHistoryLimit(s, consumer, after, count, nowMs, nil)
}

// ReadHistoryLimit is ReadHistory that asks allow, when not nil, before
// serving each entry and stops when it says no (MAXCOUNT, MAXSIZE).
func (g *Group) ReadHistoryLimit(s *streams.Stream, consumer string, after streams.ID, count int64, nowMs int64, allow func(streams.Entry) bool) []streams.Entry {
	c := g.touchConsumer(consumer, nowMs)
	out := []streams.Entry{}
	start, ok := after.Next()
	if !ok {
		return out
	}
	var nacks []pel.NACK
	g.PEL.AscendConsumer(c.Name, start, func(n pel.NACK) bool {
		nacks = append(nacks, n)
		return count <= 0 || int64(len(nacks)) < count
	})
	for _, n := range nacks {
		e, ok := s.Get(n.ID)
		if !ok {
			e = streams.Entry{ID: n.ID}
		}
		if allow != nil && !allow(e) {
			break
		}
		if !ok {
			out = append(out, e)
			continue
		}
		out = append(out, e)
		n.DeliveryMs = nowMs
		n.DeliveryCount++
		g.PEL.Put(n)
	}
	return out
}

// Ack removes the given IDs from the PEL (XACK) and returns how many were
// pending. An ID given twice counts once, as in Redis.
func (g *Group) Ack(ids []streams.ID) int64 {
	var n int64
	for _, id := range ids {
		if _, ok := g.PEL.Remove(id); ok {
			n++
		}
	}
	return n
}

// PendingRange answers XPENDING's extended form: up to count pending entries
// with start <= ID <= end, of the named consumer only when consumer is not
// "" (an unknown consumer has none), skipping those idle for less than
// minIdleMs when minIdleMs is not 0, as xpendingCommand.
func (g *Group) PendingRange(start, end streams.ID, count int64, consumer string, minIdleMs, nowMs int64) []pel.NACK {
	out := []pel.NACK{}
	if count <= 0 || end.Less(start) {
		return out
	}
	visit := func(n pel.NACK) bool {
		if end.Less(n.ID) {
			return false
		}
		// A NACKed entry (Redis 8.8) is never left out by IDLE.
		if minIdleMs != 0 && nowMs-n.DeliveryMs < minIdleMs && !g.PEL.Nacked(n.ID) {
			return true
		}
		out = append(out, n)
		return int64(len(out)) < count
	}
	if consumer != "" {
		if g.Consumer(consumer) == nil {
			return out
		}
		g.PEL.AscendConsumer(consumer, start, visit)
	} else {
		g.PEL.Ascend(start, visit)
	}
	return out
}
