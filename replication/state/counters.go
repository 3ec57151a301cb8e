package state

import "sync/atomic"

// Counters are INFO stats' keyspace_hits, keyspace_misses and
// expired_keys. They are not part of the state (snapshots leave them out,
// replies never depend on them): the shard keeps one Counters across
// snapshot restores (SetCounters).
//
// A hit or miss is a key looked up by a read as Redis's lookupKeyRead
// counts them: XRANGE, XREVRANGE, XLEN, XREAD (each stream), XPENDING,
// XINFO, EXISTS (each key), TYPE, TTL/PTTL; not the writes (XREADGROUP is
// applied on every replica, so it is not counted). A key is expired when
// a write or the expiry sweep deletes it for its deadline.
type Counters struct {
	Hits, Misses, Expired atomic.Int64
}

// Counters returns the keyspace's counters.
func (ks *Keyspace) Counters() *Counters { return ks.counters }

// SetCounters makes the keyspace count into c (a restored snapshot keeps
// counting where the shard's keyspace was).
func (ks *Keyspace) SetCounters(c *Counters) {
	if c != nil {
		ks.counters = c
	}
}

// lookupCounted is lookupRead for a read Redis counts as a keyspace hit or
// miss.
func (ks *Keyspace) lookupCounted(db int, key string, nowMs int64) *Object {
	o := ks.lookupRead(db, key, nowMs)
	if o != nil {
		ks.counters.Hits.Add(1)
	} else {
		ks.counters.Misses.Add(1)
	}
	return o
}
