package logstore

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// Recovery from a failed append, in place (no restart).
//
// raft-wal rolls to a new segment in the background after the append that
// filled the current one: it commits the new segment to wal-meta.db, then
// creates and preallocates its file. When the disk is full the file is left
// empty (os.O_EXCL: raft-wal cannot create it again) and the in-memory tail
// stays the sealed segment, so every later append fails with "segment is
// sealed" for as long as the process lives, whatever space is freed. A
// failed write of any other kind may likewise leave raft-wal's state behind
// the files.
//
// So after a failed append the store is "broken": each later StoreLogs
// first tries to reopen raft-wal in place — close it, run the start-up
// checks and repairs, open it again (syncVFS.Create removed the file whose
// preallocation failed: raft-wal creates a missing tail again) — at most once per backoff period
// (50ms doubling to 1s), and only once the file system has room for a new
// segment. Until then it fails at once, naming the cause: the shard turns
// that into MISCONF. Reopening keeps raft's view of the log: an append that
// reached the file but failed (its fsync) was never acknowledged and is
// truncated away again.

// Backoff between attempts to reopen a broken log.
const (
	recoverMinBackoff = 50 * time.Millisecond
	recoverMaxBackoff = time.Second
)

// walRecovery is a walStore's recovery state; mu serialises attempts (lock
// order: rec.mu, then walStore.mu).
type walRecovery struct {
	mu      sync.Mutex
	broken  error // why appends fail (nil: the log is healthy)
	next    time.Time
	backoff time.Duration
	closed  bool
	// want is raft's last index when the broken log was closed (valid
	// while the store has no open log).
	want uint64
	// failures counts failed attempts since the log broke (for the log
	// lines: the first and every 20th are logged).
	failures int
}

// closedErr is returned by every call while no log is open (a reopen
// failed half-way; the next append tries again).
func (r *walRecovery) closedErr(dir string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("%s: the log is closed", dir)
	}
	return fmt.Errorf("%s: the log is being reopened after a failed write: %v", dir, r.broken)
}

// appendFailed records a failed append: the store is broken until a reopen
// succeeds. It returns the error to give raft (and the client, as MISCONF).
func (s *walStore) appendFailed(err error) error {
	err = s.describe(err)
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	if s.rec.broken == nil {
		s.rec.backoff, s.rec.next, s.rec.failures = recoverMinBackoff, time.Time{}, 0
		s.slog.Error("log append failed; the log will be reopened once it can take writes again", "dir", s.dir, "err", err)
	}
	s.rec.broken = err
	return err
}

// describe adds what is wrong and what happens next to a failed append's
// error: a full disk is said as such.
func (s *walStore) describe(err error) error {
	need := segmentRoom()
	if free, ok := freeBytes(s.dir); ok && free < need {
		return fmt.Errorf("%s: no space left on device for a new log segment (%d bytes needed, %d free): %w; writes resume once space is freed",
			s.dir, need, free, err)
	}
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%s: %w; writes resume once space is freed", s.dir, err)
	}
	return fmt.Errorf("%s: %w", s.dir, err)
}

// recoverIfBroken reopens a broken log when its backoff has passed and the
// file system has room for a new segment. It returns nil when the log is
// (again) healthy, else why appends still fail.
func (s *walStore) recoverIfBroken() error {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	if s.rec.broken == nil {
		return nil
	}
	if s.rec.closed {
		return fmt.Errorf("%s: the log is closed", s.dir)
	}
	now := time.Now()
	if now.Before(s.rec.next) {
		return s.rec.broken
	}
	s.rec.next = now.Add(s.rec.backoff)
	s.rec.backoff = min(2*s.rec.backoff, recoverMaxBackoff)
	need := segmentRoom()
	if free, ok := freeBytes(s.dir); ok && free < need {
		s.rec.broken = fmt.Errorf("%s: no space left on device for a new log segment (%d bytes needed, %d free): %w; writes resume once space is freed",
			s.dir, need, free, errors.Unwrap(s.rec.broken))
		return s.rec.broken
	}
	if err := s.reopen(); err != nil {
		s.rec.failures++
		if s.rec.failures%20 == 1 {
			s.slog.Warn("reopening the log failed; will try again", "dir", s.dir, "err", err)
		}
		s.rec.broken = diskFullHint(s.dir, err)
		return s.rec.broken
	}
	s.slog.Info("log reopened after a failed write; writes resume", "dir", s.dir, "after", s.rec.broken)
	s.rec.broken = nil
	return nil
}

// reopen closes raft-wal and opens it again after the start-up checks and
// repairs, keeping raft's last index: an append beyond it (written, but
// its fsync failed: never acknowledged) is truncated. Called with rec.mu
// held.
func (s *walStore) reopen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w != nil {
		s.rec.want, _ = s.w.LastIndex() // raft-wal rolls a failed append back
		s.vfs.syncAll()                 // best effort: the close fsyncs again
		s.w.Close()
		s.meta.Close()
		s.w, s.meta = nil, nil
	}
	if err := checkWALFiles(s.dir, s.slog); err != nil {
		return err
	}
	if err := s.openWAL(); err != nil {
		return err
	}
	last, err := s.w.LastIndex()
	if err != nil {
		return err
	}
	switch {
	case last > s.rec.want:
		if err := s.w.DeleteRange(s.rec.want+1, last); err != nil {
			return fmt.Errorf("%s: cannot drop the unacknowledged entries %d..%d: %w", s.dir, s.rec.want+1, last, err)
		}
		s.slog.Warn("dropped log entries whose write failed (never acknowledged)", "dir", s.dir, "from", s.rec.want+1, "to", last)
	case last < s.rec.want:
		// Entries raft holds as written are gone: appending after them
		// would leave a gap. Stay broken (the node refuses writes) rather
		// than go on.
		w, meta := s.w, s.meta
		s.w, s.meta = nil, nil
		w.Close()
		meta.Close()
		return corruptError(s.dir, "after reopening, the log ends at entry %d but %d was written: restart the node to have it checked", last, s.rec.want)
	}
	return nil
}

// segmentRoom is the free space a reopen needs: a new segment plus room
// for wal-meta.db to grow.
func segmentRoom() uint64 { return uint64(walSegmentSize) + 1<<20 }

// freeBytes returns the space available to this process on the file system
// holding dir.
func freeBytes(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}

// diskFullHint adds what to do to an error caused by a full file system.
func diskFullHint(dir string, err error) error {
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		return err
	}
	return fmt.Errorf("%w (the file system holding %s is full: free space there; the log is intact, remove none of its files)", err, dir)
}
