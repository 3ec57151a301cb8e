package replication

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// Log store names (Options.LogStore, the log-store config directive).
const (
	// LogStoreBolt keeps the log in one bbolt file, <dir>/raft.db
	// (boltstore.go): two fsyncs per append, a CRC-32C per record.
	LogStoreBolt = "bolt"
	// LogStoreWAL keeps the log in hashicorp/raft-wal segment files under
	// <dir>/wal/ (walstore.go): one fsync per append, a CRC-32C per append
	// batch, checked at Open by validateWAL.
	LogStoreWAL = "wal"
)

// DefaultLogStore is the log store used when Options.LogStore is empty.
const DefaultLogStore = LogStoreWAL

// ParseLogStore checks a log-store name ("bolt" or "wal"; "" means
// DefaultLogStore) and returns it in canonical form.
func ParseLogStore(s string) (string, error) {
	switch s {
	case "":
		return DefaultLogStore, nil
	case LogStoreBolt, LogStoreWAL:
		return s, nil
	}
	return "", fmt.Errorf("invalid log store %q (want bolt or wal)", s)
}

// logStore is what a Shard needs from its on-disk log: raft's LogStore and
// StableStore, plus the appendfsync switch.
type logStore interface {
	raft.LogStore
	raft.StableStore
	// SetNoSync switches fsync-per-append off (true) or on (false).
	SetNoSync(noSync bool)
	// Sync makes everything written so far durable.
	Sync() error
	// Close closes the store's files.
	Close() error
}

// walStore is raft's LogStore and StableStore on hashicorp/raft-wal in
// <dir>/wal: segment files (<base>-<id>.wal, 64 MiB, preallocated) plus
// wal-meta.db (bbolt: the segment list and raft's stable keys).
//
// raft-wal fsyncs the tail segment once per StoreLogs (after writing the
// batch's entry frames and a commit frame carrying the batch's CRC-32C), so
// under appendfsync always a reply follows the fsync of its entry. It has no
// switch to skip that fsync; appendfsync everysec is implemented underneath
// it, in the file layer (syncVFS): a segment's Sync only marks it dirty, and
// Sync (the once-a-second tick, a switch back to always, Close) fsyncs every
// dirty segment. Before raft-wal commits new metadata (segment rotation,
// truncation) every dirty segment is fsynced first, so wal-meta.db never
// describes segment data that a machine crash could still lose.
type walStore struct {
	*wal.WAL
	dir  string
	vfs  *syncVFS
	meta *syncMeta
}

// openWALStore opens (creating if needed) the wal log in dir.
func openWALStore(dir string, noSync bool, log hclog.Logger) (*walStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	vfs := &syncVFS{VFS: walfs.New(), dirty: map[*syncFile]struct{}{}}
	vfs.noSync = noSync
	meta := &syncMeta{MetaStore: &metadb.BoltMetaDB{}, vfs: vfs}
	w, err := wal.Open(dir,
		wal.WithSegmentFiler(segment.NewFiler(dir, vfs)),
		wal.WithMetaStore(meta),
		wal.WithLogger(log.Named("wal")),
		wal.WithSegmentSize(walSegmentSize),
	)
	if err != nil {
		meta.Close()
		return nil, fmt.Errorf("%s: cannot open the log: %w", dir, err)
	}
	return &walStore{WAL: w, dir: dir, vfs: vfs, meta: meta}, nil
}

// SetNoSync switches fsync-per-append off (true) or on (false).
func (s *walStore) SetNoSync(noSync bool) {
	s.vfs.mu.Lock()
	s.vfs.noSync = noSync
	s.vfs.mu.Unlock()
}

// Sync fsyncs every segment written since its last fsync.
func (s *walStore) Sync() error { return s.vfs.syncAll() }

// Close syncs and closes the segments and the metadata database (raft-wal's
// own Close leaves wal-meta.db open).
func (s *walStore) Close() error {
	err := s.vfs.syncAll()
	if cerr := s.WAL.Close(); err == nil {
		err = cerr
	}
	if cerr := s.meta.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncVFS is raft-wal's file layer with appendfsync everysec underneath: while
// noSync is set a writable file's Sync only records it as dirty.
type syncVFS struct {
	types.VFS
	mu     sync.Mutex
	noSync bool
	dirty  map[*syncFile]struct{}
	// hist times every segment fsync (fsync_stats.go).
	hist fsyncHist
}

// fsyncHist returns the store's fsync latency histogram.
func (s *walStore) fsyncHist() *fsyncHist { return &s.vfs.hist }

// Create creates a segment file (preallocated by the OS layer).
func (v *syncVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := v.VFS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return &syncFile{WritableFile: f, vfs: v}, nil
}

// OpenWriter opens the tail segment for appending.
func (v *syncVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.VFS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return &syncFile{WritableFile: f, vfs: v}, nil
}

// syncAll fsyncs every dirty file; a file that fails stays dirty.
func (v *syncVFS) syncAll() error {
	v.mu.Lock()
	files := make([]*syncFile, 0, len(v.dirty))
	for f := range v.dirty {
		files = append(files, f)
	}
	clear(v.dirty)
	v.mu.Unlock()
	var errs []error
	for _, f := range files {
		if err := v.hist.time(f.WritableFile.Sync); err != nil {
			v.mu.Lock()
			v.dirty[f] = struct{}{}
			v.mu.Unlock()
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// syncFile is a writable segment file whose Sync honours syncVFS.noSync.
type syncFile struct {
	types.WritableFile
	vfs *syncVFS
}

// Sync fsyncs the file, or under everysec records it for the next syncAll.
func (f *syncFile) Sync() error {
	f.vfs.mu.Lock()
	if f.vfs.noSync {
		f.vfs.dirty[f] = struct{}{}
		f.vfs.mu.Unlock()
		return nil
	}
	delete(f.vfs.dirty, f)
	f.vfs.mu.Unlock()
	return f.vfs.hist.time(f.WritableFile.Sync)
}

// Close fsyncs the file first if everysec left it dirty (a segment is closed
// when it is deleted after a truncation or when the store closes).
func (f *syncFile) Close() error {
	f.vfs.mu.Lock()
	_, dirty := f.vfs.dirty[f]
	delete(f.vfs.dirty, f)
	f.vfs.mu.Unlock()
	var err error
	if dirty {
		err = f.vfs.hist.time(f.WritableFile.Sync)
	}
	if cerr := f.WritableFile.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncMeta is raft-wal's metadata store, fsyncing dirty segments before each
// metadata commit (see walStore).
type syncMeta struct {
	types.MetaStore
	vfs *syncVFS
}

// CommitState makes segment data durable, then commits the new metadata.
func (m *syncMeta) CommitState(st types.PersistentState) error {
	if err := m.vfs.syncAll(); err != nil {
		return err
	}
	return m.MetaStore.CommitState(st)
}

// walSegmentSize is the preallocated size of a segment file (raft-wal's
// default, 64 MiB); tests lower it to exercise sealed segments.
var walSegmentSize = wal.DefaultSegmentSize

// walDir returns the wal store's directory inside the data directory.
func walDir(dataDir string) string { return filepath.Join(dataDir, "wal") }

// chooseLogStore returns the log store to open in dataDir: the one asked
// for, checked against what the directory already holds (a bolt log in
// raft.db, a wal log in wal/), or with want == "" the one it holds
// (DefaultLogStore for a new directory). Opening the other store would start
// from an empty log beside the real one.
func chooseLogStore(dataDir, want string) (string, error) {
	explicit := want != ""
	want, err := ParseLogStore(want)
	if err != nil {
		return "", err
	}
	_, boltErr := os.Stat(filepath.Join(dataDir, "raft.db"))
	_, walErr := os.Stat(filepath.Join(walDir(dataDir), metadb.FileName))
	hasBolt, hasWAL := boltErr == nil, walErr == nil
	switch {
	case hasBolt && hasWAL:
		return "", fmt.Errorf("data directory %s holds both a bolt log (raft.db) and a wal log (wal/): remove the one not in use", dataDir)
	case explicit && hasBolt && want != LogStoreBolt:
		return "", fmt.Errorf("data directory %s holds a bolt log (raft.db), not a wal log: start with log-store bolt", dataDir)
	case explicit && hasWAL && want != LogStoreWAL:
		return "", fmt.Errorf("data directory %s holds a wal log (wal/), not a bolt log: start with log-store wal", dataDir)
	case hasBolt:
		return LogStoreBolt, nil
	case hasWAL:
		return LogStoreWAL, nil
	}
	if !explicit {
		// No log of either kind beside a snapshot: whichever it was, it is
		// gone, and with it every write after the snapshot.
		if metas, err := readSnapshotMetas(filepath.Join(dataDir, "snapshots"), nil); err == nil && len(metas) > 0 {
			return "", corruptError(filepath.Join(dataDir, "raft.db"), "missing, and no wal log in %s either, but snapshot %s exists: the log was lost or replaced, so the writes after that snapshot are missing",
				walDir(dataDir), metas[0].ID)
		}
	}
	return want, nil
}
