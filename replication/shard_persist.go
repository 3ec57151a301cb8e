package replication

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Persistence: snapshots on demand (SAVE), the appendfsync policy and its
// once-a-second sync, and the figures of INFO persistence.

// Save takes a snapshot now (SAVE, BGSAVE, shutdown) and truncates the log
// behind it; it returns when the snapshot is on disk. With nothing applied
// since the last snapshot it succeeds at once.
func (s *Shard) Save() error {
	err := s.view().Snapshot().Error()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNothingNewToSnapshot):
		s.stats.mu.Lock()
		s.stats.lastSaveUnix, s.stats.lastSaveOK, s.stats.lastSaveErr = time.Now().Unix(), true, nil
		s.stats.mu.Unlock()
		return nil
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrShuttingDown
	}
	s.stats.mu.Lock()
	s.stats.lastSaveOK, s.stats.lastSaveErr = false, err
	s.stats.mu.Unlock()
	return fmt.Errorf("ERR snapshot failed: %v", err)
}

// SetFsync changes the fsync policy at once (CONFIG SET appendfsync).
// Switching to FsyncAlways first syncs what everysec left unsynced.
func (s *Shard) SetFsync(p FsyncPolicy) error {
	if p != FsyncAlways && p != FsyncEverySec {
		return fmt.Errorf("invalid fsync policy %d", p)
	}
	s.fsyncMu.Lock()
	defer s.fsyncMu.Unlock()
	if s.store != nil {
		s.store.SetNoSync(p == FsyncEverySec)
		if p == FsyncAlways {
			if err := s.store.Sync(); err != nil {
				s.syncErr.Store(&err)
				return &MisconfError{Cause: err}
			}
			s.syncErr.Store(nil)
		}
	}
	s.fsync.Store(int32(p))
	return nil
}

// syncLoop fsyncs the log once a second under FsyncEverySec. A failed sync
// refuses writes (MISCONF) until a later one succeeds, as Redis does after
// a failed AOF fsync.
func (s *Shard) syncLoop() {
	defer close(s.syncDone)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stopSync:
			return
		case <-t.C:
		}
		s.fsyncMu.Lock()
		if FsyncPolicy(s.fsync.Load()) == FsyncEverySec {
			if err := s.store.Sync(); err != nil {
				s.syncErr.Store(&err)
				s.opts.Logger.Error("fsync of the log failed", "file", s.storePath, "err", err)
			} else {
				s.syncErr.Store(nil)
			}
		}
		s.checkJoined()
		s.fsyncMu.Unlock()
	}
}

// Stats is the persistence state for INFO persistence and LASTSAVE.
type Stats struct {
	// Durable is false for an in-memory shard.
	Durable bool
	// Fsync is the policy in force.
	Fsync FsyncPolicy
	// LastSaveUnix is when the last snapshot was written (unix seconds;
	// the start time until the first one), as LASTSAVE.
	LastSaveUnix int64
	// LastSaveOK is false if the last snapshot attempt failed;
	// LastSaveErr says why.
	LastSaveOK  bool
	LastSaveErr string
	// ChangesSinceSave counts commands applied that the last snapshot does
	// not hold (rdb_changes_since_last_save); after a restart it counts the
	// log tail replayed on top of the snapshot.
	ChangesSinceSave int64
	// SaveInProgress is true while a snapshot is being written.
	SaveInProgress bool
	// Saves is the number of snapshots written by this process.
	Saves int64
	// LastWriteErr is the last failed log write or fsync, "" once a later
	// one succeeded (aof_last_write_status).
	LastWriteErr string
	// WriteErrors counts failed log writes.
	WriteErrors int64
	// AppliedIndex, LastLogIndex and SnapshotIndex are raft's indexes.
	AppliedIndex, LastLogIndex, SnapshotIndex uint64
	// Batches is the number of log entries proposed, Proposals the number
	// of commands in them (Proposals/Batches is the mean batch size).
	Batches, Proposals int64
}

// Stats returns the persistence state.
func (s *Shard) Stats() Stats {
	st := Stats{
		Durable:        s.store != nil,
		Fsync:          FsyncPolicy(s.fsync.Load()),
		SaveInProgress: s.stats.saving.Load(),
		WriteErrors:    s.stats.writeErrors.Load(),
		Batches:        s.stats.batches.Load(),
		Proposals:      s.stats.proposals.Load(),
		AppliedIndex:   s.view().AppliedIndex(),
		LastLogIndex:   s.view().LastIndex(),
	}
	if err := s.lastWriteErr(); err != nil {
		st.LastWriteErr = err.Error()
	} else if err := s.writeBlocked(); err != nil {
		st.LastWriteErr = errors.Unwrap(err).Error()
	}
	var snapIdx uint64
	fmt.Sscan(s.view().Stats()["last_snapshot_index"], &snapIdx)
	st.SnapshotIndex = snapIdx
	s.stats.mu.Lock()
	st.LastSaveUnix, st.LastSaveOK = s.stats.lastSaveUnix, s.stats.lastSaveOK
	if s.stats.lastSaveErr != nil {
		st.LastSaveErr = s.stats.lastSaveErr.Error()
	}
	st.ChangesSinceSave = s.fsm.changes.Load() - s.stats.savedChanges
	st.Saves = s.stats.saves
	s.stats.mu.Unlock()
	return st
}

// FsyncStats returns the shard's fsync latency histogram; ok is false for
// an in-memory shard (no log on disk, nothing fsynced).
func (s *Shard) FsyncStats() (st FsyncStats, ok bool) {
	if s.store == nil {
		return FsyncStats{}, false
	}
	return s.store.FsyncStats(), true
}
