package state

import (
	"errors"

	"streamd/replication/wire"
)

// Errors of the keyspace administration ops, Redis's texts.
var (
	// ErrSameObject is COPY's answer for a key copied onto itself.
	ErrSameObject = errors.New("ERR source and destination objects are the same")
	// ErrBusyKey is RESTORE's answer when the key exists and REPLACE is
	// not given.
	ErrBusyKey = errors.New("BUSYKEY Target key name already exists.")
	// ErrDBIndexRange is SWAPDB's and COPY's answer for a database out of
	// range (the server checks first; the state machine checks again).
	ErrDBIndexRange = errors.New("ERR DB index is out of range")
)

// validDB reports whether i names one of the databases.
func validDB(i int) bool { return i >= 0 && i < NumDatabases }

// copyKey mirrors Redis 7's copyCommand: the same key in the same database
// is an error; a missing source answers 0, as does an existing destination
// without REPLACE; else the destination becomes a deep copy of the source
// (stream, consumer groups, consumers, pending entries) with its deadline.
func (ks *Keyspace) copyKey(c wire.Copy, nowMs int64) (any, error) {
	if !validDB(c.DB) || !validDB(c.DstDB) {
		return nil, ErrDBIndexRange
	}
	if c.DB == c.DstDB && c.Src == c.Dst {
		return nil, ErrSameObject
	}
	o := ks.lookupWrite(c.DB, c.Src, nowMs)
	if o == nil {
		return int64(0), nil
	}
	dst := ks.db(c.DstDB)
	if ks.lookupWrite(c.DstDB, c.Dst, nowMs) != nil {
		if !c.Replace {
			return int64(0), nil
		}
		dst.remove(c.Dst)
	}
	dst.add(c.Dst, &Object{Stream: o.Stream.Clone(), Groups: o.Groups.Clone(), IDMP: o.IDMP.clone(), Ret: o.Ret.clone(), AckLevel: o.AckLevel})
	if deadline, ok := ks.db(c.DB).expires[c.Src]; ok {
		dst.expires[c.Dst] = deadline
	}
	return int64(1), nil
}

// restore mirrors Redis 7's restoreCommand once the server has checked the
// arguments and the payload's checksum: BUSYKEY when the key exists
// without REPLACE, "Bad data format" for a payload that does not decode;
// with REPLACE the old value goes; a deadline already past leaves the key
// absent (and answers OK, as Redis). The payload's settings (ACKLEVEL,
// retention, GROUP-IDLE-EXPIRE, each group's XGROUP CONFIG) come with it;
// its groups' idle times start at the RESTORE (restartGroupActivity).
func (ks *Keyspace) restore(c wire.Restore, nowMs int64) (any, error) {
	d := ks.db(c.DB)
	exists := ks.lookupWrite(c.DB, c.Key, nowMs) != nil
	if exists && !c.Replace {
		return nil, ErrBusyKey
	}
	o, err := undumpObject(c.Payload)
	if err != nil {
		return nil, err
	}
	if exists {
		d.remove(c.Key)
	}
	deadline := c.TTLMs
	if deadline != 0 && !c.Abs {
		deadline += nowMs
	}
	if deadline != 0 && deadline <= nowMs {
		return nil, nil
	}
	o.restartGroupActivity(nowMs)
	if o.AckLevel == wire.AckLeader {
		ks.restoredAckLeader = true
	}
	d.add(c.Key, o)
	if deadline != 0 {
		d.expires[c.Key] = deadline
	}
	return nil, nil
}

// swapDB exchanges two databases' contents (SWAPDB).
func (ks *Keyspace) swapDB(c wire.SwapDB) (any, error) {
	if !validDB(c.A) || !validDB(c.B) {
		return nil, ErrDBIndexRange
	}
	ks.dbs[c.A], ks.dbs[c.B] = ks.dbs[c.B], ks.dbs[c.A]
	return nil, nil
}

// dump answers DUMP: the key's payload, nil when absent.
func (ks *Keyspace) dump(q wire.Dump, nowMs int64) (any, error) {
	o := ks.lookupRead(q.DB, q.Key, nowMs)
	if o == nil {
		return nil, nil
	}
	return dumpObject(o), nil
}

// randomKeyWalkMax is the largest database RANDOMKEY picks from uniformly
// (by walking to the seed's position); in a larger one it takes the first
// key at or after the seed's hash, which favours keys after wide gaps in
// the SCAN order.
const randomKeyWalkMax = 1 << 16

// randomKey answers RANDOMKEY: the key at position seed mod the key count
// in SCAN order (or, in a database of more than randomKeyWalkMax keys, the
// first key at or after the seed's hash), the next live one if that one
// has expired, wrapping around once; nil when there is none.
func (ks *Keyspace) randomKey(q wire.RandomKey, nowMs int64) (any, error) {
	d := ks.db(q.DB)
	n := d.order.Len()
	if n == 0 {
		return nil, nil
	}
	start := scanItem{hash: q.Seed}
	if n <= randomKeyWalkMax {
		skip := int(q.Seed % uint64(n))
		d.order.Ascend(func(it scanItem) bool {
			start = it
			skip--
			return skip >= 0
		})
	}
	var found string
	ok := false
	pick := func(it scanItem) bool {
		if d.expired(it.key, nowMs) {
			return true
		}
		found, ok = it.key, true
		return false
	}
	d.order.AscendGreaterOrEqual(start, pick)
	if !ok {
		d.order.AscendLessThan(start, pick)
	}
	if !ok {
		return nil, nil
	}
	return found, nil
}
