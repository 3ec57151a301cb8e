package state

import (
	"streamd/groups"
	"streamd/pel"
	"streamd/replication/wire"
	"streamd/streams"
)

// xinfoStream answers XINFO STREAM [FULL [COUNT n]] with Redis 7.2's fields
// (xinfoReplyWithStreamInfo); a missing key is "ERR no such key".
func (ks *Keyspace) xinfoStream(q wire.XInfoStream, nowMs int64) (any, error) {
	o := ks.lookupCounted(q.DB, q.Key, nowMs)
	if o == nil {
		return nil, ErrNoSuchKey
	}
	s := o.Stream
	if !q.Full {
		info := StreamInfo{StreamHeader: streamHeader(s), Groups: int64(o.Groups.Len())}
		info.IDMP = o.IDMP.info(nowMs)
		info.Ret = retentionInfo(o, nowMs)
		info.AckLevel = o.AckLevel
		if e, ok := s.First(); ok {
			info.FirstEntry = &e
		}
		if e, ok := s.Last(); ok {
			info.LastEntry = &e
		}
		return info, nil
	}
	// FULL: COUNT bounds the entries and each PEL listed; 0 means all.
	limit := int(q.Count)
	if q.Count <= 0 || int64(limit) != q.Count {
		limit = 0
	}
	full := StreamFullInfo{
		StreamHeader: streamHeader(s),
		// Sized up front: a huge reply's entries are not copied again
		// as the slice grows.
		Entries: make([]streams.Entry, 0, capFor(s.Len(), limit)),
		Groups:  []GroupFull{},
	}
	full.IDMP = o.IDMP.info(nowMs)
	full.Ret = retentionInfo(o, nowMs)
	full.AckLevel = o.AckLevel
	s.Ascend(streams.MinID, func(e streams.Entry) bool {
		full.Entries = append(full.Entries, e)
		return limit == 0 || len(full.Entries) < limit
	})
	for _, g := range o.Groups.All() {
		full.Groups = append(full.Groups, groupFull(s, g, limit))
	}
	return full, nil
}

// streamHeader reads the fields both XINFO STREAM forms start with.
func streamHeader(s *streams.Stream) StreamHeader {
	return StreamHeader{
		Length:               s.Len(),
		RadixTreeKeys:        s.NodeCount(),
		RadixTreeNodes:       radixTreeNodes(s),
		LastGeneratedID:      s.LastID(),
		MaxDeletedEntryID:    s.MaxDeletedID(),
		EntriesAdded:         s.EntriesAdded(),
		RecordedFirstEntryID: s.FirstID(),
	}
}

// groupFull is one group of XINFO STREAM FULL: its PEL and each consumer's,
// up to limit rows each (0 = all).
func groupFull(s *streams.Stream, g *groups.Group, limit int) GroupFull {
	read, lag := entriesReadAndLag(s, g)
	gf := GroupFull{
		Name:            g.Name,
		LastDeliveredID: g.LastID,
		EntriesRead:     read,
		Lag:             lag,
		PelCount:        int64(g.PEL.Len()),
		NackedCount:     int64(g.PEL.NackedLen()),
		Pending:         make([]PendingFull, 0, capFor(int64(g.PEL.Len()), limit)),
		Consumers:       []ConsumerFull{},
	}
	// Walked in place (no intermediate []NACK): a FULL reply of a long
	// PEL holds one copy of its rows.
	g.PEL.Ascend(streams.MinID, func(n pel.NACK) bool {
		gf.Pending = append(gf.Pending, PendingFull{
			ID: n.ID, Consumer: n.Consumer, DeliveryTimeMs: n.DeliveryMs, DeliveryCount: n.DeliveryCount,
		})
		return limit == 0 || len(gf.Pending) < limit
	})
	for _, c := range g.Consumers() {
		cf := ConsumerFull{
			Name:         c.Name,
			SeenTimeMs:   c.SeenMs,
			ActiveTimeMs: c.ActiveMs,
			PelCount:     g.Pending(c.Name),
		}
		cf.Pending = make([]ConsumerPendingFull, 0, capFor(cf.PelCount, limit))
		g.PEL.AscendConsumer(c.Name, streams.MinID, func(n pel.NACK) bool {
			cf.Pending = append(cf.Pending, consumerPendingFull(n))
			return limit == 0 || len(cf.Pending) < limit
		})
		gf.Consumers = append(gf.Consumers, cf)
	}
	return gf
}

// capFor is the capacity for up to limit (0: all) of n rows.
func capFor(n int64, limit int) int {
	if limit > 0 && int64(limit) < n {
		return limit
	}
	return int(n)
}

func consumerPendingFull(n pel.NACK) ConsumerPendingFull {
	return ConsumerPendingFull{ID: n.ID, DeliveryTimeMs: n.DeliveryMs, DeliveryCount: n.DeliveryCount}
}

// entriesReadAndLag is a group's entries-read and lag for XINFO, nil where
// Redis replies null.
func entriesReadAndLag(s *streams.Stream, g *groups.Group) (read, lag *int64) {
	if g.EntriesRead != groups.EntriesReadInvalid {
		v := g.EntriesRead
		read = &v
	}
	if v, ok := g.Lag(s); ok {
		lag = &v
	}
	return read, lag
}

// xinfoGroups answers XINFO GROUPS: the groups in name order.
func (ks *Keyspace) xinfoGroups(q wire.XInfoGroups, nowMs int64) (any, error) {
	o := ks.lookupCounted(q.DB, q.Key, nowMs)
	if o == nil {
		return nil, ErrNoSuchKey
	}
	out := []GroupInfo{}
	for _, g := range o.Groups.All() {
		read, lag := entriesReadAndLag(o.Stream, g)
		out = append(out, GroupInfo{
			Name:            g.Name,
			Consumers:       int64(len(g.Consumers())),
			Pending:         int64(g.PEL.Len()),
			LastDeliveredID: g.LastID,
			EntriesRead:     read,
			Lag:             lag,
			Config:          g.Config,
			DeadLettered:    g.DeadLettered,
		})
	}
	return out, nil
}

// xinfoConsumers answers XINFO CONSUMERS with Redis 7.2's fields: idle is
// the time since the consumer was last seen (clamped at 0), inactive the time
// since it last read or claimed something, -1 if never (not clamped, as in
// Redis).
func (ks *Keyspace) xinfoConsumers(q wire.XInfoConsumers, nowMs int64) (any, error) {
	o := ks.lookupCounted(q.DB, q.Key, nowMs)
	if o == nil {
		return nil, ErrNoSuchKey
	}
	g := o.Groups.Get(q.Group)
	if g == nil {
		return nil, errNoGroupForKey(q.Key, q.Group)
	}
	out := []ConsumerInfo{}
	for _, c := range g.Consumers() {
		inactive := int64(-1)
		if c.ActiveMs != -1 {
			inactive = nowMs - c.ActiveMs
		}
		out = append(out, ConsumerInfo{
			Name:       c.Name,
			Pending:    g.Pending(c.Name),
			IdleMs:     max(nowMs-c.SeenMs, 0),
			InactiveMs: inactive,
		})
	}
	return out, nil
}
