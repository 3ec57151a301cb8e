package state

import (
	"errors"
	"fmt"
	"strconv"

	"streamd/replication/wire"
	"streamd/streams"
)

// Errors of XIDMPRECORD, in Redis's words (xidmprecordCommand).
var (
	// ErrNoSuchMessage: the stream ID is not a live entry of the stream.
	ErrNoSuchMessage = errors.New("ERR No such message in stream")
	// ErrIIDOtherID: the pair is recorded with another stream ID.
	ErrIIDOtherID = errors.New("ERR IID already exists for this producer with a different stream ID")
)

// IDMPDefaults returns stream-idmp-duration and stream-idmp-maxsize (for
// CONFIG GET).
func (ks *Keyspace) IDMPDefaults() (durationS, maxSize int64) {
	return ks.idmpDuration, ks.idmpMaxSize
}

// idmpDuplicate answers an XADD … IDMP whose pair the stream already
// holds (after dropping expired iids), counting the duplicate; ok is false
// when the XADD must append.
func idmpDuplicate(o *Object, c wire.XAdd, nowMs int64) (wire.IDMPDuplicate, bool) {
	if o == nil || o.IDMP == nil {
		return wire.IDMPDuplicate{}, false
	}
	o.IDMP.expire(nowMs)
	if c.IDMP.IsZero() {
		return wire.IDMPDuplicate{}, false
	}
	id, ok := o.IDMP.lookup(c.IDMP.PID, c.IDMP.IID)
	if ok {
		o.IDMP.duplicates++
	}
	return wire.IDMPDuplicate{ID: id}, ok
}

// idmpRecord records an appended XADD's pair (only after the append
// succeeded, so a refused XADD leaves no producer behind).
func idmpRecord(o *Object, c wire.XAdd, id streams.ID, nowMs int64) {
	if c.IDMP.IsZero() {
		return
	}
	if o.IDMP == nil {
		o.IDMP = newIDMP(DefaultIDMPDuration, DefaultIDMPMaxSize)
	}
	o.IDMP.record(c.IDMP.PID, c.IDMP.IID, id, nowMs)
}

// xcfgset mirrors xcfgsetCommand once the server has parsed and checked
// the arguments: a missing key is "ERR no such key"; a setting given with
// a value other than the current one is stored and every producer dropped
// (the counters stay); the same values change nothing.
func (ks *Keyspace) xcfgset(c wire.XCfgSet, nowMs int64) (any, error) {
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil {
		return nil, ErrNoSuchKey
	}
	o.setRetention(c.Ret, nowMs)
	if c.AckLevel != wire.AckDefault {
		o.AckLevel = c.AckLevel
	}
	if c.Duration == 0 && c.MaxSize == 0 {
		// ACKLEVEL or retention options alone leave the IDMP settings as
		// they are (expired iids still go, as on every XCFGSET).
		o.IDMP.expire(nowMs)
		return nil, nil
	}
	d, s := o.IDMP.settings()
	nd, ns := d, s
	if c.Duration != 0 {
		nd = c.Duration
	}
	if c.MaxSize != 0 {
		ns = c.MaxSize
	}
	if nd == d && ns == s {
		o.IDMP.expire(nowMs)
		return nil, nil
	}
	if o.IDMP == nil {
		o.IDMP = newIDMP(nd, ns)
		return nil, nil
	}
	o.IDMP.durationS, o.IDMP.maxSize = nd, ns
	o.IDMP.clear()
	if o.IDMP.isDefault() {
		o.IDMP = nil
	}
	return nil, nil
}

// xidmprecord mirrors xidmprecordCommand after its argument checks: "ERR no
// such key", then the ID must be a live entry, then a pair already
// recorded must name the same ID (OK, nothing changes) or it is an error;
// a new pair is recorded as XADD records one.
func (ks *Keyspace) xidmprecord(c wire.XIDMPRecord, nowMs int64) (any, error) {
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil {
		return nil, ErrNoSuchKey
	}
	o.IDMP.expire(nowMs)
	if _, ok := o.Stream.Get(c.ID); !ok {
		return nil, ErrNoSuchMessage
	}
	if id, ok := o.IDMP.lookup(c.PID, c.IID); ok {
		if id != c.ID {
			return nil, ErrIIDOtherID
		}
		return nil, nil
	}
	idmpRecord(o, wire.XAdd{IDMP: wire.IDMP{PID: c.PID, IID: c.IID}}, c.ID, nowMs)
	return nil, nil
}

// configSetIDMP applies CONFIG SET stream-idmp-duration/maxsize (for
// streams created from now on, as Redis); ok is false for another name.
func (ks *Keyspace) configSetIDMP(name, value string) (ok bool, err error) {
	var lo, hi int64
	var dst *int64
	switch name {
	case "stream-idmp-duration":
		lo, hi, dst = 1, MaxIDMPDuration, &ks.idmpDuration
	case "stream-idmp-maxsize":
		lo, hi, dst = 1, MaxIDMPMaxSize, &ks.idmpMaxSize
	default:
		return false, nil
	}
	v, perr := strconv.ParseInt(value, 10, 64)
	if perr != nil {
		return true, configErr(name, "argument couldn't be parsed into an integer")
	}
	if v < lo || v > hi {
		return true, configErr(name, fmt.Sprintf("argument must be between %d and %d inclusive", lo, hi))
	}
	*dst = v
	return true, nil
}

// idmpExpired applies the sweep: each named stream drops its expired iids
// (and a stream left with nothing but the defaults its state); a missing
// key is skipped.
func (ks *Keyspace) idmpExpired(c wire.IDMPExpired, nowMs int64) (any, error) {
	var n int64
	for _, k := range c.Names {
		o := ks.lookupWrite(c.DB, k, nowMs)
		if o == nil || o.IDMP == nil {
			continue
		}
		before := o.IDMP.iids
		o.IDMP.expire(nowMs)
		n += before - o.IDMP.iids
		if o.IDMP.isDefault() {
			o.IDMP = nil
		}
	}
	return n, nil
}

// IDMPExpiring looks at up to count keys of database db in SCAN order from
// cursor and returns those holding iids expired by nowMs, and the cursor
// to go on from (0 when the database was gone through). It only reads: the
// server's sweep proposes IDMPExpired with the keys, a bounded slice of the
// keyspace per call, as Redis's cron walks its keys incrementally.
func (ks *Keyspace) IDMPExpiring(db int, cursor uint64, count int, nowMs int64) ([]string, uint64) {
	d := ks.db(db)
	var out []string
	var next uint64
	seen := 0
	d.order.AscendGreaterOrEqual(scanItem{hash: cursor}, func(it scanItem) bool {
		if seen >= count {
			next = it.hash
			return false
		}
		seen++
		if o := d.keys[it.key]; o != nil && o.IDMP != nil && o.IDMP.head != nil &&
			o.IDMP.head.atMs <= nowMs-o.IDMP.durationS*1000 {
			out = append(out, it.key)
		}
		return true
	})
	return out, next
}
