package router

import (
	"math/bits"

	"streamd/replication/state"
)

// Fan-out helpers: keyless commands over a keyspace split into shards
// (the server runs each shard's part; these combine them). SCAN walks the
// shards one after the other, the cursor carrying the shard in its high
// bits; INFO keyspace sums the shards' per-database counts.

// scanBits is how many high bits of a SCAN cursor name the shard.
func scanBits(shards int) int {
	return bits.Len(uint(shards - 1))
}

// SplitScanCursor splits a SCAN cursor over shards into the shard it
// resumes in and that shard's own cursor (the high bits that named the
// shard shifted out: resuming a little early returns a few keys again,
// which SCAN allows). shard ≥ shards means the scan is over.
func SplitScanCursor(cursor uint64, shards int) (shard int, inner uint64) {
	if b := scanBits(shards); b > 0 {
		return int(cursor >> (64 - b)), cursor << b
	}
	return 0, cursor
}

// NextScanCursor is the cursor SCAN returns after shard answered with its
// own cursor next: the rest of shard, else the start of the next shard,
// else 0 (the scan is over).
func NextScanCursor(shard, shards int, next uint64) uint64 {
	b := scanBits(shards)
	switch {
	case next != 0:
		next >>= b
		if next == 0 {
			next = 1 // a resumed cursor is never 0 (that would end the scan)
		}
		if b > 0 {
			next |= uint64(shard) << (64 - b)
		}
		return next
	case shard+1 < shards:
		return uint64(shard+1) << (64 - b)
	}
	return 0
}

// AddKeyspace adds one shard's INFO keyspace counts to sum (nil: the
// first shard's) and returns the sum.
func AddKeyspace(sum, dbs []state.DBInfo) []state.DBInfo {
	if sum == nil {
		sum = make([]state.DBInfo, len(dbs))
	}
	for j := range min(len(dbs), len(sum)) {
		sum[j].Keys += dbs[j].Keys
		sum[j].Expires += dbs[j].Expires
	}
	return sum
}
