package state

import (
	"maps"

	"streamd/replication/wire"
	"streamd/streams"
)

// Retention (issue #15): per stream, XCFGSET's MAXLEN n / MAXAGE ms / NONE
// with RETENTION-POLICY ACKED|KEEPREF, and GROUP-IDLE-EXPIRE ms|NONE.
//
// Retention trims exactly (never "~", so every replica and every restore
// trims the same), first MAXAGE then MAXLEN, on every XADD to the stream
// (in its Apply, after its own MAXLEN/MINID clause) and when the leader's
// sweep proposes wire.RetentionSweep. MAXAGE removes the entries whose ID's
// ms is below the entry time minus MAXAGE. With ACKED (the default), an
// entry a group still needs stays (Redis 8.2's ACKED rule: not yet
// delivered to some group, or pending in some group); with KEEPREF it goes
// like any trimmed entry, its PEL references left dangling.
//
// GROUP-IDLE-EXPIRE: while it is set, each group's last activity (the
// entry time of the last XREADGROUP, XCLAIM, XAUTOCLAIM, XACK, XACKDEL or
// XNACK naming it; of its XGROUP CREATE; of the XCFGSET that turned the
// setting on, for the groups that existed then; of the RESTORE that made
// the stream) is replicated state. The
// leader's sweep proposes wire.GroupsExpired for groups idle for at least
// that long; its Apply checks again with its own time and destroys them as
// XGROUP DESTROY does.

// Retention is a stream's retention and group-expiry settings, its count
// of expired groups, and its groups' last activity. A nil *Retention is
// the defaults: no retention, ACKED, no group expiry.
type Retention struct {
	maxLen     int64 // -1: no MAXLEN
	maxAgeMs   int64 // 0: no MAXAGE
	keepRef    bool  // RETENTION-POLICY KEEPREF
	idleMs     int64 // GROUP-IDLE-EXPIRE; 0: none
	expired    int64 // groups-expired
	activityMs map[string]int64
	// neededBelow: every live entry below it was pending in some group
	// when an ACKED retention trim last asked (zero: nothing known). An
	// XADD's retention trim starts there, so entries held at the head of
	// the stream are not walked on every XADD; XACK/XACKDEL lower it, the
	// other group changes that can free an entry reset it, and the sweep's
	// trim starts from the head (a change missed here only delays a trim
	// to the sweep). It is replicated state (in the snapshot), since what
	// an XADD trims depends on it.
	neededBelow streams.ID
}

// newRetention returns the default settings.
func newRetention() *Retention { return &Retention{maxLen: -1} }

// isDefault reports whether r holds nothing a nil state would not.
func (r *Retention) isDefault() bool {
	return r == nil || (r.maxLen < 0 && r.maxAgeMs == 0 && !r.keepRef && r.idleMs == 0 && r.expired == 0)
}

// trims reports whether r has a MAXLEN or a MAXAGE.
func (r *Retention) trims() bool { return r != nil && (r.maxLen >= 0 || r.maxAgeMs > 0) }

// clone returns a deep copy of r (nil for nil).
func (r *Retention) clone() *Retention {
	if r == nil {
		return nil
	}
	c := *r
	c.activityMs = maps.Clone(r.activityMs)
	return &c
}

// set applies XCFGSET's retention options at nowMs. Turning
// GROUP-IDLE-EXPIRE on starts every existing group's idle time now;
// turning it off forgets the activity times.
func (o *Object) setRetention(s wire.RetentionSet, nowMs int64) {
	if s.IsZero() {
		return
	}
	r := o.Ret
	if r == nil {
		r = newRetention()
	}
	r.neededBelow = streams.ID{}
	if s.SetMaxLen {
		r.maxLen = s.MaxLen
	}
	if s.SetMaxAge {
		r.maxAgeMs = s.MaxAgeMs
	}
	if s.SetPolicy {
		r.keepRef = s.Policy == wire.PolicyKeepRef
	}
	if s.SetIdleExpire {
		switch {
		case s.IdleExpireMs == 0:
			r.activityMs = nil
		case r.idleMs == 0:
			r.activityMs = make(map[string]int64, o.Groups.Len())
			for _, g := range o.Groups.All() {
				r.activityMs[g.Name] = nowMs
			}
		}
		r.idleMs = s.IdleExpireMs
	}
	if r.isDefault() {
		r = nil
	}
	o.Ret = r
}

// restartGroupActivity starts the idle time of every group of o at nowMs
// when GROUP-IDLE-EXPIRE is set. RESTORE calls it: the payload carries the
// activity times of the server it was dumped on, but it may be restored
// long after the DUMP or on a server whose clock differs, and a group
// whose consumers have had no chance to come back must not be expired for
// that; so each gets a whole GROUP-IDLE-EXPIRE from the RESTORE, as when
// the setting is turned on.
func (o *Object) restartGroupActivity(nowMs int64) {
	r := o.Ret
	if r == nil || r.idleMs == 0 {
		return
	}
	for _, g := range o.Groups.All() {
		r.activityMs[g.Name] = nowMs
	}
}

// cutoff returns the ID below which MAXAGE removes entries at nowMs; ok is
// false without MAXAGE or when nothing can be that old.
func (r *Retention) cutoff(nowMs int64) (streams.ID, bool) {
	if r.maxAgeMs <= 0 || nowMs-r.maxAgeMs <= 0 {
		return streams.ID{}, false
	}
	return streams.ID{Ms: uint64(nowMs - r.maxAgeMs)}, true
}

// applyRetention trims o's stream to its retention at nowMs and returns the
// entries removed; full (the sweep) starts the ACKED trim from the head
// rather than from neededBelow.
func applyRetention(o *Object, nowMs int64, full bool) int64 {
	r := o.Ret
	if !r.trims() || o.Stream.Len() == 0 {
		return 0
	}
	if full {
		r.neededBelow = streams.ID{}
	}
	var asked streams.ID
	keep := func(a *streams.TrimArgs) {
		if r.keepRef {
			return
		}
		setRefKeep(a, wire.RefAcked, o)
		a.From = r.neededBelow
		needed := a.Keep
		a.Keep = func(id streams.ID) bool {
			// Asked in ID order: each entry asked stays because it is
			// needed or goes.
			if asked.Less(id) {
				asked = id
			}
			return needed(id)
		}
	}
	var removed int64
	if min, ok := r.cutoff(nowMs); ok && o.Stream.FirstID().Less(min) {
		a := streams.TrimArgs{Strategy: streams.TrimMinID, MinID: min}
		keep(&a)
		removed += o.Stream.Trim(a)
	}
	if r.maxLen >= 0 && o.Stream.Len() > r.maxLen {
		a := streams.TrimArgs{Strategy: streams.TrimMaxLen, MaxLen: r.maxLen}
		keep(&a)
		removed += o.Stream.Trim(a)
	}
	if next, ok := asked.Next(); ok && r.neededBelow.Less(next) && !asked.IsZero() {
		r.neededBelow = next
	}
	return removed
}

// retentionFreed lowers or resets neededBelow after a write that may have
// freed entries a group needed: XACK and XACKDEL free the IDs they name;
// a group destroyed, a consumer deleted, a group's ID set or an XNACK may
// free any.
func (ks *Keyspace) retentionFreed(cmd wire.Command) {
	var db int
	var key string
	var ids []streams.ID
	switch c := cmd.(type) {
	case wire.XAck:
		db, key, ids = c.DB, c.Key, c.IDs
	case wire.XAckDel:
		db, key, ids = c.DB, c.Key, c.IDs
	case wire.XGroupDestroy:
		db, key = c.DB, c.Key
	case wire.XGroupDelConsumer:
		db, key = c.DB, c.Key
	case wire.XGroupSetID:
		db, key = c.DB, c.Key
	case wire.XNack:
		db, key = c.DB, c.Key
	default:
		return
	}
	ks.retentionFreedIDs(db, key, ids)
}

// retentionFreedIDs lowers the stream's neededBelow to the smallest of ids
// (entries acknowledged, and so perhaps no longer needed), or resets it when
// ids is nil (any entry may be free now).
func (ks *Keyspace) retentionFreedIDs(db int, key string, ids []streams.ID) {
	o := ks.db(db).keys[key]
	if o == nil || o.Ret == nil || o.Ret.neededBelow.IsZero() {
		return
	}
	r := o.Ret
	if ids == nil {
		r.neededBelow = streams.ID{}
		return
	}
	for _, id := range ids {
		if id.Less(r.neededBelow) {
			r.neededBelow = id
		}
	}
}

// retentionCounts returns, at nowMs, how many entries retention would
// remove now (removable) and how many it holds back because a group still
// needs them (held): held is the number of entries the stream would keep
// after its retention trim beyond those it would keep under KEEPREF, so it
// is 0 under KEEPREF, without retention and without groups. The cost is a
// walk over the entries retention would remove or holds (those up to the
// groups' smallest last-delivered-id; later ones are all needed and only
// counted) plus one pass over the stream's nodes for MAXAGE.
//
// Unless full, the walk starts at neededBelow, as an XADD's trim does (the
// entries below it are needed): then it costs only what changed since.
func retentionCounts(o *Object, nowMs int64, full bool) (removable, held int64) {
	r := o.Ret
	s := o.Stream
	if !r.trims() || s.Len() == 0 {
		return 0, 0
	}
	length := s.Len()
	min, hasAge := r.cutoff(nowMs)
	// What KEEPREF leaves: the entries not too old, at most MAXLEN.
	keepRef := length
	if hasAge {
		keepRef -= s.CountBefore(min)
	}
	if r.maxLen >= 0 && keepRef > r.maxLen {
		keepRef = r.maxLen
	}
	if r.keepRef || o.Groups.Len() == 0 {
		return length - keepRef, 0
	}
	// What ACKED leaves: as Trim with Keep, in one pass (every entry too
	// old comes before every entry that is not, IDs being ordered by ms).
	refs := o.Groups.Refs()
	minLast, _ := refs.MinLastID()
	needed := refs.Ascending()
	acked := length
	from := streams.MinID
	if !full {
		from = r.neededBelow
	}
	s.Ascend(from, func(e streams.Entry) bool {
		old := hasAge && e.ID.Less(min)
		if !old && !(r.maxLen >= 0 && acked > r.maxLen) {
			return false
		}
		if minLast.Less(e.ID) {
			return false // no group has been delivered it, nor any later one
		}
		if !needed(e.ID) {
			acked--
		}
		return true
	})
	return length - acked, max(acked-keepRef, 0)
}

// noteGroupActivity records, for streams with GROUP-IDLE-EXPIRE, that the
// group cmd names was active at nowMs (see Retention), and forgets a
// destroyed group. It runs after every applied write that did not fail
// (a refused XGROUP CREATE is no activity).
func (ks *Keyspace) noteGroupActivity(cmd wire.Command, err error, nowMs int64) {
	ks.retentionFreed(cmd)
	if err != nil {
		return
	}
	note := func(db int, key, group string) {
		if o := ks.db(db).keys[key]; o != nil && o.Ret != nil && o.Ret.idleMs > 0 {
			if g := o.Groups.Get(group); g != nil {
				// Keyed by the group's own name, not the command's copy
				// of it: the map holds no string of its own (memory.go).
				o.Ret.activityMs[g.Name] = nowMs
			}
		}
	}
	switch c := cmd.(type) {
	case wire.XReadGroup:
		for _, st := range c.Streams {
			note(c.DB, st.Key, c.Group)
		}
	case wire.XGroupCreate:
		note(c.DB, c.Key, c.Group)
	case wire.XAck:
		note(c.DB, c.Key, c.Group)
	case wire.XAckDel:
		note(c.DB, c.Key, c.Group)
	case wire.XClaim:
		note(c.DB, c.Key, c.Group)
	case wire.XAutoClaim:
		note(c.DB, c.Key, c.Group)
	case wire.XNack:
		note(c.DB, c.Key, c.Group)
	case wire.XGroupDestroy:
		if o := ks.db(c.DB).keys[c.Key]; o != nil && o.Ret != nil && o.Groups.Get(c.Group) == nil {
			delete(o.Ret.activityMs, c.Group)
		}
	}
}

// idleGroups returns the groups of o idle for at least GROUP-IDLE-EXPIRE at
// nowMs, in name order. A group with no activity recorded (which every path
// that creates a group or turns the setting on records) counts as active.
func idleGroups(o *Object, nowMs int64) []string {
	r := o.Ret
	if r == nil || r.idleMs == 0 {
		return nil
	}
	var out []string
	for _, g := range o.Groups.All() {
		if at, ok := r.activityMs[g.Name]; ok && nowMs-at >= r.idleMs {
			out = append(out, g.Name)
		}
	}
	return out
}

// RetentionInfo is XINFO STREAM's retention fields (shown only for a
// stream with a non-default setting or an expired group).
type RetentionInfo struct {
	MaxLen, MaxAgeMs int64 // -1 when not set
	Policy           string
	Held             int64
	GroupIdleExpire  int64 // -1 when not set
	GroupsExpired    int64
}

// retentionInfo returns o's XINFO fields at nowMs, nil for the defaults.
func retentionInfo(o *Object, nowMs int64) *RetentionInfo {
	r := o.Ret
	if r == nil {
		return nil
	}
	i := &RetentionInfo{MaxLen: r.maxLen, MaxAgeMs: -1, Policy: "acked", GroupIdleExpire: -1, GroupsExpired: r.expired}
	if r.maxAgeMs > 0 {
		i.MaxAgeMs = r.maxAgeMs
	}
	if r.keepRef {
		i.Policy = "keepref"
	}
	if r.idleMs > 0 {
		i.GroupIdleExpire = r.idleMs
	}
	_, i.Held = retentionCounts(o, nowMs, false)
	return i
}
