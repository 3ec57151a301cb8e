package state

import (
	"math"
	"strconv"

	"streamd/groups"
	"streamd/replication/wire"
	"streamd/streams"
)

// ClaimInfo is what an entry of a CLAIM-form XREADGROUP answer carries
// besides the entry (Redis 8.4): its idle time and its delivery count before
// this delivery, both 0 for a new entry.
type ClaimInfo struct {
	IdleMs        int64
	DeliveryCount int64
}

// readBudget applies Redis 8.10's MAXCOUNT and MAXSIZE to a whole
// XREAD/XREADGROUP answer: at most maxCount entries (0: no cap), and no
// entry once the reply holds maxSize bytes or more (0: no cap; the check
// is made before each entry, never before the first, so an oversized first
// entry is still served). The size counted is each entry's RESP2 encoding,
// a pure function of the entry, so every replica agrees on it.
type readBudget struct {
	maxCount, maxSize int64
	count, size       int64
	claim             bool // the entries have the CLAIM form (two more integers)
}

// allow reports whether e may be served, and counts it if so.
func (b *readBudget) allow(e streams.Entry) bool {
	if b.maxCount == 0 && b.maxSize == 0 {
		return true
	}
	if b.maxCount > 0 && b.count >= b.maxCount {
		return false
	}
	if b.maxSize > 0 && b.count > 0 && b.size >= b.maxSize {
		return false
	}
	b.count++
	b.size += entrySize(e, b.claim)
	return true
}

// exhausted reports whether no further entry can be served.
func (b *readBudget) exhausted() bool {
	return (b.maxCount > 0 && b.count >= b.maxCount) || (b.maxSize > 0 && b.count > 0 && b.size >= b.maxSize)
}

// limit returns the budget's allow function, nil when there is no cap.
func (b *readBudget) limit() func(streams.Entry) bool {
	if b.maxCount == 0 && b.maxSize == 0 {
		return nil
	}
	return b.allow
}

// entrySize is the size of e's RESP2 encoding as an XREAD reply element:
// *2 (or *4) $id *n $field $value ... (and, in the CLAIM form, two
// integers counted as 12 bytes each).
func entrySize(e streams.Entry, claim bool) int64 {
	var idb [41]byte
	n := int64(4) + bulkSize(len(e.ID.Append(idb[:0])))
	n += 1 + int64(len(strconv.Itoa(len(e.Fields)))) + 2
	for _, f := range e.Fields {
		n += bulkSize(len(f))
	}
	if claim {
		n += 24
	}
	return n
}

func bulkSize(n int) int64 {
	return 1 + int64(len(strconv.Itoa(n))) + 2 + int64(n) + 2
}

// xnack mirrors XNACK (Redis 8.8, see groups.Group.Nack): the key and the
// group must exist.
func (ks *Keyspace) xnack(c wire.XNack, nowMs int64) (any, error) {
	o, g, err := ks.claimGroup(c.DB, c.Key, c.Group, nowMs)
	if err != nil {
		return nil, err
	}
	mode := groups.NackFail
	switch c.Mode {
	case wire.NackSilent:
		mode = groups.NackSilent
	case wire.NackFatal:
		mode = groups.NackFatal
	}
	return g.Nack(o.Stream, c.IDs, mode, c.RetryCount, c.Force), nil
}

// xclaimWake answers XClaimWake: the earliest time at which some pending
// entry of the group, in one of the streams, is idle for MinIdleMs; -1 when
// none is pending. A NACKed entry (delivery time 0) makes it MinIdleMs.
func (ks *Keyspace) xclaimWake(q wire.XClaimWake, nowMs int64) (any, error) {
	return ks.earliestWake(q.DB, q.Names, q.Group, nowMs, func(_ *groups.Group, oldest func() (int64, bool)) (int64, bool) {
		t, ok := oldest()
		if !ok {
			return 0, false
		}
		return addSaturating(t, q.MinIdleMs), true
	}), nil
}

// earliestWake is the smallest time due gives over the named streams that
// have the group (-1 when due gives none): due sees the group and can ask
// for the delivery time of its oldest pending entry still in the stream
// (entries deleted from the stream are never claimed or redelivered: they
// would wake the client for nothing); its false skips the stream.
func (ks *Keyspace) earliestWake(db int, names []string, group string, nowMs int64,
	due func(g *groups.Group, oldest func() (int64, bool)) (int64, bool)) int64 {
	wake := int64(-1)
	for _, k := range names {
		o := ks.lookupRead(db, k, nowMs)
		if o == nil {
			continue
		}
		g := o.Groups.Get(group)
		if g == nil {
			continue
		}
		at, ok := due(g, func() (int64, bool) {
			return g.PEL.OldestDelivery(func(id streams.ID) bool {
				_, live := o.Stream.Get(id)
				return live
			})
		})
		if ok && (wake == -1 || at < wake) {
			wake = at
		}
	}
	return wake
}

// addSaturating is a+b, or math.MaxInt64 when that overflows (b >= 0).
func addSaturating(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// readGroupStream serves one stream of XREADGROUP: ">" (with CLAIM while
// claim is on, or redelivering first by the group's visibility timeout,
// issue #15) or the consumer's history, within the budget. It returns the
// stream's part of the answer, whether there is one, and how many entries
// the visibility timeout redelivered.
func readGroupStream(c wire.XReadGroup, rs wire.ReadStream, o *Object, g *groups.Group, claim bool, b *readBudget, nowMs int64) (KeyEntries, bool, int64) {
	if rs.New && claim {
		b.claim = true
		cl := g.ReadClaim(o.Stream, c.Consumer, c.MinIdleMs, c.Count, c.NoAck, nowMs, b.limit())
		if len(cl) == 0 {
			return KeyEntries{}, false, 0
		}
		ke := KeyEntries{Key: rs.Key, Entries: make([]streams.Entry, len(cl)), Claim: make([]ClaimInfo, len(cl))}
		for i, x := range cl {
			ke.Entries[i] = x.Entry
			ke.Claim[i] = ClaimInfo{IdleMs: x.IdleMs, DeliveryCount: x.DeliveryCount}
		}
		return ke, true, 0
	}
	b.claim = false
	if rs.New && g.Config.VisibilityMs > 0 {
		// The ordinary two-element entries: unchanged clients get the
		// redelivery.
		es, redelivered := g.ReadVisible(o.Stream, c.Consumer, c.Count, c.NoAck, nowMs, b.limit())
		return KeyEntries{Key: rs.Key, Entries: es}, es != nil, redelivered
	}
	if rs.New {
		es := g.ReadNewLimit(o.Stream, c.Consumer, c.Count, c.NoAck, nowMs, b.limit())
		return KeyEntries{Key: rs.Key, Entries: es}, es != nil, 0
	}
	es := g.ReadHistoryLimit(o.Stream, c.Consumer, rs.ID, c.Count, nowMs, b.limit())
	return KeyEntries{Key: rs.Key, Entries: es}, true, 0
}
