package state

import (
	"streamd/replication/wire"
	"streamd/streams"
)

// A stream's ACKLEVEL (XCFGSET key ACKLEVEL QUORUM|LEADER). Apply does not
// depend on it: the proposer reads it (AckTarget) to decide whether an
// XADD is answered once durable in the leader's log or once committed.

// Snapshot record of a key's ack level (tag 16), written after the key's
// IDMP record only when the level was set, so a state that never used
// ACKLEVEL snapshots byte for byte as before.
//
//	acklevel      tagAckLevel | byte level (1 quorum, 2 leader)
const tagAckLevel byte = 16

// ackLevel writes a key's ack level record when set.
func (sw *snapWriter) ackLevel(l wire.AckLevel) {
	if l == wire.AckDefault {
		return
	}
	sw.start(tagAckLevel)
	sw.b = append(sw.b, byte(l))
	sw.end()
}

// readAckLevel reads a key's ack level record, if one follows, into o.
func (sr *snapReader) readAckLevel(key string, o *Object) {
	if !sr.peekTag(tagAckLevel) {
		return
	}
	sr.tag(tagAckLevel, "acklevel")
	l := wire.AckLevel(sr.byte())
	if sr.err == nil && l != wire.AckQuorum && l != wire.AckLeader {
		sr.badf("key %q: ack level %d", key, l)
		return
	}
	o.AckLevel = l
}

// AckTarget is what the proposer needs to know about a stream to assign
// an XADD's ID before the entry is applied (replication's ack tracker).
type AckTarget struct {
	// Exists is false when there is no such key (or it has expired at
	// the time asked).
	Exists bool
	// Level is the stream's ACKLEVEL (wire.AckDefault when not set).
	Level wire.AckLevel
	// LastID is the stream's last generated ID (0-0 when absent).
	LastID streams.ID
	// Volatile is true when the key has an expiry deadline: it may
	// vanish before the entry is applied.
	Volatile bool
}

// AckTarget reports key's ack level, last ID and expiry at nowMs without
// changing anything (the caller holds the state's read lock).
func (ks *Keyspace) AckTarget(db int, key string, nowMs int64) AckTarget {
	o := ks.lookupRead(db, key, nowMs)
	if o == nil {
		return AckTarget{}
	}
	_, volatile := ks.db(db).expires[key]
	return AckTarget{Exists: true, Level: o.AckLevel, LastID: o.Stream.LastID(), Volatile: volatile}
}

// DeadLetters reports whether group of key has a dead-letter stream: a read
// or claim on that group may append to it, a key the command does not name,
// so the proposer's ACKLEVEL LEADER projections cannot be trusted while
// such a command is in flight.
func (ks *Keyspace) DeadLetters(db int, key, group string, nowMs int64) bool {
	o := ks.lookupRead(db, key, nowMs)
	if o == nil {
		return false
	}
	g := o.Groups.Get(group)
	return g != nil && g.Config.DeadLetterKey != ""
}

// AnyAckLeader reports whether some stream has ACKLEVEL LEADER (the
// proposer's ack tracker stays idle until one has, or until
// stream-default-acklevel is leader). O(keys): for a snapshot restore.
func (ks *Keyspace) AnyAckLeader() bool {
	for _, d := range ks.dbs {
		if d == nil {
			continue
		}
		for _, o := range d.keys {
			if o.AckLevel == wire.AckLeader {
				return true
			}
		}
	}
	return false
}

// TakeRestoredAckLeader reports whether a RESTORE applied since the last
// call made a stream with ACKLEVEL LEADER (which SetsAckLeader cannot tell
// from the command: the level is in the payload), and forgets it. The FSM
// calls it after each command, as it calls SetsAckLeader.
func (ks *Keyspace) TakeRestoredAckLeader() bool {
	if !ks.restoredAckLeader {
		return false
	}
	ks.restoredAckLeader = false
	return true
}

// SetsAckLeader reports whether cmd (or a command of an EXEC) is an
// XCFGSET ACKLEVEL LEADER.
func SetsAckLeader(cmd wire.Command) bool {
	switch c := cmd.(type) {
	case wire.XCfgSet:
		return c.AckLevel == wire.AckLeader
	case wire.Exec:
		for _, op := range c.Ops {
			if x, ok := op.(wire.Command); ok && SetsAckLeader(x) {
				return true
			}
		}
	}
	return false
}
