package state

import (
	"errors"
	"fmt"

	"streamd/groups"
	"streamd/replication/wire"
)

// Consumer group errors, with Redis 7's exact texts (t_stream.c).
var (
	// ErrXGroupKeyRequired is XGROUP's error for a missing key (every
	// subcommand; CREATE only without MKSTREAM).
	ErrXGroupKeyRequired = errors.New("ERR The XGROUP subcommand requires the key to exist. " +
		"Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
	// ErrBusyGroup is XGROUP CREATE's error for an existing group.
	ErrBusyGroup = errors.New("BUSYGROUP Consumer Group name already exists")
)

// errNoGroupForKey is the NOGROUP of XGROUP SETID/CREATECONSUMER/DELCONSUMER
// and XINFO CONSUMERS.
func errNoGroupForKey(key, group string) error {
	return fmt.Errorf("NOGROUP No such consumer group '%s' for key name '%s'", group, key)
}

// errNoKeyOrGroup is the NOGROUP of XCLAIM, XAUTOCLAIM and XPENDING.
func errNoKeyOrGroup(key, group string) error {
	return fmt.Errorf("NOGROUP No such key '%s' or consumer group '%s'", key, group)
}

// errNoKeyOrGroupRead is the NOGROUP of XREADGROUP.
func errNoKeyOrGroupRead(key, group string) error {
	return fmt.Errorf("NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option", key, group)
}

// applyGroupOp applies the consumer group commands; ok is false for any
// other command.
func (ks *Keyspace) applyGroupOp(cmd wire.Command, nowMs int64) (res any, err error, ok bool) {
	switch c := cmd.(type) {
	case wire.XGroupCreate:
		res, err = ks.xgroupCreate(c, nowMs)
	case wire.XGroupSetID:
		res, err = ks.xgroupSetID(c, nowMs)
	case wire.XGroupDestroy:
		res, err = ks.xgroupDestroy(c, nowMs)
	case wire.XGroupCreateConsumer:
		res, err = ks.xgroupCreateConsumer(c, nowMs)
	case wire.XGroupDelConsumer:
		res, err = ks.xgroupDelConsumer(c, nowMs)
	case wire.XReadGroup:
		res, err = ks.xreadgroup(c, nowMs)
	case wire.XAck:
		res, err = ks.xack(c, nowMs)
	case wire.XClaim:
		res, err = ks.xclaim(c, nowMs)
	case wire.XAutoClaim:
		res, err = ks.xautoclaim(c, nowMs)
	case wire.XNack:
		res, err = ks.xnack(c, nowMs)
	case wire.XGroupConfig:
		res, err = ks.xgroupConfig(c, nowMs)
	default:
		return nil, nil, false
	}
	return res, err, true
}

// queryGroupOp answers XPENDING and XINFO; ok is false for any other query.
func (ks *Keyspace) queryGroupOp(q wire.Query, nowMs int64) (res any, err error, ok bool) {
	switch q := q.(type) {
	case wire.XPending:
		res, err = ks.xpending(q, nowMs)
	case wire.XInfoStream:
		res, err = ks.xinfoStream(q, nowMs)
	case wire.XInfoGroups:
		res, err = ks.xinfoGroups(q, nowMs)
	case wire.XInfoConsumers:
		res, err = ks.xinfoConsumers(q, nowMs)
	case wire.XClaimWake:
		res, err = ks.xclaimWake(q, nowMs)
	case wire.XGroupConfigGet:
		res, err = ks.xgroupConfigGet(q, nowMs)
	case wire.XVisibilityWake:
		res, err = ks.xvisibilityWake(q, nowMs)
	default:
		return nil, nil, false
	}
	return res, err, true
}

// xgroupCreate mirrors XGROUP CREATE: without MKSTREAM the key must exist;
// "$" is the stream's last-generated ID (0-0 for a stream MKSTREAM creates).
// The only later failure, BUSYGROUP, cannot happen on a new stream, so a
// failed CREATE never leaves an empty stream behind, as in Redis.
func (ks *Keyspace) xgroupCreate(c wire.XGroupCreate, nowMs int64) (any, error) {
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil {
		if !c.MkStream {
			return nil, ErrXGroupKeyRequired
		}
		o = ks.createStream(c.DB, c.Key)
	}
	id := c.ID
	if c.Dollar {
		id = o.Stream.LastID()
	}
	if o.Groups.Create(c.Group, id, c.EntriesRead) == nil {
		return nil, ErrBusyGroup
	}
	return nil, nil
}

// groupForXGroup is XGROUP's common lookup: the key must exist, then the
// group (for SETID, CREATECONSUMER and DELCONSUMER).
func (ks *Keyspace) groupForXGroup(db int, key, group string, nowMs int64) (*Object, *groups.Group, error) {
	o := ks.lookupWrite(db, key, nowMs)
	if o == nil {
		return nil, nil, ErrXGroupKeyRequired
	}
	g := o.Groups.Get(group)
	if g == nil {
		return o, nil, errNoGroupForKey(key, group)
	}
	return o, g, nil
}

// xgroupSetID mirrors XGROUP SETID: entries-read becomes ENTRIESREAD, or -1
// (unknown) when not given, as Redis does.
func (ks *Keyspace) xgroupSetID(c wire.XGroupSetID, nowMs int64) (any, error) {
	o, g, err := ks.groupForXGroup(c.DB, c.Key, c.Group, nowMs)
	if err != nil {
		return nil, err
	}
	id := c.ID
	if c.Dollar {
		id = o.Stream.LastID()
	}
	g.SetID(id, c.EntriesRead)
	return nil, nil
}

// xgroupDestroy mirrors XGROUP DESTROY: 1 if the group existed, else 0; a
// missing key is an error.
func (ks *Keyspace) xgroupDestroy(c wire.XGroupDestroy, nowMs int64) (any, error) {
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil {
		return nil, ErrXGroupKeyRequired
	}
	if o.Groups.Destroy(c.Group) {
		return int64(1), nil
	}
	return int64(0), nil
}

// xgroupCreateConsumer mirrors XGROUP CREATECONSUMER: 1 if created, 0 if it
// existed.
func (ks *Keyspace) xgroupCreateConsumer(c wire.XGroupCreateConsumer, nowMs int64) (any, error) {
	_, g, err := ks.groupForXGroup(c.DB, c.Key, c.Group, nowMs)
	if err != nil {
		return nil, err
	}
	if g.CreateConsumer(c.Consumer, nowMs) == nil {
		return int64(0), nil
	}
	return int64(1), nil
}

// xgroupDelConsumer mirrors XGROUP DELCONSUMER: the number of pending
// entries the consumer had (dropped from the group's PEL), 0 if unknown.
func (ks *Keyspace) xgroupDelConsumer(c wire.XGroupDelConsumer, nowMs int64) (any, error) {
	_, g, err := ks.groupForXGroup(c.DB, c.Key, c.Group, nowMs)
	if err != nil {
		return nil, err
	}
	pending, _ := g.DeleteConsumer(c.Consumer)
	return pending, nil
}

// xreadgroup mirrors XREADGROUP: every key and its group are checked before
// anything is read, so a NOGROUP leaves no trace; then each stream is served
// in argument order. ">" streams with nothing new are left out; a history
// read always answers its stream, possibly empty. The answer is nil when no
// stream is in it. CLAIM, MAXCOUNT and MAXSIZE (Redis 8.4, 8.10): see
// readGroupStream and readBudget.
func (ks *Keyspace) xreadgroup(c wire.XReadGroup, nowMs int64) (any, error) {
	type target struct {
		o *Object
		g *groups.Group
	}
	targets := make([]target, len(c.Streams))
	for i, rs := range c.Streams {
		o := ks.lookupWrite(c.DB, rs.Key, nowMs)
		var g *groups.Group
		if o != nil {
			g = o.Groups.Get(c.Group)
		}
		if g == nil {
			return nil, errNoKeyOrGroupRead(rs.Key, c.Group)
		}
		targets[i] = target{o, g}
	}
	var out []KeyEntries
	var d delivery
	b := &readBudget{maxCount: c.MaxCount, maxSize: c.MaxSize}
	claim := c.Claim
	for i, rs := range c.Streams {
		t := targets[i]
		if b.exhausted() {
			// MAXCOUNT / MAXSIZE reached: the remaining streams are
			// skipped (left out of the answer).
			break
		}
		if !rs.New {
			// Redis sets min_idle_time to -1 on a history stream, for
			// the rest of the command.
			claim = false
		}
		ke, ok, redelivered := readGroupStream(c, rs, t.o, t.g, claim, b, nowMs)
		if ok {
			out = append(out, ke)
		}
		d.redelivered += redelivered
		ks.deadLetters(c.DB, rs.Key, t.g, nowMs, &d)
	}
	if out == nil {
		return d.wrap(nil), nil
	}
	return d.wrap(out), nil
}

// xack mirrors XACK: a missing key or group acknowledges nothing (0, not an
// error).
func (ks *Keyspace) xack(c wire.XAck, nowMs int64) (any, error) {
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil {
		return int64(0), nil
	}
	g := o.Groups.Get(c.Group)
	if g == nil {
		return int64(0), nil
	}
	return g.Ack(c.IDs), nil
}

// claimGroup is XCLAIM's and XAUTOCLAIM's lookup.
func (ks *Keyspace) claimGroup(db int, key, group string, nowMs int64) (*Object, *groups.Group, error) {
	o := ks.lookupWrite(db, key, nowMs)
	if o == nil {
		return nil, nil, errNoKeyOrGroup(key, group)
	}
	g := o.Groups.Get(group)
	if g == nil {
		return nil, nil, errNoKeyOrGroup(key, group)
	}
	return o, g, nil
}

// xclaim mirrors XCLAIM (see groups.Group.Claim). The answer lists the
// claimed entries; with JUSTID their Fields are nil and only IDs are replied.
func (ks *Keyspace) xclaim(c wire.XClaim, nowMs int64) (any, error) {
	o, g, err := ks.claimGroup(c.DB, c.Key, c.Group, nowMs)
	if err != nil {
		return nil, err
	}
	res := g.Claim(o.Stream, c.Consumer, groups.ClaimArgs{
		MinIdleMs:  c.MinIdleMs,
		IDs:        c.IDs,
		IdleMs:     c.IdleMs,
		TimeMs:     c.TimeMs,
		RetryCount: c.RetryCount,
		Force:      c.Force,
		JustID:     c.JustID,
		LastID:     c.LastID,
	}, nowMs)
	var d delivery
	ks.deadLetters(c.DB, c.Key, g, nowMs, &d)
	return d.wrap(res), nil
}

// xautoclaim mirrors XAUTOCLAIM (see groups.Group.AutoClaim).
func (ks *Keyspace) xautoclaim(c wire.XAutoClaim, nowMs int64) (any, error) {
	o, g, err := ks.claimGroup(c.DB, c.Key, c.Group, nowMs)
	if err != nil {
		return nil, err
	}
	r := g.AutoClaim(o.Stream, c.Consumer, c.MinIdleMs, c.Start, c.Count, c.JustID, nowMs)
	var d delivery
	ks.deadLetters(c.DB, c.Key, g, nowMs, &d)
	return d.wrap(AutoClaimResult{Next: r.Next, Entries: r.Claimed, Deleted: r.Deleted}), nil
}

// xpending mirrors XPENDING: the summary (count, smallest and greatest
// pending ID, per-consumer counts in consumer name order, consumers with no
// pending entries left out) or the extended form (see
// groups.Group.PendingRange), with idle times clamped at 0 as Redis does.
func (ks *Keyspace) xpending(q wire.XPending, nowMs int64) (any, error) {
	o := ks.lookupCounted(q.DB, q.Key, nowMs)
	if o == nil {
		return nil, errNoKeyOrGroup(q.Key, q.Group)
	}
	g := o.Groups.Get(q.Group)
	if g == nil {
		return nil, errNoKeyOrGroup(q.Key, q.Group)
	}
	if q.Summary {
		s := PendingSummary{Count: int64(g.PEL.Len())}
		if s.Count == 0 {
			return s, nil
		}
		first, _ := g.PEL.First()
		last, _ := g.PEL.Last()
		s.Min, s.Max = first.ID, last.ID
		for _, c := range g.Consumers() {
			if n := g.Pending(c.Name); n > 0 {
				s.Consumers = append(s.Consumers, ConsumerPending{Name: c.Name, Count: n})
			}
		}
		return s, nil
	}
	minIdle := q.IdleMs
	if minIdle < 0 {
		minIdle = 0 // IDLE not given
	}
	nacks := g.PendingRange(q.Start, q.End, q.Count, q.Consumer, minIdle, nowMs)
	out := make([]PendingEntry, len(nacks))
	for i, n := range nacks {
		out[i] = PendingEntry{ID: n.ID, Consumer: n.Consumer, IdleMs: max(nowMs-n.DeliveryMs, 0), Deliveries: n.DeliveryCount}
		if g.PEL.Nacked(n.ID) {
			out[i].IdleMs = -1 // Redis 8.8: a NACKed entry has no idle time
		}
	}
	return out, nil
}
