package state

import (
	"fmt"
	"unsafe"

	"streamd/internal/memsize"
	"streamd/replication/wire"
)

// Memory accounting (MEMORY USAGE, MEMORY STATS, INFO used_memory): what
// each key holds, estimated from the sizes of its structures as the Go
// allocator lays them out (internal/memsize), and kept as a running total
// per database, so INFO reads it in O(databases), not by walking the keys.
//
// Every Object carries its bytes (mem) and every database their sum: add
// counts a key in, remove counts it out, and every key a write touches
// (lookupWrite, createStream) is re-measured when Apply ends (settle). A
// stream's nodes are counted incrementally (streams.Stream.Memory), groups
// in O(consumers), so the settling costs O(1) per XADD. The figures are a
// pure function of the state's structures (no clock, no map order), but
// they are not part of the replicated state: buffer capacities differ
// after a snapshot restore, so replicas may differ by a few bytes, and
// nothing they decide depends on it.

// Per-key overheads, beyond the key's string and its Object: the key's
// slot in the database's map (a string header and a pointer in a Go map at
// its mean load) and its item in the SCAN order tree (a hash and a string
// header, in a google/btree filled in hash order); a deadline's slot in
// the expires map.
var (
	KeyOverhead    = memsize.Map(1<<20, 16+8)>>20 + 2*int64(unsafe.Sizeof(scanItem{}))
	ExpireOverhead = memsize.Map(1<<20, 16+8) >> 20
	objectBytes    = memsize.Class(int64(unsafe.Sizeof(Object{})))
)

// dirtyKey is a key a write is changing: settle re-measures it.
type dirtyKey struct {
	d   *database
	key string
	o   *Object
}

// keyMemory is what key holds besides its deadline: its overhead in the
// database's map and SCAN order, its name, its Object (ACKLEVEL is a field
// of it), its stream (counted, see streams.Stream.Memory), its groups (with
// their XGROUP CONFIG: groups.Group.MemoryUsage), its retention state
// (settings, counters, the groups' activity: Retention.memory) and its
// IDMP producers and iids (IDMP.memory). Only the
// goroutine that applies writes may call it.
func keyMemory(key string, o *Object) int64 {
	return KeyOverhead + memsize.String(len(key)) + objectBytes + o.Stream.Memory() + o.Groups.MemoryUsage() + o.Ret.memory() +
		o.IDMP.memory()
}

// retentionBytes is a Retention's allocation.
var retentionBytes = memsize.Class(int64(unsafe.Sizeof(Retention{})))

// memory returns the bytes r holds (0 for the defaults, nil): the struct
// and the map of the groups' activity times. The map's keys share the
// groups' names (noteGroupActivity and the snapshot reader key it by
// Group.Name), so only its slots count. O(1): no work for a stream
// without retention beyond the nil check.
func (r *Retention) memory() int64 {
	if r == nil {
		return 0
	}
	n := retentionBytes
	if r.activityMs != nil {
		n += memsize.Map(int64(len(r.activityMs)), 16+8)
	}
	return n
}

// touch marks o (at key in d) as changed by the write being applied.
func (ks *Keyspace) touch(d *database, key string, o *Object) {
	ks.dirty = append(ks.dirty, dirtyKey{d, key, o})
}

// settle re-measures the keys the write just applied touched and keeps
// their databases' totals; Apply calls it last. A key removed or replaced
// meanwhile was counted out (or in, anew) by remove and add.
func (ks *Keyspace) settle() {
	for i, k := range ks.dirty {
		if k.d.keys[k.key] == k.o {
			m := keyMemory(k.key, k.o)
			k.d.mem += m - k.o.mem
			k.o.mem = m
		}
		ks.dirty[i] = dirtyKey{}
	}
	ks.dirty = ks.dirty[:0]
}

// memoryUsage answers MEMORY USAGE: the key's bytes (as INFO used_memory
// counts them, with its deadline), nil when the key is absent. A key's
// stream is counted from when the key is made or loaded (database.add), so
// the answer is exact and SAMPLES, accepted as Redis's, changes nothing
// here (streams.Stream.MemoryUsage samples Redis's way only a stream not
// counted yet). Groups are walked in full, as Redis does.
func (ks *Keyspace) memoryUsage(q wire.MemoryUsage, nowMs int64) (any, error) {
	o := ks.lookupRead(q.DB, q.Key, nowMs)
	if o == nil {
		return nil, nil
	}
	size := KeyOverhead + memsize.String(len(q.Key)) + objectBytes + o.Stream.MemoryUsage(q.Samples) + o.Groups.MemoryUsage() +
		o.Ret.memory() + o.IDMP.memory()
	if _, ok := ks.db(q.DB).expires[q.Key]; ok {
		size += ExpireOverhead
	}
	return size, nil
}

// DBMemory is a database's share of MEMORY STATS: its keys and deadlines,
// the overhead of holding them (Redis's overhead.hashtable.main and
// overhead.hashtable.expires) and all it holds, that overhead included.
type DBMemory struct {
	Keys, Expires int64
	// Overhead is the bytes of the key map, the SCAN order and the
	// deadline map; Bytes is everything the database holds.
	Overhead, ExpiresOverhead, Bytes int64
}

// Memory returns each database's memory figures from the running totals,
// in O(databases). Keys and Expires count keys not yet swept after their
// deadline (they hold memory until then).
func (ks *Keyspace) Memory() []DBMemory {
	out := make([]DBMemory, NumDatabases)
	for i, d := range ks.dbs {
		k, e := int64(len(d.keys)), int64(len(d.expires))
		out[i] = DBMemory{Keys: k, Expires: e, Overhead: k * KeyOverhead, ExpiresOverhead: e * ExpireOverhead,
			Bytes: d.mem + e*ExpireOverhead}
	}
	return out
}

// CheckMemory measures every key afresh and reports an error when a
// database's running total or a key's count differs: a write path that
// does not touch what it changes.
func (ks *Keyspace) CheckMemory() error {
	for i, d := range ks.dbs {
		var sum int64
		for k, o := range d.keys {
			if err := o.Stream.CheckMemory(); err != nil {
				return fmt.Errorf("db %d key %q: %v", i, k, err)
			}
			m := keyMemory(k, o)
			if m != o.mem {
				return fmt.Errorf("db %d key %q: counted %d bytes, holds %d", i, k, o.mem, m)
			}
			sum += m
		}
		if sum != d.mem {
			return fmt.Errorf("db %d: counted %d bytes, keys hold %d", i, d.mem, sum)
		}
	}
	return nil
}
