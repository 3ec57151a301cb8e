package state

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"streamd/internal/glob"
	"streamd/replication/wire"
)

// del answers DEL/UNLINK: keys removed; an expired key counts as absent, and
// a key named twice is removed once.
func (ks *Keyspace) del(c wire.Del, nowMs int64) (any, error) {
	var n int64
	for _, k := range c.Names {
		if ks.lookupWrite(c.DB, k, nowMs) != nil && ks.db(c.DB).remove(k) {
			n++
		}
	}
	return n, nil
}

// rename mirrors Redis 7's renameGenericCommand: a missing source is "ERR no
// such key"; the same name is OK for RENAME and 0 for RENAMENX; RENAMENX
// answers 0 when the destination exists; RENAME drops the destination's
// old value; the source's deadline moves with it.
func (ks *Keyspace) rename(c wire.Rename, nowMs int64) (any, error) {
	o := ks.lookupWrite(c.DB, c.Src, nowMs)
	if o == nil {
		return nil, ErrNoSuchKey
	}
	if c.Src == c.Dst {
		if c.NX {
			return int64(0), nil
		}
		return nil, nil
	}
	d := ks.db(c.DB)
	if ks.lookupWrite(c.DB, c.Dst, nowMs) != nil {
		if c.NX {
			return int64(0), nil
		}
		d.remove(c.Dst)
	}
	deadline, hasDeadline := d.expires[c.Src]
	d.remove(c.Src)
	d.add(c.Dst, o)
	if hasDeadline {
		d.expires[c.Dst] = deadline
	}
	if c.NX {
		return int64(1), nil
	}
	return nil, nil
}

func (ks *Keyspace) flushDB(c wire.FlushDB) (any, error) {
	if c.DB >= 0 && c.DB < NumDatabases {
		ks.dbs[c.DB] = newDatabase()
	}
	return nil, nil
}

func (ks *Keyspace) flushAll() (any, error) {
	for i := range ks.dbs {
		ks.dbs[i] = newDatabase()
	}
	return nil, nil
}

// expire mirrors Redis 7's expireGenericCommand: 0 for a missing key; each
// of the flags NX, XX, GT and LT in c.Cond must pass against the current
// deadline, a key without one counting as an infinite TTL (GT never passes,
// LT does unless XX is also set); a deadline not in the future deletes the
// key and still answers 1.
func (ks *Keyspace) expire(c wire.Expire, nowMs int64) (any, error) {
	if ks.lookupWrite(c.DB, c.Key, nowMs) == nil {
		return int64(0), nil
	}
	d := ks.db(c.DB)
	when := c.Ms
	if c.Relative {
		when += nowMs
	}
	cur, has := d.expires[c.Key]
	// Every condition set must pass (XX LT on a key without a deadline
	// fails on XX), checked in Redis's order.
	if c.Cond.Has(wire.ExpireNX) && has {
		return int64(0), nil
	}
	if c.Cond.Has(wire.ExpireXX) && !has {
		return int64(0), nil
	}
	if c.Cond.Has(wire.ExpireGT) && (!has || when <= cur) {
		return int64(0), nil
	}
	if c.Cond.Has(wire.ExpireLT) && has && when >= cur {
		return int64(0), nil
	}
	if when <= nowMs {
		d.remove(c.Key)
		return int64(1), nil
	}
	d.expires[c.Key] = when
	return int64(1), nil
}

func (ks *Keyspace) persist(c wire.Persist, nowMs int64) (any, error) {
	if ks.lookupWrite(c.DB, c.Key, nowMs) == nil {
		return int64(0), nil
	}
	d := ks.db(c.DB)
	if _, ok := d.expires[c.Key]; !ok {
		return int64(0), nil
	}
	delete(d.expires, c.Key)
	return int64(1), nil
}

// expiredSweep deletes the named keys whose deadline is at or before the
// entry's time; others (kept alive by a later EXPIRE/PERSIST) stay.
func (ks *Keyspace) expiredSweep(c wire.Expired, nowMs int64) (any, error) {
	d := ks.db(c.DB)
	var n int64
	for _, k := range c.Names {
		if d.expired(k, nowMs) && d.remove(k) {
			n++
		}
	}
	ks.counters.Expired.Add(n)
	return n, nil
}

// configSet applies the settings that change what Apply does. The server
// validates names and values first; the errors here are Redis's texts for
// what still slips through.
func (ks *Keyspace) configSet(c wire.ConfigSet) (any, error) {
	name := strings.ToLower(c.Name)
	if ok, err := ks.configSetIDMP(name, c.Value); ok {
		return nil, err
	}
	switch name {
	case "stream-node-max-entries":
		v, err := strconv.ParseInt(c.Value, 10, 64)
		if err != nil || v < 0 {
			return nil, configErr(name, "argument couldn't be parsed into an integer")
		}
		ks.nodeMax = int(v)
	case "stream-node-max-bytes":
		v, ok := parseMemory(c.Value)
		if !ok {
			return nil, configErr(name, "argument must be a memory value")
		}
		ks.nodeMaxBytes = v
	default:
		return nil, fmt.Errorf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", c.Name)
	}
	return nil, nil
}

func configErr(name, why string) error {
	return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, why)
}

// parseMemory parses a memory value as Redis's memtoull: digits with an
// optional unit b, k (1000), kb (1024), m, mb, g, gb, case-insensitive.
func parseMemory(s string) (int64, bool) {
	units := []struct {
		suffix string
		mul    int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}}
	ls := strings.ToLower(s)
	mul := int64(1)
	for _, u := range units {
		if strings.HasSuffix(ls, u.suffix) {
			ls, mul = ls[:len(ls)-len(u.suffix)], u.mul
			break
		}
	}
	v, err := strconv.ParseInt(ls, 10, 64)
	if err != nil || v < 0 || (v > 0 && mul > (1<<63-1)/v) {
		return 0, false
	}
	return v * mul, true
}

func (ks *Keyspace) exists(q wire.Exists, nowMs int64) (any, error) {
	var n int64
	for _, k := range q.Names {
		if ks.lookupCounted(q.DB, k, nowMs) != nil {
			n++
		}
	}
	return n, nil
}

func (ks *Keyspace) typeOf(q wire.Type, nowMs int64) (any, error) {
	if ks.lookupCounted(q.DB, q.Key, nowMs) != nil {
		return "stream", nil
	}
	return "none", nil
}

// keysMatch answers KEYS: live keys matching the glob, sorted (Redis's order
// is its hash table's; sorting keeps ours deterministic).
func (ks *Keyspace) keysMatch(q wire.KeysMatch, nowMs int64) (any, error) {
	d := ks.db(q.DB)
	out := []string{}
	for k := range d.keys {
		if !d.expired(k, nowMs) && glob.Match(q.Pattern, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// liveCounts returns a database's keys and keys with a deadline, not counting
// keys already expired by nowMs.
func (d *database) liveCounts(nowMs int64) (keys, expires int64) {
	var gone int64
	for _, dl := range d.expires {
		if dl <= nowMs {
			gone++
		}
	}
	return int64(len(d.keys)) - gone, int64(len(d.expires)) - gone
}

func (ks *Keyspace) dbSize(q wire.DBSize, nowMs int64) (any, error) {
	n, _ := ks.db(q.DB).liveCounts(nowMs)
	return n, nil
}

// ttl answers TTL/PTTL: -2 no key, -1 no deadline, else the time left, in
// seconds rounded as Redis's ttlGenericCommand ((ms+500)/1000).
func (ks *Keyspace) ttl(q wire.TTL, nowMs int64) (any, error) {
	if ks.lookupCounted(q.DB, q.Key, nowMs) == nil {
		return int64(-2), nil
	}
	dl, ok := ks.db(q.DB).expires[q.Key]
	if !ok {
		return int64(-1), nil
	}
	left := dl - nowMs
	if q.Abs {
		left = dl
	}
	if q.Millis {
		return left, nil
	}
	return (left + 500) / 1000, nil
}

func (ks *Keyspace) keyspaceInfo(nowMs int64) (any, error) {
	out := make([]DBInfo, NumDatabases)
	for i, d := range ks.dbs {
		out[i].Keys, out[i].Expires = d.liveCounts(nowMs)
	}
	return out, nil
}
