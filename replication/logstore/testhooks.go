package logstore

import (
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/types"
)

// Test seams. replication's start-up tests run a Shard over stores they
// damage, seal or repair by hand, so they need a few of this package's
// internals; nothing outside tests calls these.

// SetSegmentSizeForTest sets the preallocated size of new wal segment files
// (64 MiB by default), so that a small workload seals several of them, and
// returns the function restoring the old size. Not safe while a store is
// open in another goroutine.
func SetSegmentSizeForTest(size int) (restore func()) {
	old := walSegmentSize
	walSegmentSize = size
	return func() { walSegmentSize = old }
}

// OpenUncheckedForTest opens the store of the given kind at path (the wal
// directory, or the bolt file) directly: no lock, no start-up checks, no
// repairs (raft-wal alone decides what it opens).
func OpenUncheckedForTest(kind, path string, noSync bool) (Store, error) {
	switch kind {
	case WAL:
		return openWALStore(path, noSync, hclog.NewNullLogger())
	case Bolt:
		return openBoltStore(path, noSync)
	}
	return nil, fmt.Errorf("invalid log store %q", kind)
}

// DirtySegmentsForTest returns how many wal segments everysec has written
// since their last fsync (0 for a bolt store).
func DirtySegmentsForTest(s Store) int {
	w, ok := s.(*walStore)
	if !ok {
		return 0
	}
	w.vfs.mu.Lock()
	defer w.vfs.mu.Unlock()
	return len(w.vfs.dirty)
}

// ReadWALMetaForTest reads raft-wal's segment list from the wal-meta.db at
// path, as the start-up checks do.
func ReadWALMetaForTest(path string) (types.PersistentState, error) { return readWALMeta(path) }

// CommitWALMetaForTest replaces the segment list in the wal directory dir's
// wal-meta.db with st, as the start-up repairs do.
func CommitWALMetaForTest(dir string, st types.PersistentState) error { return commitWALMeta(dir, st) }

// ScanSegmentForTest walks a segment file's frames as the start-up checks
// do and returns the offset just after its last good commit (0: none) and
// the offset where the walk stopped.
func ScanSegmentForTest(data []byte) (goodEnd, stop int64) {
	sc := scanSegment(data)
	return sc.goodEnd, sc.stop
}

// AppendBoltRecordForTest appends the bolt store's record encoding of l to
// dst.
func AppendBoltRecordForTest(dst []byte, l *raft.Log) []byte { return appendLogRecord(dst, l) }

// DecodeBoltRecordForTest decodes the bolt store's record of entry idx into
// l; the error says what is wrong.
func DecodeBoltRecordForTest(idx uint64, v []byte, l *raft.Log) error {
	return decodeLogRecord(idx, v, l)
}
