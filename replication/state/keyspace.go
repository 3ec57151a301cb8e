// Package state is streamd's deterministic state machine: the Keyspace of 16
// databases of streams, changed only by Apply (wire Commands, in log order,
// with the entry's time) and read by Query. It reads no clock and no
// randomness, and no Go map order reaches a result, so every replica that
// applies the same log holds the same state and gives the same answers.
package state

import (
	"hash/fnv"
	"strings"

	"github.com/google/btree"

	"streamd/groups"
	"streamd/internal/glob"
	"streamd/replication/wire"
	"streamd/streams"
)

// NumDatabases is the number of logical databases (SELECT 0-15).
const NumDatabases = 16

// Object is a key's value: a stream and its consumer groups.
type Object struct {
	Stream *streams.Stream
	Groups groups.Set // consumer groups (zero value = none)
	mem    int64      // bytes counted for the key (memory.go)
	// IDMP is the idempotent-production state (idmp.go); nil = the
	// default settings and nothing recorded.
	IDMP *IDMP
	// Ret is the retention and group-expiry state (retention.go); nil =
	// the defaults.
	Ret *Retention
	// AckLevel is XCFGSET's ACKLEVEL (acklevel.go); wire.AckDefault =
	// never set, the node's stream-default-acklevel applies.
	AckLevel wire.AckLevel
}

// database is one logical database: keys and their expiry deadlines
// (unix ms; a key with no deadline has no entry in expires), plus the keys
// in SCAN order (see scan.go).
type database struct {
	keys    map[string]*Object
	expires map[string]int64
	order   *btree.BTreeG[scanItem]
	mem     int64 // the keys' counted bytes (memory.go)
}

func newDatabase() *database {
	return &database{
		keys:    map[string]*Object{},
		expires: map[string]int64{},
		order:   btree.NewG(32, scanItemLess),
	}
}

// add stores o at key, which must be absent.
func (d *database) add(key string, o *Object) {
	o.mem = keyMemory(key, o)
	d.mem += o.mem
	d.keys[key] = o
	d.order.ReplaceOrInsert(scanItem{hash: scanHash(key), key: key})
}

// Keyspace is the state machine. Apply runs on the one goroutine that
// applies commands (the FSM); Query may run concurrently with other Queries
// but not with Apply (replication.Shard holds the lock).
type Keyspace struct {
	dbs [NumDatabases]*database
	// nodeMax is stream-node-max-entries; nodeMaxBytes is
	// stream-node-max-bytes, which appends honour from engine level 1 on
	// (see level.go).
	nodeMax      int
	nodeMaxBytes int64
	// level is the engine level the log has switched to (level.go).
	level int64
	// lastNow is the greatest time a write was applied at (see clock.go).
	lastNow int64
	// counters are INFO's hit/miss/expired counts (counters.go).
	counters *Counters
	// acl is the ACL users, sorted by name (acl.go).
	acl []wire.ACLUser
	// dirty lists the keys the write being applied touched (memory.go).
	dirty []dirtyKey
	// idmpDuration and idmpMaxSize are stream-idmp-duration and
	// stream-idmp-maxsize: the settings a new stream starts with.
	idmpDuration, idmpMaxSize int64
	// restoredAckLeader is set when a RESTORE made a stream with
	// ACKLEVEL LEADER, until TakeRestoredAckLeader (acklevel.go).
	restoredAckLeader bool
}

// DefaultNodeMaxBytes is Redis's default stream-node-max-bytes.
const DefaultNodeMaxBytes = 4096

// New returns an empty keyspace with Redis's default settings.
func New() *Keyspace {
	ks := &Keyspace{nodeMax: streams.DefaultNodeMaxEntries, nodeMaxBytes: DefaultNodeMaxBytes, counters: &Counters{},
		idmpDuration: DefaultIDMPDuration, idmpMaxSize: DefaultIDMPMaxSize}
	for i := range ks.dbs {
		ks.dbs[i] = newDatabase()
	}
	return ks
}

// NodeMaxEntries returns stream-node-max-entries (for CONFIG GET).
func (ks *Keyspace) NodeMaxEntries() int { return ks.nodeMax }

// NodeMaxBytes returns stream-node-max-bytes (for CONFIG GET).
func (ks *Keyspace) NodeMaxBytes() int64 { return ks.nodeMaxBytes }

// nodeMaxEntries is the stream-node-max-entries in force for appends.
func (ks *Keyspace) nodeMaxEntries() int { return ks.nodeMax }

// db returns database i; an out-of-range index (which the server never
// sends) falls back to 0 rather than panicking the state machine.
func (ks *Keyspace) db(i int) *database {
	if i < 0 || i >= NumDatabases {
		i = 0
	}
	return ks.dbs[i]
}

// expired reports whether key has a deadline at or before nowMs. Redis's
// keyIsExpired uses "now > when" while its EXPIRE deletes at once when
// "when <= now"; we use the latter everywhere, so a deadline is the first
// millisecond at which the key is gone, for every op alike.
func (d *database) expired(key string, nowMs int64) bool {
	dl, ok := d.expires[key]
	return ok && dl <= nowMs
}

// lookupRead returns key's object, or nil if absent or expired. It changes
// nothing: queries never delete (the next write or Expired sweep does).
func (ks *Keyspace) lookupRead(db int, key string, nowMs int64) *Object {
	d := ks.db(db)
	o := d.keys[key]
	if o == nil || d.expired(key, nowMs) {
		return nil
	}
	return o
}

// lookupWrite returns key's object for a write, deleting it first if it has
// expired by nowMs (so the write sees it absent, as Redis's
// lookupKeyWrite does); nil if absent.
func (ks *Keyspace) lookupWrite(db int, key string, nowMs int64) *Object {
	d := ks.db(db)
	o := d.keys[key]
	if o == nil {
		return nil
	}
	if d.expired(key, nowMs) {
		d.remove(key)
		ks.counters.Expired.Add(1)
		return nil
	}
	ks.touch(d, key, o)
	return o
}

// createStream stores a new empty stream at key (which the caller found
// absent) and returns its object.
func (ks *Keyspace) createStream(db int, key string) *Object {
	o := &Object{Stream: streams.New()}
	if ks.idmpDuration != DefaultIDMPDuration || ks.idmpMaxSize != DefaultIDMPMaxSize {
		// Redis gives a stream the settings in force when it is created.
		o.IDMP = newIDMP(ks.idmpDuration, ks.idmpMaxSize)
	}
	d := ks.db(db)
	d.add(key, o)
	ks.touch(d, key, o)
	return o
}

// remove deletes key and its deadline; it reports whether the key existed.
func (d *database) remove(key string) bool {
	o, ok := d.keys[key]
	if !ok {
		return false
	}
	d.mem -= o.mem
	delete(d.keys, key)
	delete(d.expires, key)
	d.order.Delete(scanItem{hash: scanHash(key), key: key})
	return true
}

// scanItem orders a database's keys for SCAN: by a fixed 64-bit hash of the
// key, then by the key. The cursor is a hash value to resume from, so it
// stays valid however keys come and go between calls: this gives SCAN's
// guarantee (a key present for the whole iteration is returned at least
// once) the way Redis's reverse-binary bucket cursor does, and the order is
// the same on every replica.
type scanItem struct {
	hash uint64
	key  string
}

func scanItemLess(a, b scanItem) bool {
	if a.hash != b.hash {
		return a.hash < b.hash
	}
	return a.key < b.key
}

// scanHash is FNV-1a 64 of the key: fixed, so cursors survive restarts and
// agree between replicas.
func scanHash(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// defaultScanCount is SCAN's default COUNT.
const defaultScanCount = 10

// scan answers SCAN: from the cursor's hash on, it takes at least COUNT keys
// (a hint, as in Redis), finishing the last hash so that no hash is split
// between two calls, then filters by MATCH and TYPE (case-insensitive, as
// Redis compares type names) after the selection as Redis does (so a call can return fewer keys than COUNT, or none, with a
// non-zero cursor). Cursor 0 in the answer means the iteration is complete;
// a key whose hash is 0 is reached only from the start, so a resumed cursor
// is never 0.
func (ks *Keyspace) scan(q wire.Scan, nowMs int64) (any, error) {
	d := ks.db(q.DB)
	count := q.Count
	if count <= 0 {
		count = defaultScanCount
	}
	res := ScanResult{Keys: []string{}}
	var taken int64
	var lastHash uint64
	d.order.AscendGreaterOrEqual(scanItem{hash: q.Cursor}, func(it scanItem) bool {
		if taken >= count && it.hash != lastHash {
			res.Cursor = it.hash
			return false
		}
		taken++
		lastHash = it.hash
		if d.expired(it.key, nowMs) {
			return true
		}
		if q.Match != "" && !glob.Match(q.Match, it.key) {
			return true
		}
		if q.Type != "" && !strings.EqualFold(q.Type, "stream") {
			return true
		}
		res.Keys = append(res.Keys, it.key)
		return true
	})
	return res, nil
}
