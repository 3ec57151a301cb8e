package wire

import "streamd/streams"

// Redis 8.6's idempotent production: XADD … IDMP pid iid (the server turns
// IDMPAUTO pid into IDMP pid hash, so the log carries the iid and replay
// never depends on how the hash is computed), XCFGSET and XIDMPRECORD.

// IDMP is XADD's IDMP pid iid clause. The zero value (empty PID) is no
// clause; a clause has a non-empty PID and IID (the parser refuses empty
// ones, the codec refuses to decode them).
type IDMP struct {
	PID, IID string
}

// IsZero reports whether there is no clause.
func (m IDMP) IsZero() bool { return m.PID == "" }

// IDMPDuplicate is XAdd's result when the IDMP pair was already recorded:
// the stream ID recorded for it (which the client gets as if the entry had
// been added now). Nothing was appended, trimmed or signalled.
type IDMPDuplicate struct {
	ID streams.ID
}

// XCfgSet is XCFGSET key [IDMP-DURATION s] [IDMP-MAXSIZE n] [ACKLEVEL
// QUORUM|LEADER]; a zero field was not given (the server checks the
// ranges, 1-86400 and 1-10000, and that at least one is given). Result:
// nil (OK).
type XCfgSet struct {
	Base
	Duration int64 // seconds; 0 = not given
	MaxSize  int64 // iids per producer; 0 = not given
	// Ret is the retention options (ops_retention.go).
	Ret      RetentionSet
	AckLevel AckLevel // AckDefault = not given (flags bit 2)
}

// XIDMPRecord is XIDMPRECORD key pid iid stream-id: records the pair for an
// existing entry (Redis's AOF rewrite emits it). Result: nil (OK).
type XIDMPRecord struct {
	Base
	PID, IID string
	ID       streams.ID
}

// IDMPExpired drops, at the entry's time, the expired iids of streams of
// database DB (the server's periodic sweep proposes it, so that a stream
// no write touches frees them too, as Redis's cron does; a write drops a
// stream's expired iids anyway). Result: int64 iids dropped.
type IDMPExpired struct {
	DB    int
	Names []string
}

// Keys returns the streams swept.
func (c IDMPExpired) Keys() []string { return c.Names }

// Database returns the database.
func (c IDMPExpired) Database() int { return c.DB }

func (IDMPExpired) command() {}
func (XCfgSet) command()     {}
func (XIDMPRecord) command() {}

// Writes Redis signals nothing for (no keyspace event, no WATCH abort).
func (XCfgSet) effects(_ any, e Effects) Effects     { return e }
func (XIDMPRecord) effects(_ any, e Effects) Effects { return e }
func (IDMPExpired) effects(_ any, e Effects) Effects { return e }
