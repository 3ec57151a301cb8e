package state

import (
	"errors"
	"strconv"

	"streamd/groups"
	"streamd/replication/wire"
	"streamd/streams"
)

// Per-group broker settings (issue #15): XGROUP CONFIG, dead-lettering by
// the claiming writes, and the visibility timeout's wake-up query.

// ErrDeadLetterSelf is XGROUP CONFIG's error when DEADLETTER names the
// group's own stream.
var ErrDeadLetterSelf = errors.New("ERR DEADLETTER key must be different from the stream key")

// GroupConfigInfo is the answer of XGROUP CONFIG key group without options:
// the group's settings (0 and "" are NONE).
type GroupConfigInfo struct {
	MaxDeliveries int64
	DeadLetterKey string
	VisibilityMs  int64
}

// Dead-letter entry field names, before the original field/value pairs.
var (
	dlqFieldStream     = []byte("stream")
	dlqFieldID         = []byte("id")
	dlqFieldGroup      = []byte("group")
	dlqFieldConsumer   = []byte("consumer")
	dlqFieldDeliveries = []byte("deliveries")
)

// xgroupConfig sets the options given (XGROUP CONFIG): the key and the
// group must exist, as for XGROUP SETID.
func (ks *Keyspace) xgroupConfig(c wire.XGroupConfig, nowMs int64) (any, error) {
	if c.SetDeadLetter && c.DeadLetter == c.Key {
		return nil, ErrDeadLetterSelf
	}
	_, g, err := ks.groupForXGroup(c.DB, c.Key, c.Group, nowMs)
	if err != nil {
		return nil, err
	}
	if c.SetMaxDeliveries {
		g.Config.MaxDeliveries = c.MaxDeliveries
	}
	if c.SetDeadLetter {
		g.Config.DeadLetterKey = c.DeadLetter
	}
	if c.SetVisibility {
		g.Config.VisibilityMs = c.VisibilityMs
	}
	return nil, nil
}

// xgroupConfigGet answers XGROUP CONFIG key group (no options).
func (ks *Keyspace) xgroupConfigGet(q wire.XGroupConfigGet, nowMs int64) (any, error) {
	o := ks.lookupCounted(q.DB, q.Key, nowMs)
	if o == nil {
		return nil, ErrXGroupKeyRequired
	}
	g := o.Groups.Get(q.Group)
	if g == nil {
		return nil, errNoGroupForKey(q.Key, q.Group)
	}
	return GroupConfigInfo{MaxDeliveries: g.Config.MaxDeliveries, DeadLetterKey: g.Config.DeadLetterKey,
		VisibilityMs: g.Config.VisibilityMs}, nil
}

// delivery tallies what the claiming writes of one apply did beyond their
// answer: the dead-letter streams appended to, entries dead-lettered and
// entries redelivered by a visibility timeout.
type delivery struct {
	keys              []string
	dead, redelivered int64
}

// wrap returns res, wrapped in wire.Delivered when d has anything to say.
func (d *delivery) wrap(res any) any {
	if d.dead == 0 && d.redelivered == 0 {
		return res
	}
	return wire.Delivered{Result: res, DeadLetterKeys: d.keys, DeadLettered: d.dead, Redelivered: d.redelivered}
}

// deadLetters appends the entries g just dead-lettered (see
// groups.Group.TakeDeadLetters) to the group's dead-letter stream, created
// if missing, each with the fields stream, id, group, consumer and
// deliveries followed by its own: in the same apply as the claim that took
// them out of the group, so replicas and a replay see both or neither.
// Without a dead-letter stream they are only acknowledged. An entry the
// dead-letter stream cannot take (its last ID is the maximum) is dropped.
func (ks *Keyspace) deadLetters(db int, key string, g *groups.Group, nowMs int64, d *delivery) {
	dl := g.TakeDeadLetters()
	if len(dl) == 0 {
		return
	}
	d.dead += int64(len(dl))
	// Dead-lettered entries are acknowledged: retention may take them now.
	freed := make([]streams.ID, len(dl))
	for i, x := range dl {
		freed[i] = x.Entry.ID
	}
	ks.retentionFreedIDs(db, key, freed)
	dlq := g.Config.DeadLetterKey
	if dlq == "" {
		return
	}
	o := ks.lookupWrite(db, dlq, nowMs)
	if o == nil {
		o = ks.createStream(db, dlq)
	}
	for _, x := range dl {
		id, err := o.Stream.NextID(streams.IDSpec{Auto: true}, nowMs)
		if err != nil {
			continue
		}
		fields := make([][]byte, 0, 10+len(x.Entry.Fields))
		fields = append(fields,
			dlqFieldStream, []byte(key),
			dlqFieldID, x.Entry.ID.Append(nil),
			dlqFieldGroup, []byte(g.Name),
			dlqFieldConsumer, []byte(x.Consumer),
			dlqFieldDeliveries, strconv.AppendInt(nil, x.Deliveries, 10))
		fields = append(fields, x.Entry.Fields...)
		o.Stream.AppendNode(id, fields, ks.nodeMax, ks.nodeMaxBytesInForce())
	}
	for _, k := range d.keys {
		if k == dlq {
			return
		}
	}
	d.keys = append(d.keys, dlq)
}

// xvisibilityWake answers XVisibilityWake: the earliest time at which a
// pending entry of the group becomes due for redelivery, over the streams
// whose group has a visibility timeout (with none pending there: now plus
// the timeout); -1 when no stream's group has one.
func (ks *Keyspace) xvisibilityWake(q wire.XVisibilityWake, nowMs int64) (any, error) {
	return ks.earliestWake(q.DB, q.Names, q.Group, nowMs, func(g *groups.Group, oldest func() (int64, bool)) (int64, bool) {
		if g.Config.VisibilityMs == 0 {
			return 0, false
		}
		from := nowMs
		if t, ok := oldest(); ok {
			from = t
		}
		return addSaturating(from, g.Config.VisibilityMs), true
	}), nil
}
