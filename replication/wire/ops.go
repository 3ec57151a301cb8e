// Package wire holds the typed operations on the keyspace: Commands (writes,
// which go through the replicated log) and Queries (reads, answered from local
// state). The server parses client arguments into these; the state machine
// (replication/state) applies them. Its only dependency is streams, for ID.
package wire

import "streamd/streams"

// Op is an operation on the keyspace: a Command or a Query.
type Op interface {
	// Keys lists the keys the operation names, for wake-ups, tracking and
	// WATCH. FLUSHDB/FLUSHALL name none: see Flushes.
	Keys() []string
	// Database is the logical database (0-15) the operation runs in.
	Database() int
}

// Command is a write: it is applied by every replica, in log order.
type Command interface {
	Op
	command()
	// effects returns e with what the write did to the keyspace added,
	// given its answer (only called for a write that succeeded; see
	// EffectsOf).
	effects(res any, e Effects) Effects
}

// Query is a read: it is answered from the local state and never logged.
type Query interface {
	Op
	query()
}

// Base carries the database and key of most operations.
type Base struct {
	DB  int
	Key string
}

// Keys returns the operation's key.
func (b Base) Keys() []string { return []string{b.Key} }

// AppendKeys appends op's keys to dst: Keys without its allocation for
// the single-key stream writes of the hot path.
func AppendKeys(dst []string, op Op) []string {
	switch o := op.(type) {
	case XAdd:
		return append(dst, o.Key)
	case XAck:
		return append(dst, o.Key)
	case XDel:
		return append(dst, o.Key)
	case XTrim:
		return append(dst, o.Key)
	}
	return append(dst, op.Keys()...)
}

// Database returns the operation's database.
func (b Base) Database() int { return b.DB }

// base returns the Base itself: read through the baser interface, it
// copies only the Base out of the op held by an interface.
func (b Base) base() Base { return b }

// baser is an op with a Base.
type baser interface{ base() Base }

// TrimStrategy says how XADD/XTRIM trim.
type TrimStrategy uint8

// Trim strategies.
const (
	TrimNone TrimStrategy = iota
	TrimMaxLen
	TrimMinID
)

// Trim is the MAXLEN|MINID [=|~] threshold [LIMIT count] clause.
type Trim struct {
	Strategy TrimStrategy
	Approx   bool       // "~"
	MaxLen   int64      // TrimMaxLen threshold
	MinID    streams.ID // TrimMinID threshold
	// Limit is LIMIT's count; -1 when not given (approximate trimming then
	// uses Redis's default of 100 × stream-node-max-entries; 0 = no limit).
	Limit int64
	// Ref is KEEPREF|DELREF|ACKED (Redis 8.2): what trimming does about
	// the groups' references to the trimmed entries.
	Ref RefMode
}

// ReadStream is one key of XREAD/XREADGROUP with the ID to read after.
type ReadStream struct {
	Key string
	ID  streams.ID
	// New is XREADGROUP's ">": entries never delivered to the group.
	New bool
	// Last is XREAD's "+": the stream's last entry.
	Last bool
}

// ---- Commands (writes) ----

// XAdd is XADD. Result: streams.ID, or nil when NOMKSTREAM and no key, or
// IDMPDuplicate when the IDMP pair was already recorded.
type XAdd struct {
	Base
	NoMkStream bool
	Trim       Trim
	ID         streams.IDSpec
	Fields     [][]byte // field, value, field, value, ...
	// IDMP is the IDMP pid iid clause (ops_idmp.go); zero when absent.
	IDMP IDMP
}

// XDel is XDEL. Result: int64 deleted.
type XDel struct {
	Base
	IDs []streams.ID
}

// XTrim is XTRIM. Result: int64 trimmed.
type XTrim struct {
	Base
	Trim Trim
}

// XSetID is XSETID. Result: nil (OK).
type XSetID struct {
	Base
	LastID       streams.ID
	EntriesAdded int64       // -1 when not given
	MaxDeletedID *streams.ID // nil when not given
}

// XGroupCreate is XGROUP CREATE. Result: nil (OK).
type XGroupCreate struct {
	Base
	Group       string
	ID          streams.ID
	Dollar      bool // "$": the stream's last ID at apply time
	MkStream    bool
	EntriesRead int64 // -1 when not given
}

// XGroupSetID is XGROUP SETID. Result: nil (OK).
type XGroupSetID struct {
	Base
	Group       string
	ID          streams.ID
	Dollar      bool
	EntriesRead int64 // -1 when not given
}

// XGroupDestroy is XGROUP DESTROY. Result: int64 (1 destroyed, 0 absent).
type XGroupDestroy struct {
	Base
	Group string
}

// XGroupCreateConsumer is XGROUP CREATECONSUMER. Result: int64 (1 created).
type XGroupCreateConsumer struct {
	Base
	Group, Consumer string
}

// XGroupDelConsumer is XGROUP DELCONSUMER. Result: int64 pending dropped.
type XGroupDelConsumer struct {
	Base
	Group, Consumer string
}

// XReadGroup is XREADGROUP (a write: it moves last-delivered-id, fills the
// PEL and stamps the consumer's times). Result: []KeyEntries, nil if no
// stream has anything to return.
type XReadGroup struct {
	DB              int
	Group, Consumer string
	Count           int64 // 0 = no limit
	NoAck           bool
	Streams         []ReadStream
	// Claim (CLAIM min-idle-time, Redis 8.4) first claims pending entries
	// idle for at least MinIdleMs on ">" streams.
	Claim     bool
	MinIdleMs int64
	// MaxCount and MaxSize (Redis 8.10) cap the whole reply's entries and
	// bytes; 0 = no cap.
	MaxCount, MaxSize int64
}

// XAck is XACK. Result: int64 acknowledged.
type XAck struct {
	Base
	Group string
	IDs   []streams.ID
}

// XClaim is XCLAIM. Result: []streams.Entry (with JustID, entries with nil
// Fields: reply the IDs).
type XClaim struct {
	Base
	Group, Consumer string
	MinIdleMs       int64
	IDs             []streams.ID
	IdleMs          int64 // -1 when not given
	TimeMs          int64 // -1 when not given (absolute unix ms)
	RetryCount      int64 // -1 when not given
	Force, JustID   bool
	LastID          *streams.ID
}

// XAutoClaim is XAUTOCLAIM. Result: AutoClaimResult (state package).
type XAutoClaim struct {
	Base
	Group, Consumer string
	MinIdleMs       int64
	Start           streams.ID
	Count           int64
	JustID          bool
}

// Del is DEL and UNLINK. Result: int64 removed.
type Del struct {
	DB    int
	Names []string
}

// Rename is RENAME and RENAMENX. Result: nil (OK) or, with NX, int64.
type Rename struct {
	DB       int
	Src, Dst string
	NX       bool
}

// FlushDB is FLUSHDB. Result: nil (OK).
type FlushDB struct{ DB int }

// FlushAll is FLUSHALL. Result: nil (OK).
type FlushAll struct{}

// ExpireCond is EXPIRE's NX|XX|GT|LT as a set of bit flags, combinable as
// Redis allows (XX with GT or LT; the server rejects NX with any other and
// GT with LT). Each flag set must pass, in Redis's order NX, XX, GT, LT.
type ExpireCond uint8

// Expire conditions. ExpireAlways (no flag) sets the deadline
// unconditionally.
const (
	ExpireAlways ExpireCond = 0
	// ExpireNX: only when the key has no deadline.
	ExpireNX ExpireCond = 1 << 0
	// ExpireXX: only when the key has a deadline.
	ExpireXX ExpireCond = 1 << 1
	// ExpireGT: only when the new deadline is later than the current one (a
	// key without one counts as infinite: GT never passes).
	ExpireGT ExpireCond = 1 << 2
	// ExpireLT: only when the new deadline is earlier than the current one
	// (a key without one counts as infinite: LT passes unless XX is set).
	ExpireLT ExpireCond = 1 << 3
)

// Has reports whether every flag of f is set in c.
func (c ExpireCond) Has(f ExpireCond) bool { return c&f == f }

// Expire is EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT. When Relative, the deadline is
// the entry's time + Ms; else Ms is an absolute unix time in ms. A deadline
// in the past deletes the key. Result: int64 (1 set, 0 not).
type Expire struct {
	Base
	Ms       int64
	Relative bool
	Cond     ExpireCond
}

// Persist is PERSIST. Result: int64.
type Persist struct{ Base }

// Expired deletes keys whose deadline has passed by the entry's time (the
// server's periodic sweep proposes it). Result: int64 deleted.
type Expired struct {
	DB    int
	Names []string
}

// ConfigSet changes a setting that changes what Apply does
// (stream-node-max-entries, stream-node-max-bytes). Result: nil (OK).
type ConfigSet struct {
	Name, Value string
}

// Exec is EXEC: its operations applied as one atomic step, in order.
// Result: []Outcome, one per operation.
type Exec struct {
	DB  int
	Ops []Op
}

// Outcome is one operation's answer inside an Exec.
type Outcome struct {
	Result any
	Err    error
}

// ---- Queries (reads) ----

// XRange is XRANGE/XREVRANGE with inclusive bounds (the server turns "("
// bounds into inclusive ones). Result: []streams.Entry.
type XRange struct {
	Base
	Start, End streams.ID
	Count      int64 // -1 = no limit
	Rev        bool
}

// XLen is XLEN. Result: int64.
type XLen struct{ Base }

// XRead is XREAD with concrete IDs ("$" resolved beforehand with LastIDs).
// Result: []KeyEntries, nil if nothing.
type XRead struct {
	DB      int
	Count   int64 // 0 = no limit
	Streams []ReadStream
	// MaxCount and MaxSize (Redis 8.10) cap the whole reply's entries and
	// bytes; 0 = no cap.
	MaxCount, MaxSize int64
}

// LastIDs answers each key's last-generated ID (0-0 when absent), to resolve
// XREAD's "$". Result: []streams.ID.
type LastIDs struct {
	DB    int
	Names []string
}

// XPending is XPENDING, summary form when Summary. Result: PendingSummary or
// []PendingEntry.
type XPending struct {
	Base
	Group      string
	Summary    bool
	IdleMs     int64 // -1 when not given
	Start, End streams.ID
	Count      int64
	Consumer   string // "" = all
}

// XInfoStream is XINFO STREAM [FULL [COUNT n]]. Result: StreamInfo or
// StreamFullInfo.
type XInfoStream struct {
	Base
	Full  bool
	Count int64 // FULL's COUNT; 0 = all, default 10
}

// XInfoGroups is XINFO GROUPS. Result: []GroupInfo.
type XInfoGroups struct{ Base }

// XInfoConsumers is XINFO CONSUMERS. Result: []ConsumerInfo.
type XInfoConsumers struct {
	Base
	Group string
}

// Exists is EXISTS. Result: int64.
type Exists struct {
	DB    int
	Names []string
}

// Type is TYPE. Result: string ("none" or "stream").
type Type struct{ Base }

// KeysMatch is KEYS pattern. Result: []string, sorted.
type KeysMatch struct {
	DB      int
	Pattern string
}

// Scan is SCAN. Result: ScanResult (state package).
type Scan struct {
	DB     int
	Cursor uint64
	Match  string // "" = all
	Count  int64
	Type   string // "" = all
}

// DBSize is DBSIZE. Result: int64.
type DBSize struct{ DB int }

// TTL is TTL/PTTL, and EXPIRETIME/PEXPIRETIME with Abs. Result: int64 (-2
// no key, -1 no deadline, else the time left — with Abs the deadline as a
// unix time — in s (rounded) or ms).
type TTL struct {
	Base
	Millis bool
	Abs    bool
}

// KeyspaceInfo answers, per database, the number of keys and of keys with a
// deadline (INFO keyspace). Result: []DBInfo (state package), 16 long.
type KeyspaceInfo struct{}

// ExpiredKeys lists up to Limit keys of database DB whose deadline is at or
// before the query's time, in key order, for the server's expiry sweep
// (which then proposes Expired with them). Result: []string.
type ExpiredKeys struct {
	DB    int
	Limit int
}

func (ExpiredKeys) query() {}

// Keys returns nil: the query names no key.
func (ExpiredKeys) Keys() []string { return nil }

// Database returns the database.
func (q ExpiredKeys) Database() int { return q.DB }
