package logstore

import (
	"errors"
	"fmt"
	"log/slog"
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
	// mu guards w and meta: every call into raft-wal holds it for reading;
	// reopen (walstore_recover.go) holds it for writing while it closes and
	// reopens them in place.
	mu   sync.RWMutex
	w    *wal.WAL  // nil only if a reopen failed half-way
	meta *syncMeta // w's metadata store
	dir  string
	vfs  *syncVFS
	lock *dirLock // nil when opened without Open
	// hlog is raft-wal's logger, slog receives the recovery lines.
	hlog hclog.Logger
	slog *slog.Logger
	// rec is the state of recovery from a failed append (walstore_recover.go).
	rec walRecovery
	// errs is the last failed write, for LastWriteError.
	errs lastErr
}

// openWALStore opens (creating if needed) the wal log in dir.
func openWALStore(dir string, noSync bool, log hclog.Logger) (*walStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	vfs := &syncVFS{VFS: walfs.New(), dirty: map[*syncFile]struct{}{}}
	vfs.noSync = noSync
	s := &walStore{dir: dir, vfs: vfs, hlog: log, slog: slog.Default()}
	if err := s.openWAL(); err != nil {
		return nil, err
	}
	return s, nil
}

// openWAL opens raft-wal on s.dir through s.vfs and installs it as s.w
// (called with mu held for writing, or before s is shared).
func (s *walStore) openWAL() error {
	meta := &syncMeta{MetaStore: &metadb.BoltMetaDB{}, vfs: s.vfs}
	w, err := wal.Open(s.dir,
		wal.WithSegmentFiler(segment.NewFiler(s.dir, s.vfs)),
		wal.WithMetaStore(meta),
		wal.WithLogger(s.hlog.Named("wal")),
		wal.WithSegmentSize(walSegmentSize),
	)
	if err != nil {
		meta.Close()
		return fmt.Errorf("%s: cannot open the log: %w", s.dir, diskFullHint(s.dir, err))
	}
	s.w, s.meta = w, meta
	return nil
}

// wal returns the open raft-wal log and the function releasing it; with
// none open (a reopen failed) it returns the reason.
func (s *walStore) wal() (*wal.WAL, func(), error) {
	s.mu.RLock()
	if s.w == nil {
		s.mu.RUnlock()
		return nil, nil, s.rec.closedErr(s.dir)
	}
	return s.w, s.mu.RUnlock, nil
}

// FirstIndex returns the first index in the log (0: empty).
func (s *walStore) FirstIndex() (uint64, error) {
	w, release, err := s.wal()
	if err != nil {
		return 0, err
	}
	defer release()
	return w.FirstIndex()
}

// LastIndex returns the last index in the log (0: empty).
func (s *walStore) LastIndex() (uint64, error) {
	w, release, err := s.wal()
	if err != nil {
		return 0, err
	}
	defer release()
	return w.LastIndex()
}

// GetLog reads the entry at index into log.
func (s *walStore) GetLog(index uint64, log *raft.Log) error {
	w, release, err := s.wal()
	if err != nil {
		return err
	}
	defer release()
	return w.GetLog(index, log)
}

// StoreLog appends one entry (see StoreLogs).
func (s *walStore) StoreLog(log *raft.Log) error { return s.StoreLogs([]*raft.Log{log}) }

// StoreLogs appends entries. After a failed append (a disk that filled as
// the log rolled to a new segment leaves raft-wal refusing every later
// append with "segment is sealed") it first reopens the log in place, once
// there is space for a new segment, with backoff (walstore_recover.go);
// until then it fails at once with the reason.
func (s *walStore) StoreLogs(logs []*raft.Log) error {
	if err := s.recoverIfBroken(); err != nil {
		s.errs.note(err)
		return err
	}
	w, release, err := s.wal()
	if err != nil {
		s.errs.note(err)
		return err
	}
	err = w.StoreLogs(logs)
	release()
	if err != nil {
		err = s.appendFailed(err)
		s.errs.note(err)
		return err
	}
	s.errs.note(nil)
	return nil
}

// DeleteRange deletes the entries min..max (a prefix or a suffix).
func (s *walStore) DeleteRange(min, max uint64) error {
	w, release, err := s.wal()
	if err != nil {
		return err
	}
	defer release()
	err = w.DeleteRange(min, max)
	s.errs.note(err)
	return err
}

// Set stores a stable key (raft's term and vote) in wal-meta.db.
func (s *walStore) Set(key, val []byte) error {
	w, release, err := s.wal()
	if err != nil {
		return err
	}
	defer release()
	err = w.Set(key, val)
	s.errs.note(err)
	return err
}

// Get reads a stable key.
func (s *walStore) Get(key []byte) ([]byte, error) {
	w, release, err := s.wal()
	if err != nil {
		return nil, err
	}
	defer release()
	return w.Get(key)
}

// SetUint64 stores a stable key holding an integer.
func (s *walStore) SetUint64(key []byte, val uint64) error {
	w, release, err := s.wal()
	if err != nil {
		return err
	}
	defer release()
	err = w.SetUint64(key, val)
	s.errs.note(err)
	return err
}

// GetUint64 reads a stable key holding an integer.
func (s *walStore) GetUint64(key []byte) (uint64, error) {
	w, release, err := s.wal()
	if err != nil {
		return 0, err
	}
	defer release()
	return w.GetUint64(key)
}

// IsMonotonic tells raft that the log cannot hold gaps (raft-wal's
// contract): after installing a snapshot raft deletes the whole log.
func (s *walStore) IsMonotonic() bool { return true }

// LastWriteError returns the last failed write to the log or its stable
// keys, nil once a later one succeeded.
func (s *walStore) LastWriteError() error { return s.errs.get() }

// SetNoSync switches fsync-per-append off (true) or on (false).
func (s *walStore) SetNoSync(noSync bool) {
	s.vfs.mu.Lock()
	s.vfs.noSync = noSync
	s.vfs.mu.Unlock()
}

// Sync fsyncs every segment written since its last fsync.
func (s *walStore) Sync() error { return s.vfs.syncAll() }

// Close syncs and closes the segments and the metadata database (raft-wal's
// own Close leaves wal-meta.db open), then releases the directory lock.
func (s *walStore) Close() error {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	s.rec.closed = true
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.vfs.syncAll()
	if s.w != nil {
		if cerr := s.w.Close(); err == nil {
			err = cerr
		}
		if cerr := s.meta.Close(); err == nil {
			err = cerr
		}
		s.w, s.meta = nil, nil
	}
	return s.lock.releaseAfter(err)
}

// Kind returns WAL.
func (s *walStore) Kind() string { return WAL }

// Path returns the wal directory.
func (s *walStore) Path() string { return s.dir }

// StablePath returns wal-meta.db, which holds raft's stable keys.
func (s *walStore) StablePath() string { return filepath.Join(s.dir, metadb.FileName) }

// FsyncStats returns the histogram of the segment fsyncs.
func (s *walStore) FsyncStats() FsyncStats { return s.vfs.hist.Snapshot() }

// syncVFS is raft-wal's file layer with appendfsync everysec underneath: while
// noSync is set a writable file's Sync only records it as dirty.
type syncVFS struct {
	types.VFS
	mu     sync.Mutex
	noSync bool
	dirty  map[*syncFile]struct{}
	// hist times every segment fsync (fsync_stats.go).
	hist LatencyHist
	// failSync, if set (tests), is the error of the next segment fsync.
	failSync error
}

// Create creates a segment file (preallocated by the OS layer). If that
// fails (no space for the preallocation), the file it created is removed
// again: nothing was written to it, and raft-wal — which creates it with
// O_EXCL, after committing it to wal-meta.db — recreates a missing tail
// segment when it is reopened (walstore_recover.go), while an empty one
// would be refused as truncated.
func (v *syncVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	path := filepath.Join(dir, name)
	_, statErr := os.Lstat(path)
	f, err := v.VFS.Create(dir, name, size)
	if err != nil {
		if errors.Is(statErr, os.ErrNotExist) {
			os.Remove(path)
		}
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
	if err := f.vfs.failSync; err != nil {
		f.vfs.failSync = nil
		f.vfs.mu.Unlock()
		return err
	}
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

// openWALStoreSafe checks (and where walstore_repair.go says, repairs) the
// wal files (checkWALFiles, repairs logged to slog) and opens the store.
func openWALStoreSafe(dir string, noSync bool, log hclog.Logger, logger *slog.Logger) (*walStore, error) {
	if err := checkWALFiles(dir, logger); err != nil {
		return nil, diskFullHint(dir, err)
	}
	w, err := openWALStore(dir, noSync, log)
	if err != nil {
		return nil, err
	}
	w.slog = logger
	return w, nil
}

// Verify checks that the wal log continues the snapshot at snapIdx
// without a gap and that every entry after it reads and, for command
// entries, decodes. checkWALFiles has already checked every batch's CRC.
func (s *walStore) Verify(snapIdx uint64, decode func(data []byte) error) error {
	first, err := s.FirstIndex()
	if err != nil {
		return corruptError(s.dir, "cannot read the log: %v", err)
	}
	last, err := s.LastIndex()
	if err != nil {
		return corruptError(s.dir, "cannot read the log: %v", err)
	}
	if last == 0 {
		if snapIdx > 0 {
			return corruptError(s.dir, "log is empty but the newest snapshot ends at entry %d (the log was lost or replaced)", snapIdx)
		}
		// raft stores its term (0) at every start, also on a node that
		// waits to be added to a cluster and never was: only a term
		// above 0 says a leader or candidate reached it, and only then
		// may entries have been written (replication's JOINING marker
		// tells a node that was never sent any from a lost log).
		if term, err := s.GetUint64(keyCurrentTerm); err != nil || term > 0 {
			return corruptError(s.dir, "log is empty but raft state exists (term %d): the log segments were lost", term)
		}
		return nil
	}
	if snapIdx == 0 && first != 1 {
		return corruptError(s.dir, "log starts at entry %d but there is no snapshot before it", first)
	}
	if first > snapIdx+1 {
		return corruptError(s.dir, "log starts at entry %d but the newest snapshot ends at %d (entries missing)", first, snapIdx)
	}
	for idx := max(first, snapIdx+1); idx <= last; idx++ {
		var l raft.Log
		if err := s.GetLog(idx, &l); err != nil {
			return corruptError(s.dir, "log entry %d does not read: %v", idx, err)
		}
		if l.Index != idx {
			return corruptError(s.dir, "log entry %d reads back as entry %d", idx, l.Index)
		}
		if l.Type == raft.LogCommand {
			if err := decode(l.Data); err != nil {
				return corruptError(s.dir, "log entry %d does not decode: %v", idx, err)
			}
		}
	}
	return nil
}
