package state

import (
	"streamd/replication/wire"
	"streamd/streams"
)

// retentionSweep applies wire.RetentionSweep: each named stream is trimmed
// to its retention at the entry's time (a missing key is skipped).
func (ks *Keyspace) retentionSweep(c wire.RetentionSweep, nowMs int64) (any, error) {
	var n int64
	for _, k := range c.Names {
		if o := ks.lookupWrite(c.DB, k, nowMs); o != nil {
			n += applyRetention(o, nowMs, c.Full)
		}
	}
	return n, nil
}

// groupsExpired applies wire.GroupsExpired: each named group whose stream
// still has GROUP-IDLE-EXPIRE and which is still idle that long at the
// entry's time is destroyed with its pending entries, as XGROUP DESTROY,
// and counted in the stream's groups-expired.
func (ks *Keyspace) groupsExpired(c wire.GroupsExpired, nowMs int64) (any, error) {
	var out wire.ExpiredGroups
	for i, k := range c.Names {
		if i >= len(c.Groups) {
			break
		}
		g := c.Groups[i]
		o := ks.lookupWrite(c.DB, k, nowMs)
		if o == nil || o.Ret == nil || o.Ret.idleMs == 0 {
			continue
		}
		grp := o.Groups.Get(g)
		if grp == nil {
			continue
		}
		at, ok := o.Ret.activityMs[g]
		if !ok {
			// Never seen (cannot happen through the log): its idle time
			// starts now.
			o.Ret.activityMs[grp.Name] = nowMs
			continue
		}
		if nowMs-at < o.Ret.idleMs {
			continue
		}
		o.Groups.Destroy(g)
		delete(o.Ret.activityMs, g)
		o.Ret.neededBelow = streams.ID{} // its pending entries are free
		o.Ret.expired++
		out.Keys = append(out.Keys, k)
		out.Groups = append(out.Groups, g)
	}
	return out, nil
}

// RetentionScan is what the leader's retention sweep found in a slice of a
// database (Keyspace.RetentionDue).
type RetentionScan struct {
	// Trim are the streams whose retention would remove entries now.
	Trim []string
	// ExpireKeys[i] is the stream of ExpireGroups[i], a group idle for at
	// least its stream's GROUP-IDLE-EXPIRE.
	ExpireKeys, ExpireGroups []string
	// Held sums retention-held over the slice's streams.
	Held int64
	// Next is the cursor to go on from (0: the database was gone through).
	Next uint64
}

// RetentionDue looks at up to count keys of database db in SCAN order from
// cursor and reports, at nowMs, the streams retention would trim, the
// groups idle past GROUP-IDLE-EXPIRE and the entries held; full walks each
// stream from its head (see retentionCounts; the sweep then proposes a
// full trim), which finds entries freed by a change that did not lower
// neededBelow. It only reads:
// the server's sweep proposes wire.RetentionSweep and wire.GroupsExpired
// with them, whose Apply decides again at the entry's time.
func (ks *Keyspace) RetentionDue(db int, cursor uint64, count int, nowMs int64, full bool) RetentionScan {
	d := ks.db(db)
	var sc RetentionScan
	seen := 0
	d.order.AscendGreaterOrEqual(scanItem{hash: cursor}, func(it scanItem) bool {
		if seen >= count {
			sc.Next = it.hash
			return false
		}
		seen++
		o := d.keys[it.key]
		if o == nil || o.Ret == nil || d.expired(it.key, nowMs) {
			return true
		}
		removable, held := retentionCounts(o, nowMs, full)
		if removable > 0 {
			sc.Trim = append(sc.Trim, it.key)
		}
		sc.Held += held
		for _, g := range idleGroups(o, nowMs) {
			sc.ExpireKeys = append(sc.ExpireKeys, it.key)
			sc.ExpireGroups = append(sc.ExpireGroups, g)
		}
		return true
	})
	return sc
}
