package replication

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"streamd/internal/lograte"
	"streamd/replication/logstore"
	"streamd/replication/state"
)

// Opening a shard: the log store, start-up validation, raft, and the
// report of the log replay; raft's log lines routed to slog.

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
	if opts.SnapshotLogSize == 0 {
		opts.SnapshotLogSize = DefaultSnapshotLogSize
	}
	if h.clock == nil {
		h.clock = wallClock
	}
	if opts.NodeID == "" {
		opts.NodeID = "streamd"
	}
	s := &Shard{ks: state.New(), opts: opts, clock: h.clock, keepLevel: h.keepLevel, clustered: opts.Transport != nil,
		quorumTimeout: opts.QuorumTimeout, appliedCh: make(chan struct{}), writeErrLog: lograte.New(repeatedLogEvery)}
	if s.quorumTimeout <= 0 {
		s.quorumTimeout = DefaultQuorumTimeout
	}
	s.fsync.Store(int32(opts.Fsync))
	s.fsm = &fsm{s: s}
	s.stats.lastSaveUnix = time.Now().Unix()
	s.stats.lastSaveOK = true
	hlog := newRaftLogger(opts.Logger, "raft", opts.Transport != nil)

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
		fss, err := openSnapStore(opts.Dir, hlog, opts.Logger)
		if err != nil {
			return nil, err
		}
		s.progressEvery = h.progressEvery
		if s.fsm.preloaded, err = validate(opts.Dir, s.store, fss, opts.Logger, h.progressEvery); err != nil {
			return nil, err
		}
		logs, stable, snaps = s.store, s.store, fss
	}
	if h.wrapLogs != nil {
		logs = h.wrapLogs(logs)
	}
	s.durable = newDurableLogs(logs)
	logs = s.durable

	s.snaps, s.logs = snaps, logs
	conf := s.raftConfig(hlog)
	s.electionTimeout = conf.ElectionTimeout
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
	if s.clustered && s.store != nil {
		joining := false
		if joining, exists, err = s.prepareJoin(logs, stable, snaps, exists); err != nil {
			return nil, err
		}
		s.joining.Store(joining)
	}
	s.existed = exists
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
	s.fsm.raftSet.Store(true)
	go s.lead.run(s)
	every := h.progressEvery
	if every <= 0 {
		every = replayProgressEvery
	}
	// A fresh log holds only the bootstrap configuration (or nothing):
	// there is nothing to replay, so nothing to report.
	switch {
	case s.clustered && exists:
		// A member replays its log once it learns what is committed
		// (from the leader, or by winning an election): report it in
		// the background until it has caught up.
		go s.reportClusterReplay(every)
	case !s.clustered:
		stop := func() {}
		if exists {
			stop = s.reportReplay(every)
		}
		err := s.waitReady()
		stop()
		if err != nil && s.store != nil {
			if werr := s.store.LastWriteError(); werr != nil {
				// Raft steps down after a failed log write, so it
				// reports "not the leader": say what failed instead.
				err = fmt.Errorf("cannot write to the log, so the shard cannot start: %w", werr)
			}
		}
		if err == nil && !h.raftWrites {
			err = s.goLocal(trans, conf.TrailingLogs)
		}
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
	// CommitTimeout is how long a leader with nothing new to send waits
	// before telling its followers the commit index again: at 5 ms an
	// idle three-node cluster used ~10% of a core on its leader and ~3%
	// on each follower, sending them empty appends. At raft's 50 ms it
	// costs ~2% and ~1%; WAIT and a follower's read index, which wait
	// for followers to apply, have the leader send at once instead
	// (Shard.NudgeReplicas).
	conf.CommitTimeout = clusterCommitTimeout
	if t.Commit > 0 {
		conf.CommitTimeout = t.Commit
	}
	conf.BatchApplyCh = true
	conf.MaxAppendEntries = 64
	conf.SnapshotThreshold = s.opts.SnapshotThreshold
	conf.SnapshotInterval = 10 * time.Second
	conf.TrailingLogs = trailing
	conf.Logger = hlog
	return conf
}
