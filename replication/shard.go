// Package replication is where writes are proposed: a Shard owns a keyspace
// behind a hashicorp/raft group — a single-node group by default, or one
// member of a multi-node group when Options.Transport is set (the Node, one
// Shard per slot range, wires that up). Every write is stamped with the
// proposer's clock, packed with other concurrent writes into one log entry
// (batcher.go), made durable in <dir>/wal/ or <dir>/raft.db (package
// logstore), as Options.LogStore says, committed by a majority and
// applied by the FSM (fsm.go) to the keyspace; the log is truncated behind
// snapshots in <dir>/snapshots. Reads never go through the log: on a
// cluster's leader they follow VerifyRead (readindex.go); membership,
// leadership and Info are in cluster_shard.go.
package replication

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"streamd/replication/logstore"
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
// commands) between automatic snapshots of a single node; a cluster's
// entries hold up to 512, so it snapshots every 2048.
const DefaultSnapshotThreshold = 8192

// trailingLogs is how many entries stay in the log behind a snapshot: a
// single node replays nothing before its snapshot, so only a few are kept.
const trailingLogs = 16

// clusterTrailingLogs is the default in a cluster: a follower that fell
// less than this far behind catches up from the log instead of installing
// a snapshot.
const clusterTrailingLogs = 10240

// DefaultQuorumTimeout bounds a write's commit when Options.QuorumTimeout is
// zero: a write raft has not committed by then gets an OutcomeUnknownError.
const DefaultQuorumTimeout = 5 * time.Second

// Timing is raft's failure-detection timing. A zero field takes the
// default: 20ms each for a single node (it only ever elects itself); in a
// cluster Heartbeat 1s, Election 1s, LeaderLease 500ms.
type Timing struct {
	// Heartbeat is how long a follower waits without hearing from a leader
	// before it starts an election (raft's HeartbeatTimeout).
	Heartbeat time.Duration
	// Election is how long a candidate waits for votes (ElectionTimeout).
	Election time.Duration
	// LeaderLease is how long a leader keeps leading without hearing from
	// a majority (LeaderLeaseTimeout; at most Heartbeat).
	LeaderLease time.Duration
}

// Member is one server of a shard's Raft configuration.
type Member struct {
	// ID is the raft server ID (the node ID).
	ID string
	// RaftAddr is its raft transport address (host:port).
	RaftAddr string
	// Voter is false for a non-voting member.
	Voter bool
}

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

	// NodeID is this server's raft ID ("" = "streamd", the single node).
	NodeID string
	// Transport is the raft transport to the other members. nil runs the
	// single-node shard of before the cluster: an in-memory transport,
	// self-bootstrap when the directory is empty, and Open waits until
	// the node leads and has applied its log.
	Transport raft.Transport
	// Bootstrap, with Transport set, lists the voters (self included) a
	// new shard (no state on disk) bootstraps with. nil starts a new shard
	// empty, to be added to an existing group by its leader (join). Ignored
	// when the directory already holds state.
	Bootstrap []Member
	// Timing is raft's timing (zero fields = defaults, see Timing).
	Timing Timing
	// QuorumTimeout bounds a write's commit (0 = DefaultQuorumTimeout): a
	// write not committed by then fails with OutcomeUnknownError.
	QuorumTimeout time.Duration
	// OnLeader, if set, is called when this node gains (true) or loses
	// (false) leadership of the shard: on its own goroutine, in order,
	// never concurrently. A gain is reported only once the new leader has
	// applied everything committed before it (a raft barrier); Close
	// reports a loss if a gain was the last thing reported.
	OnLeader func(leader bool)
	// TrailingLogs is how many log entries stay behind a snapshot (0 = 16
	// for a single node, 10240 in a cluster).
	TrailingLogs uint64
}

// Log store names (Options.LogStore, the log-store config directive): the
// kinds of package logstore.
const (
	// LogStoreBolt keeps the log in one bbolt file, <dir>/raft.db: two
	// fsyncs per append, a CRC-32C per record.
	LogStoreBolt = logstore.Bolt
	// LogStoreWAL keeps the log in hashicorp/raft-wal segment files under
	// <dir>/wal/: one fsync per append, a CRC-32C per append batch.
	LogStoreWAL = logstore.WAL
)

// DefaultLogStore is the log store used when Options.LogStore is empty.
const DefaultLogStore = logstore.Default

// ParseLogStore checks a log-store name ("bolt" or "wal"; "" means
// DefaultLogStore) and returns it in canonical form.
func ParseLogStore(s string) (string, error) { return logstore.ParseKind(s) }

// FsyncStats is a snapshot of a shard's fsync latency histogram (see
// logstore.FsyncStats).
type FsyncStats = logstore.FsyncStats

// Shard owns one keyspace behind a Raft log (single node, or one member of
// a group). Writes go through Propose/ProposeAsync (log order = call order;
// on a follower they fail fast with *NotLeaderError), reads through Query
// under the read lock (after VerifyRead for a linearizable read in a
// cluster). It is safe for concurrent use.
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
	// store is the on-disk log, holding the directory's lock (nil in
	// memory).
	store logstore.Store
	// storePath names the log for messages (raft.db or the wal directory).
	storePath string

	fsync     atomic.Int32 // FsyncPolicy
	fsyncMu   sync.Mutex   // serialises SetFsync
	writeErr  atomic.Pointer[error]
	syncErr   atomic.Pointer[error] // last failed everysec sync, until one succeeds
	stats     shardStats
	stopSync  chan struct{}
	syncDone  chan struct{}
	closeOnce sync.Once
	closeErr  error

	// clustered is set when Options.Transport was given.
	clustered     bool
	quorumTimeout time.Duration
	snaps         raft.SnapshotStore
	lead          leadership
	reads         readCoalescer
	// applied is the index of the last log entry whose effect the keyspace
	// holds (last command/configuration entry applied, or the snapshot
	// restored); written under mu's write lock. appliedMu/appliedCh
	// wake WaitApplied when it moves.
	applied        atomic.Uint64
	appliedMu      sync.Mutex
	appliedCh      chan struct{}
	appliedWaiters atomic.Int32
	// logs is raft's log store (WaitApplied reads entry types from it).
	logs raft.LogStore
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
	// progressEvery replaces replayProgressEvery (0 = keep it).
	progressEvery time.Duration
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

// Open starts a shard. With a data directory it takes <dir>/LOCK and opens
// the log (logstore.Open checks the log store's files), then
// checks what it will load — the newest snapshot (raft's CRC and the
// snapshot's own checksum) and every log entry after it — and refuses to
// start, naming the file and what is wrong, rather than start empty or
// partial. Without a Transport it returns once the node leads its group and
// has applied its whole log; with one, once raft has started (leadership
// is reported through IsLeader and OnLeader).
func Open(opts Options) (*Shard, error) { return open(opts, hooks{}) }

func open(opts Options, h hooks) (_ *Shard, err error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SnapshotThreshold == 0 {
		opts.SnapshotThreshold = DefaultSnapshotThreshold
		if opts.Transport != nil {
			// Entries hold up to clusterMaxBatch commands: snapshot
			// after about as many commands as a single node does.
			opts.SnapshotThreshold = DefaultSnapshotThreshold * maxBatch / clusterMaxBatch
		}
	}
	if h.clock == nil {
		h.clock = wallClock
	}
	if opts.NodeID == "" {
		opts.NodeID = "streamd"
	}
	s := &Shard{ks: state.New(), opts: opts, clock: h.clock, clustered: opts.Transport != nil,
		quorumTimeout: opts.QuorumTimeout, appliedCh: make(chan struct{})}
	if s.quorumTimeout <= 0 {
		s.quorumTimeout = DefaultQuorumTimeout
	}
	s.fsync.Store(int32(opts.Fsync))
	s.fsm = &fsm{s: s}
	s.stats.lastSaveUnix = time.Now().Unix()
	s.stats.lastSaveOK = true
	hlog := hclog.New(&hclog.LoggerOptions{
		Name: "raft", Level: hclog.Warn, DisableTime: true,
		Output: slogWriter{log: opts.Logger, clustered: opts.Transport != nil},
	})

	var (
		logs   raft.LogStore
		stable raft.StableStore
		snaps  raft.SnapshotStore
	)
	defer func() {
		if err != nil && s.store != nil {
			s.store.Close()
		}
	}()
	if opts.Dir == "" {
		mem := raft.NewInmemStore()
		logs, stable, snaps = mem, mem, raft.NewInmemSnapshotStore()
	} else {
		s.store, err = logstore.Open(opts.Dir, logstore.Options{
			Kind: opts.LogStore, NoSync: opts.Fsync == FsyncEverySec, RaftLog: hlog, Log: opts.Logger,
			NewestSnapshot: func() string { return newestSnapshot(opts.Dir) },
		})
		if err != nil {
			return nil, err
		}
		s.opts.LogStore = s.store.Kind() // the store chosen, for LogStore()
		s.storePath = s.store.Path()
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

	s.snaps, s.logs = snaps, logs
	conf := s.raftConfig(hlog)
	// Buffered and drained by the leadership goroutine at once: raft
	// blocks on this channel.
	notify := make(chan bool, 16)
	conf.NotifyCh = notify
	trans := opts.Transport
	var addr raft.ServerAddress
	if trans == nil {
		addr, trans = raft.NewInmemTransport(raft.ServerAddress(conf.LocalID))
	}
	exists, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return nil, err
	}
	var boot *raft.Configuration
	switch {
	case exists:
	case !s.clustered:
		boot = &raft.Configuration{Servers: []raft.Server{{ID: conf.LocalID, Address: addr}}}
	case opts.Bootstrap != nil:
		boot = &raft.Configuration{}
		for _, m := range opts.Bootstrap {
			sv := raft.Server{ID: raft.ServerID(m.ID), Address: raft.ServerAddress(m.RaftAddr), Suffrage: raft.Voter}
			if !m.Voter {
				sv.Suffrage = raft.Nonvoter
			}
			boot.Servers = append(boot.Servers, sv)
		}
	}
	if boot != nil {
		if err := raft.BootstrapCluster(conf, logs, stable, snaps, trans, *boot); err != nil {
			return nil, fmt.Errorf("bootstrap raft: %w", err)
		}
	}
	s.lead.start(notify)
	if s.raft, err = raft.NewRaft(conf, s.fsm, logs, stable, snaps, trans); err != nil {
		s.lead.stop(nil)
		return nil, fmt.Errorf("start raft: %w", err)
	}
	go s.lead.run(s)
	every := h.progressEvery
	if every <= 0 {
		every = replayProgressEvery
	}
	if s.clustered {
		// A member replays its log once it learns what is committed
		// (from the leader, or by winning an election): report it in
		// the background until it has caught up.
		go s.reportClusterReplay(every)
	} else {
		stop := s.reportReplay(every)
		err := s.waitReady()
		stop()
		if err != nil {
			s.raft.Shutdown()
			s.lead.stop(nil)
			return nil, err
		}
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
	// The leadership goroutine runs its own barrier before it marks the
	// shard ready (IsLeader); that one follows ours at once.
	for !s.IsLeader() {
		if time.Now().After(deadline) {
			return errors.New("raft did not report this node ready to lead within 30s")
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// reportClusterReplay reports a cluster member's start-up replay (see
// reportReplay) until it has applied its whole log, or everything its
// leader says is committed, or the shard closes.
func (s *Shard) reportClusterReplay(every time.Duration) {
	stop := s.reportReplay(every)
	defer stop()
	target := s.raft.LastIndex()
	for {
		applied := s.applied.Load()
		if applied >= target || s.raft.State() == raft.Shutdown {
			return
		}
		if addr, _ := s.raft.LeaderWithID(); addr != "" {
			if c := s.raft.CommitIndex(); c > 0 && applied >= c {
				return // the rest of the local log was never committed
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replayProgressEvery is how often a single node's start-up replay of its
// log reports progress; a replay shorter than that reports nothing.
const replayProgressEvery = time.Second

// reportReplay logs, every `every` until the returned stop is called, how
// far the start-up replay of the log after the restored snapshot has got:
// "replaying: applied X of Y entries (Z/s), ETA Ns". If it logged any such
// line, stop logs the total time taken.
func (s *Shard) reportReplay(every time.Duration) (stop func()) {
	base, last := s.applied.Load(), s.raft.LastIndex()
	if last <= base {
		return func() {}
	}
	total := last - base
	start := time.Now()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		logged := false
		for {
			select {
			case <-done:
				if logged {
					s.opts.Logger.Info(fmt.Sprintf("replayed %d log entries in %.1fs", total, time.Since(start).Seconds()))
				}
				return
			case <-tick.C:
			}
			var n uint64
			if cur := s.applied.Load(); cur > base {
				n = min(cur-base, total)
			}
			rate := float64(n) / time.Since(start).Seconds()
			eta := "unknown"
			if rate > 0 {
				eta = strconv.FormatFloat(float64(total-n)/rate, 'f', 0, 64) + "s"
			}
			s.opts.Logger.Info(fmt.Sprintf("replaying: applied %d of %d entries (%.0f/s), ETA %s", n, total, rate, eta))
			logged = true
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// raftConfig returns raft's configuration for the options: today's fast
// single-voter timing without a transport, cluster defaults with one.
func (s *Shard) raftConfig(hlog hclog.Logger) *raft.Config {
	// One voter, no network: the node elects itself one election timeout
	// after start, and the lease check (every LeaderLeaseTimeout on an
	// idle leader) can only count itself. Short timeouts make Open fast;
	// 20ms keeps an idle shard's wake-ups low.
	def := Timing{Heartbeat: 20 * time.Millisecond, Election: 20 * time.Millisecond, LeaderLease: 20 * time.Millisecond}
	trailing := uint64(trailingLogs)
	if s.clustered {
		def = Timing{Heartbeat: time.Second, Election: time.Second, LeaderLease: 500 * time.Millisecond}
		trailing = clusterTrailingLogs
	}
	t := s.opts.Timing
	if t.Heartbeat <= 0 {
		t.Heartbeat = def.Heartbeat
	}
	if t.Election <= 0 {
		t.Election = def.Election
	}
	if t.LeaderLease <= 0 {
		t.LeaderLease = min(def.LeaderLease, t.Heartbeat)
	}
	if s.opts.TrailingLogs > 0 {
		trailing = s.opts.TrailingLogs
	}
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(s.opts.NodeID)
	conf.HeartbeatTimeout = t.Heartbeat
	conf.ElectionTimeout = t.Election
	conf.LeaderLeaseTimeout = t.LeaderLease
	conf.CommitTimeout = 5 * time.Millisecond
	conf.BatchApplyCh = true
	conf.MaxAppendEntries = 64
	conf.SnapshotThreshold = s.opts.SnapshotThreshold
	conf.SnapshotInterval = 10 * time.Second
	conf.TrailingLogs = trailing
	conf.Logger = hlog
	return conf
}

// Propose proposes a write and waits for its outcome: the engine's result
// (an engine error such as NOGROUP is returned as the error), or a
// replication error (MisconfError, OutcomeUnknownError — also when raft
// has not committed it within the quorum timeout —, ErrShuttingDown,
// ErrNoLeader on a single node, *NotLeaderError in a cluster). A nil error
// means the write is in a majority's log (fsynced under FsyncAlways) and
// applied here.
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

// Dir returns the shard's data directory ("" in memory).
func (s *Shard) Dir() string { return s.opts.Dir }

// StorePath returns where the shard's log lives: dir/wal or dir/raft.db
// ("" in memory).
func (s *Shard) StorePath() string { return s.storePath }

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

// FsyncStats returns the shard's fsync latency histogram; ok is false for
// an in-memory shard (no log on disk, nothing fsynced).
func (s *Shard) FsyncStats() (st FsyncStats, ok bool) {
	if s.store == nil {
		return FsyncStats{}, false
	}
	return s.store.FsyncStats(), true
}

// MetricsStats answers q (streams, groups and memory figures for /metrics)
// from the local state at the wall clock's time, under the read lock like
// Query. It is not a wire.Query: it is never logged, never forwarded and
// never part of a transaction.
func (s *Shard) MetricsStats(q wire.MetricsQuery) *state.MetricsStats {
	now := s.clock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.MetricsStats(q, now)
}

// Ready reports why the shard cannot take writes now ("" when it can): it
// is shut down, or this node does not lead its Raft group (a single node
// leads from Open until Close; in a cluster, see also IsLeader).
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
// ErrShuttingDown), lets every queued and in-flight proposal finish (each
// within the quorum timeout), takes a snapshot if save is set, shuts raft
// down, syncs and closes the log and releases the directory lock. It does
// not hand leadership to another member first (the Node decides that).
// Calling it again returns the first result.
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
		s.lead.stop(s.opts.OnLeader)
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
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// slogWriter turns hclog's lines (raft's logger) into slog records.
// Raft logs routine cluster events (a follower catching up, a leadership
// change) at WARN or ERROR; those go out at INFO so that warnings and errors
// in streamd's log mean something needs a look.
type slogWriter struct {
	log       *slog.Logger
	clustered bool
}

// routineRaftLines are raft messages about normal cluster operation.
var routineRaftLines = []string{
	"appendEntries rejected, sending older logs", // a follower joined or lagged
	"peer has newer term, stopping replication",  // after an election or a transfer
	"failed to get log, sending snapshot",        // a far-behind follower
}

// Write logs one line.
func (w slogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	switch {
	case strings.Contains(line, "heartbeat timeout reached, starting election") && !w.clustered:
		// Expected once per start: a single voter elects itself.
		w.log.Debug(line)
	case slices.ContainsFunc(routineRaftLines, func(s string) bool { return strings.Contains(line, s) }):
		w.log.Info(line)
	case strings.Contains(line, "[ERROR]"):
		w.log.Error(line)
	default:
		w.log.Warn(line)
	}
	return len(p), nil
}

var _ io.Writer = slogWriter{}
