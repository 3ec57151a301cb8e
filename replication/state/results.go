package state

import (
	"streamd/groups"
	"streamd/replication/wire"
	"streamd/streams"
)

// KeyEntries is one stream's part of an XREAD/XREADGROUP answer.
type KeyEntries struct {
	Key     string
	Entries []streams.Entry // an entry with nil Fields was deleted (XREADGROUP history)
	// Claim, when not nil, holds one ClaimInfo per entry: the stream was
	// read with XREADGROUP ... CLAIM, whose entries have four elements.
	Claim []ClaimInfo
}

// AutoClaimResult is XAUTOCLAIM's three-element answer.
type AutoClaimResult struct {
	Next    streams.ID      // cursor for the next call; 0-0 when the scan is complete
	Entries []streams.Entry // claimed entries (with JUSTID only IDs matter)
	Deleted []streams.ID    // IDs that were pending but no longer in the stream
}

// PendingSummary is XPENDING's summary form.
type PendingSummary struct {
	Count     int64
	Min, Max  streams.ID // meaningful only when Count > 0
	Consumers []ConsumerPending
}

// ConsumerPending is one consumer's pending count in a PendingSummary.
type ConsumerPending struct {
	Name  string
	Count int64
}

// PendingEntry is one row of XPENDING's extended form.
type PendingEntry struct {
	ID         streams.ID
	Consumer   string
	IdleMs     int64
	Deliveries int64
}

// StreamHeader is what both forms of XINFO STREAM start with, in Redis
// 7.2's field order.
type StreamHeader struct {
	Length               int64
	RadixTreeKeys        int64
	RadixTreeNodes       int64
	LastGeneratedID      streams.ID
	MaxDeletedEntryID    streams.ID
	EntriesAdded         int64
	RecordedFirstEntryID streams.ID
	// IDMP is Redis 8.6's idmp-duration … iids-duplicates.
	IDMP IDMPInfo
	// Ret is the retention fields (issue #15); nil for a stream with the
	// defaults, which XINFO then does not show.
	Ret *RetentionInfo
	// AckLevel is the stream's XCFGSET ACKLEVEL (wire.AckDefault: not
	// set; the server shows its stream-default-acklevel).
	AckLevel wire.AckLevel
}

// StreamInfo is XINFO STREAM (not FULL), in Redis 7.2's field order.
type StreamInfo struct {
	StreamHeader
	Groups     int64
	FirstEntry *streams.Entry // nil when empty
	LastEntry  *streams.Entry // nil when empty
}

// GroupInfo is one row of XINFO GROUPS.
type GroupInfo struct {
	Name            string
	Consumers       int64
	Pending         int64
	LastDeliveredID streams.ID
	EntriesRead     *int64 // nil → null
	Lag             *int64 // nil → null
	// Config and DeadLettered are the group's XGROUP CONFIG settings and
	// dead-lettered count (issue #15); XINFO shows them only when either
	// is not the default.
	Config       groups.Config
	DeadLettered int64
}

// ConsumerInfo is one row of XINFO CONSUMERS (7.2: inactive -1 if never active).
type ConsumerInfo struct {
	Name       string
	Pending    int64
	IdleMs     int64
	InactiveMs int64
}

// StreamFullInfo is XINFO STREAM FULL.
type StreamFullInfo struct {
	StreamHeader
	Entries []streams.Entry
	Groups  []GroupFull
}

// GroupFull is a group in XINFO STREAM FULL.
type GroupFull struct {
	Name            string
	LastDeliveredID streams.ID
	EntriesRead     *int64
	Lag             *int64
	PelCount        int64
	NackedCount     int64         // Redis 8.8's nacked-count: entries in the NACK zone
	Pending         []PendingFull // up to COUNT
	Consumers       []ConsumerFull
}

// PendingFull is a group PEL row in XINFO STREAM FULL.
type PendingFull struct {
	ID             streams.ID
	Consumer       string
	DeliveryTimeMs int64
	DeliveryCount  int64
}

// ConsumerFull is a consumer in XINFO STREAM FULL.
type ConsumerFull struct {
	Name         string
	SeenTimeMs   int64
	ActiveTimeMs int64 // -1 if never active
	PelCount     int64
	Pending      []ConsumerPendingFull // up to COUNT
}

// ConsumerPendingFull is a consumer PEL row in XINFO STREAM FULL.
type ConsumerPendingFull struct {
	ID             streams.ID
	DeliveryTimeMs int64
	DeliveryCount  int64
}

// ScanResult is SCAN's answer.
type ScanResult struct {
	Cursor uint64
	Keys   []string
}

// DBInfo is one database's line in INFO keyspace.
type DBInfo struct {
	Keys, Expires int64
}
