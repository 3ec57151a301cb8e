// Package replication is where writes are proposed: a Shard owns a keyspace
// behind a single-node hashicorp/raft group. Every write is stamped with the
// proposer's clock, packed with other concurrent writes into one log entry
// (batcher.go), made durable in <dir>/wal/ (walstore.go) or <dir>/raft.db
// (boltstore.go), as Options.LogStore says, and applied by
// the FSM (fsm.go) to the keyspace; the log is truncated behind snapshots in
// <dir>/snapshots. Reads never go through the log.
package replication

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"streamd/replication/state"
	"streamd/replication/wire"
)

// FsyncPolicy is when a log write is fsynced (appendfsync).
type FsyncPolicy int

// Fsync policies.
const (
	// FsyncAlways fsyncs every log write before the writes in it are
	// acknowledged (the default: an acknowledged write survives a machine
	// crash).
	FsyncAlways FsyncPolicy = iota
	// FsyncEverySec writes the log without fsync and syncs it once a
	// second: a process crash loses nothing (the page cache survives), a
	// machine crash can lose about the last second of acknowledged writes.
	FsyncEverySec
)

// String returns the appendfsync name: "always" or "everysec".
func (p FsyncPolicy) String() string {
	if p == FsyncEverySec {
		return "everysec"
	}
	return "always"
}

// ParseFsync parses an appendfsync value ("always", "everysec"; case
// insensitive). Redis's "no" is not offered: the log is always synced at
// least once a second.
func ParseFsync(s string) (FsyncPolicy, error) {
	switch strings.ToLower(s) {
	case "always":
		return FsyncAlways, nil
	case "everysec":
		return FsyncEverySec, nil
	}
	return 0, fmt.Errorf("invalid appendfsync %q (want always or everysec)", s)
}

// DefaultSnapshotThreshold is the number of log entries (each up to 128
// commands) between automatic snapshots.
const DefaultSnapshotThreshold = 8192

// trailingLogs is how many entries stay in the log behind a snapshot: a
// single node replays nothing before its snapshot, so only a few are kept.
const trailingLogs = 16

// Options configures Open.
type Options struct {
	// Dir is the data directory (created if missing); "" keeps everything
	// in memory (raft's InmemStore and InmemSnapshotStore), for tests.
	Dir string
	// Fsync is the appendfsync policy (default FsyncAlways).
	Fsync FsyncPolicy
	// LogStore is the on-disk log: LogStoreBolt (<dir>/raft.db) or
	// LogStoreWAL (<dir>/wal/). "" means the store the data directory
	// already holds, or DefaultLogStore for a new one; naming the other
	// store than the one a directory holds is refused.
	LogStore string
	// SnapshotThreshold is the number of log entries between automatic
	// snapshots (0 = DefaultSnapshotThreshold).
	SnapshotThreshold uint64
	// Logger receives raft's warnings and errors (nil = slog.Default()).
	Logger *slog.Logger
}

// Shard owns one keyspace behind a single-node Raft log. Writes go through
// Propose/ProposeAsync (log order = call order), reads through Query under
// the read lock. It is safe for concurrent use.
type Shard struct {
	// mu guards ks: the FSM applies under the write lock, Query and
	// snapshot capture run under the read lock.
	mu sync.RWMutex
	ks *state.Keyspace

	opts    Options
	clock   func() int64
	raft    *raft.Raft
	fsm     *fsm
	batcher *batcher
	store   logStore // nil in memory
	// storePath names the log for messages (raft.db or the wal directory).
	storePath string
	lock      *dirLock // nil in memory

	fsync     atomic.Int32 // FsyncPolicy
	fsyncMu   sync.Mutex   // serialises SetFsync
	writeErr  atomic.Pointer[error]
	syncErr   atomic.Pointer[error] // last failed everysec sync, until one succeeds
	stats     shardStats
	stopSync  chan struct{}
	syncDone  chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// shardStats holds what Stats reports.
type shardStats struct {
	mu           sync.Mutex
	lastSaveUnix int64
	lastSaveOK   bool
	lastSaveErr  error
	savedChanges int64 // fsm.changes covered by the last snapshot written
	saves        int64
	saving       atomic.Bool
	batches      atomic.Int64
	proposals    atomic.Int64
	writeErrors  atomic.Int64
}

// hooks are test seams.
type hooks struct {
	clock    func() int64
	wrapLogs func(raft.LogStore) raft.LogStore
}

// NewShard returns an in-memory shard (no data directory). It panics if
// raft cannot start, which only a bug can cause.
func NewShard() *Shard {
	s, err := Open(Options{})
	if err != nil {
		panic(err)
	}
	return s
}

// Open starts a shard. With a data directory it takes <dir>/LOCK, then
// checks what it will load — the newest snapshot (raft's CRC and the
// snapshot's own checksum) and every log entry after it — and refuses to
// start, naming the file and what is wrong, rather than start empty or
// partial. It returns once the node leads its group and has applied its
// whole log.
func Open(opts Options) (*Shard, error) { return open(opts, hooks{}) }

func open(opts Options, h hooks) (_ *Shard, err error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SnapshotThreshold == 0 {
		opts.SnapshotThreshold = DefaultSnapshotThreshold
	}
	if h.clock == nil {
		h.clock = wallClock
	}
	s := &Shard{ks: state.New(), opts: opts, clock: h.clock}
	s.fsync.Store(int32(opts.Fsync))
	s.fsm = &fsm{s: s}
	s.stats.lastSaveUnix = time.Now().Unix()
	s.stats.lastSaveOK = true
	hlog := hclog.New(&hclog.LoggerOptions{
		Name: "raft", Level: hclog.Warn, DisableTime: true,
		Output: slogWriter{opts.Logger},
	})

	var (
		logs   raft.LogStore
		stable raft.StableStore
		snaps  raft.SnapshotStore
	)
	defer func() {
		if err != nil {
			if s.store != nil {
				s.store.Close()
			}
			s.lock.release()
		}
	}()
	if opts.Dir == "" {
		mem := raft.NewInmemStore()
		logs, stable, snaps = mem, mem, raft.NewInmemSnapshotStore()
	} else {
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, err
		}
		if s.lock, err = lockDir(opts.Dir); err != nil {
			return nil, err
		}
		if opts.LogStore, err = chooseLogStore(opts.Dir, opts.LogStore); err != nil {
			return nil, err
		}
		s.opts.LogStore = opts.LogStore // the store chosen, for LogStore()
		noSync := opts.Fsync == FsyncEverySec
		if opts.LogStore == LogStoreWAL {
			s.storePath = walDir(opts.Dir)
			w, err := openWALStoreSafe(s.storePath, noSync, hlog)
			if err != nil {
				return nil, err
			}
			s.store = w
		} else {
			s.storePath = filepath.Join(opts.Dir, "raft.db")
			b, err := openBoltStoreSafe(s.storePath, noSync)
			if err != nil {
				return nil, err
			}
			s.store = b
		}
		fss, err := raft.NewFileSnapshotStoreWithLogger(opts.Dir, 2, hlog)
		if err != nil {
			return nil, err
		}
		if s.fsm.preloaded, err = validate(opts.Dir, s.store, fss); err != nil {
			return nil, err
		}
		logs, stable, snaps = s.store, s.store, fss
	}
	if h.wrapLogs != nil {
		logs = h.wrapLogs(logs)
	}

	// One voter, no network: the node elects itself one election timeout
	// after start, and the lease check (every LeaderLeaseTimeout on an
	// idle leader) can only count itself. Short timeouts make Open fast;
	// 20ms keeps an idle shard's wake-ups low.
	conf := raft.DefaultConfig()
	conf.LocalID = "streamd"
	conf.HeartbeatTimeout = 20 * time.Millisecond
	conf.ElectionTimeout = 20 * time.Millisecond
	conf.LeaderLeaseTimeout = 20 * time.Millisecond
	conf.CommitTimeout = 5 * time.Millisecond
	conf.BatchApplyCh = true
	conf.MaxAppendEntries = 64
	conf.SnapshotThreshold = opts.SnapshotThreshold
	conf.SnapshotInterval = 10 * time.Second
	conf.TrailingLogs = trailingLogs
	conf.Logger = hlog
	addr, trans := raft.NewInmemTransport(raft.ServerAddress(conf.LocalID))
	exists, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return nil, err
	}
	if !exists {
		cfg := raft.Configuration{Servers: []raft.Server{{ID: conf.LocalID, Address: addr}}}
		if err := raft.BootstrapCluster(conf, logs, stable, snaps, trans, cfg); err != nil {
			return nil, fmt.Errorf("bootstrap raft: %w", err)
		}
	}
	if s.raft, err = raft.NewRaft(conf, s.fsm, logs, stable, snaps, trans); err != nil {
		return nil, fmt.Errorf("start raft: %w", err)
	}
	if err := s.waitReady(); err != nil {
		s.raft.Shutdown()
		return nil, err
	}
	s.mu.RLock()
	lastNow := s.ks.LastNow()
	s.mu.RUnlock()
	s.batcher = newBatcher(s, h.clock, lastNow)
	go s.batcher.run()
	if s.store != nil {
		s.stopSync, s.syncDone = make(chan struct{}), make(chan struct{})
		go s.syncLoop()
	}
	return s, nil
}

// waitReady polls until the node leads (a single voter elects itself after
// one election timeout) and then waits on a barrier, so that every entry in
// the log has been applied before Open returns.
func (s *Shard) waitReady() error {
	deadline := time.Now().Add(30 * time.Second)
	for s.raft.State() != raft.Leader {
		if time.Now().After(deadline) {
			return errors.New("raft did not elect this node leader within 30s")
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.raft.Barrier(0).Error(); err != nil {
		return fmt.Errorf("replay the log: %w", err)
	}
	return nil
}

// Propose proposes a write and waits for its outcome: the engine's result
// (an engine error such as NOGROUP is returned as the error), or a
// replication error (MisconfError, OutcomeUnknownError, ErrShuttingDown,
// ErrNoLeader). A nil error means the write is in the log (fsynced under
// FsyncAlways) and applied.
func (s *Shard) Propose(cmd wire.Command) (any, error) { return s.ProposeAsync(cmd).Wait() }

// ProposeAsync queues a write and returns at once. Writes enter the log in
// call order, so a connection that issues a pipeline's writes before waiting
// on any gets them applied in order and shares fsyncs among them.
func (s *Shard) ProposeAsync(cmd wire.Command) *Pending { return s.batcher.add(cmd) }

// Query answers a read from the local state at the wall clock's time (the
// keyspace clamps it to its own clock, so a read never sees a key a write
// already treated as expired).
func (s *Shard) Query(q wire.Query) (any, error) {
	now := s.clock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.Query(q, now)
}

// LogStore returns the log store in use (LogStoreWAL or LogStoreBolt; "" for
// an in-memory shard).
func (s *Shard) LogStore() string {
	if s.store == nil {
		return ""
	}
	return s.opts.LogStore
}

// NodeMaxEntries returns the keyspace's stream-node-max-entries (CONFIG GET).
func (s *Shard) NodeMaxEntries() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.NodeMaxEntries()
}

// NodeMaxBytes returns the keyspace's stream-node-max-bytes (CONFIG GET).
func (s *Shard) NodeMaxBytes() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.NodeMaxBytes()
}

// Save takes a snapshot now (SAVE, BGSAVE, shutdown) and truncates the log
// behind it; it returns when the snapshot is on disk. With nothing applied
// since the last snapshot it succeeds at once.
func (s *Shard) Save() error {
	err := s.raft.Snapshot().Error()
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
		s.fsyncMu.Unlock()
	}
}

// writeBlocked returns the MISCONF error that refuses writes after a failed
// everysec sync, or nil.
func (s *Shard) writeBlocked() error {
	if p := s.syncErr.Load(); p != nil {
		return &MisconfError{Cause: *p}
	}
	return nil
}

// lastWriteErr returns the last log write failure not yet followed by a
// successful write (nil if none).
func (s *Shard) lastWriteErr() error {
	if p := s.writeErr.Load(); p != nil {
		return *p
	}
	return nil
}

// noteApplyError records a failed raft apply if it was the log store's.
func (s *Shard) noteApplyError(err error) {
	if isWriteError(err) {
		s.writeErr.Store(&err)
		s.stats.writeErrors.Add(1)
		s.opts.Logger.Error("log write failed; the write was not acknowledged", "err", err)
	}
}

// noteWriteOK clears the last write error after a successful write.
func (s *Shard) noteWriteOK() {
	if s.writeErr.Load() != nil {
		s.writeErr.Store(nil)
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
		AppliedIndex:   s.raft.AppliedIndex(),
		LastLogIndex:   s.raft.LastIndex(),
	}
	if err := s.lastWriteErr(); err != nil {
		st.LastWriteErr = err.Error()
	} else if err := s.writeBlocked(); err != nil {
		st.LastWriteErr = errors.Unwrap(err).Error()
	}
	var snapIdx uint64
	fmt.Sscan(s.raft.Stats()["last_snapshot_index"], &snapIdx)
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

// Ready reports why the shard cannot take writes now ("" when it can): it
// is shut down, or this node does not lead its Raft group (the cluster issue
// adds followers; a single node leads from Open until Close).
func (s *Shard) Ready() string {
	switch st := s.raft.State(); st {
	case raft.Leader:
		return ""
	case raft.Shutdown:
		return "shard closed"
	default:
		return "shard has no leader here (raft " + strings.ToLower(st.String()) + ")"
	}
}

// Close shuts the shard down: it stops accepting proposals (they fail with
// ErrShuttingDown), lets every queued and in-flight proposal finish, takes a
// snapshot if save is set, shuts raft down, syncs and closes the log and
// releases the directory lock. Calling it again returns the first result.
func (s *Shard) Close(save bool) error {
	s.closeOnce.Do(func() {
		var errs []error
		s.batcher.close()
		if save {
			if err := s.Save(); err != nil {
				errs = append(errs, err)
			}
		}
		if err := s.raft.Shutdown().Error(); err != nil {
			errs = append(errs, fmt.Errorf("shut raft down: %w", err))
		}
		if s.store != nil {
			close(s.stopSync)
			<-s.syncDone
			if err := s.store.Sync(); err != nil {
				errs = append(errs, &MisconfError{Cause: err})
			}
			if err := s.store.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		if err := s.lock.release(); err != nil {
			errs = append(errs, err)
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// slogWriter turns hclog's lines (raft's logger) into slog records.
type slogWriter struct{ log *slog.Logger }

// Write logs one line.
func (w slogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	switch {
	case strings.Contains(line, "heartbeat timeout reached, starting election"):
		// Expected once per start: a single voter elects itself.
		w.log.Debug(line)
	case strings.Contains(line, "[ERROR]"):
		w.log.Error(line)
	default:
		w.log.Warn(line)
	}
	return len(p), nil
}

var _ io.Writer = slogWriter{}
