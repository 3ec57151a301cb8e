package replication

import (
	"hash/crc32"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/types"

	"streamd/replication/logstore"
)

// The start-up tests of this package open Shards over log stores they
// damage, seal or repair by hand: these are their names for the seams of
// package logstore (testhooks.go there).

// walDir returns the wal store's directory inside a data directory.
func walDir(dataDir string) string { return logstore.WALDir(dataDir) }

// readWALMeta reads the segment list from a wal-meta.db.
func readWALMeta(path string) (types.PersistentState, error) {
	return logstore.ReadWALMetaForTest(path)
}

// commitWALMeta replaces the segment list of the wal directory dir.
func commitWALMeta(dir string, st types.PersistentState) error {
	return logstore.CommitWALMetaForTest(dir, st)
}

// segmentScan is what walking a segment's frames found.
type segmentScan struct {
	goodEnd int64 // offset just after the last good commit frame (0: none)
	stop    int64 // offset where the walk stopped
}

// scanSegment walks a segment's frames as the start-up checks do.
func scanSegment(data []byte) segmentScan {
	var sc segmentScan
	sc.goodEnd, sc.stop = logstore.ScanSegmentForTest(data)
	return sc
}

// raft-wal's segment format (version 0), which the tests write frames in.
const (
	walFrameHeaderLen = 8
	walFileHeaderLen  = 32
	walFrameEntry     = 1
	walFrameCommit    = 3
)

// castagnoli is the CRC-32C table of the segment format and bolt records.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// openWALStore opens the wal log in dir with raft-wal alone (no checks, no
// repairs, no lock).
func openWALStore(dir string, noSync bool, _ hclog.Logger) (logstore.Store, error) {
	return logstore.OpenUncheckedForTest(logstore.WAL, dir, noSync)
}

// openBoltStore opens the bolt log at path without checks or lock.
func openBoltStore(path string, noSync bool) (logstore.Store, error) {
	return logstore.OpenUncheckedForTest(logstore.Bolt, path, noSync)
}

// bucketLogs is the bolt store's bucket of log records.
var bucketLogs = []byte("logs")

// appendLogRecord appends the bolt record encoding of l to dst.
func appendLogRecord(dst []byte, l *raft.Log) []byte { return logstore.AppendBoltRecordForTest(dst, l) }

// decodeLogRecord decodes the bolt record of entry idx into l.
func decodeLogRecord(idx uint64, v []byte, l *raft.Log) error {
	return logstore.DecodeBoltRecordForTest(idx, v, l)
}
