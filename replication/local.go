package replication

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"streamd/replication/wire"
)

// A single node's write path (issue #16). Raft replays the log when a
// single node opens and leads its one-voter group; from then on its leader
// loop and FSM goroutine only add hand-offs to every write — there is
// nobody to replicate to and nothing to elect. So once the replay is done
// (Open, after waitReady) the shard shuts raft down and goes local: each
// batch is appended to the same log store, as the same raft.Log entry
// (index, the term raft left, LogCommand, the same encoding), and applied
// by the same FSM code, on the goroutine that sends it (the batcher's, or
// a connection's that waits on it: Pending.Wait), before anyone is
// answered. Snapshots are taken the way raft takes them (same store, same
// metadata, log compacted behind them). The log on disk is exactly what
// raft would have written: the next start replays it with raft as before,
// and a node that later runs with a transport finds an ordinary raft log.
//
// A clustered shard never goes local.

// localLog is a single node's log once raft has handed it over: what raft
// would know, and the snapshots it takes.
type localLog struct {
	s *Shard
	// term is raft's current term when it shut down: every entry
	// appended here carries it (raft's next start elects itself at a
	// later term and commits them).
	term uint64
	// next is the index of the next entry; owned by the batcher's sender
	// (the sending flag).
	next uint64
	// last is next-1, readable without the sender; applied is the last
	// entry applied (raft's AppliedIndex: it counts raft's no-ops too).
	last, applied atomic.Uint64
	// leaderAddr and leaderID are this node, as raft named its leader.
	leaderAddr raft.ServerAddress
	leaderID   raft.ServerID
	// conf and confIndex are the latest configuration and its entry's
	// index (a snapshot's metadata carries them).
	conf      raft.Configuration
	confIndex uint64
	trans     raft.Transport
	threshold uint64 // entries between automatic snapshots
	trailing  uint64 // entries kept behind a snapshot
	closed    atomic.Bool
	// snapMu holds one snapshot at a time; snapIndex/snapTerm describe
	// the newest; snapping is set while an automatic one runs.
	snapMu              sync.Mutex
	snapIndex, snapTerm atomic.Uint64
	snapping            atomic.Bool
	// failed is the error of the last failed append, until a later one
	// succeeds: writes are refused (writeBlocked: MISCONF) meanwhile,
	// and probe tries a no-op entry every probeEvery to find out, as
	// Redis retries a failed AOF write from its cron. probing is set
	// while it runs.
	failed  atomic.Pointer[error]
	probing atomic.Bool
	stop    chan struct{} // closed by close
	// bg counts the goroutines close waits for (snapshots, probe).
	bg sync.WaitGroup
}

// probeEvery is how often a local node whose last append failed tries the
// log again.
const probeEvery = 100 * time.Millisecond

// goLocal hands the log over from raft, which has replayed it and leads
// (waitReady): it reads what raft knows, stops the leadership goroutines
// (leaving the shard reported as leading), shuts raft down and sets
// s.local. Nothing proposes yet: the batcher starts afterwards.
func (s *Shard) goLocal(trans raft.Transport, trailing uint64) error {
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return err
	}
	l := &localLog{s: s, term: s.raft.CurrentTerm(), conf: cf.Configuration(), stop: make(chan struct{}),
		trans: trans, threshold: s.opts.SnapshotThreshold, trailing: trailing}
	l.leaderAddr, l.leaderID = s.raft.LeaderWithID()
	s.lead.halt()
	if err := s.raft.Shutdown().Error(); err != nil {
		return err
	}
	// After the shutdown: raft may have taken a snapshot meanwhile.
	if metas, err := s.snaps.List(); err == nil && len(metas) > 0 {
		l.snapIndex.Store(metas[0].Index)
		l.snapTerm.Store(metas[0].Term)
	}
	last, err := s.logs.LastIndex()
	if err != nil {
		return err
	}
	if l.confIndex, err = s.configurationIndex(last); err != nil {
		return err
	}
	l.next = last + 1
	l.last.Store(last)
	l.applied.Store(last) // waitReady's barrier: raft applied it all
	s.local = l
	return nil
}

// localTake is the most writes a local sender takes off the queue at once:
// they go to the log in entries of up to maxBatch commands, all written by
// one StoreLogs (one fsync), as raft's leader writes the entries queued
// while it was busy.
const localTake = 64 * maxBatch

// configurationIndex returns the index of the latest configuration: the
// last configuration entry in the log up to last, else the newest
// snapshot's (raft's GetConfiguration does not tell it, and a snapshot
// must carry it: raft restores a configuration at index 0 as none).
func (s *Shard) configurationIndex(last uint64) (uint64, error) {
	first, err := s.logs.FirstIndex()
	if err != nil {
		return 0, err
	}
	var entry raft.Log
	for i := last; i >= first && i > 0; i-- {
		if err := s.logs.GetLog(i, &entry); err != nil {
			return 0, fmt.Errorf("read log entry %d: %w", i, err)
		}
		if entry.Type == raft.LogConfiguration {
			return i, nil
		}
	}
	if metas, err := s.snaps.List(); err == nil && len(metas) > 0 {
		return metas[0].ConfigurationIndex, nil
	}
	return 0, errors.New("no configuration in the log nor in a snapshot")
}

// sendLocal appends a batch's entries to the log and applies them (the
// batcher's sender, see batcher.send): its writes are answered once their
// entries are in the log as the fsync policy says, and applied. A failed
// append answers every write with the error (MISCONF) and applies nothing;
// its indexes are reused by the next append, as raft does.
func (b *batcher) sendLocal(batch []*Pending, now int64) {
	s, l := b.s, b.s.local
	n := (len(batch) + maxBatch - 1) / maxBatch
	logs := make([]*raft.Log, n)
	entries := make([]wire.Entry, n)
	appended := time.Now()
	for i := range n {
		part := batch[i*maxBatch : min(len(batch), (i+1)*maxBatch)]
		e := wire.Entry{NowMs: now, Cmds: make([]wire.Command, len(part))}
		for j, p := range part {
			e.Cmds[j] = p.cmd
		}
		entries[i] = e
		logs[i] = &raft.Log{Index: l.next + uint64(i), Term: l.term, Type: raft.LogCommand, Data: e.Append(nil), AppendedAt: appended}
	}
	s.stats.batches.Add(int64(n))
	s.stats.proposals.Add(int64(len(batch)))
	if err := s.logs.StoreLogs(logs); err != nil {
		s.noteApplyError(err)
		l.fail(err)
		b.finish(batch, nil, nil, 0, s.proposalError(err))
		return
	}
	last := logs[n-1].Index
	l.next = last + 1
	l.last.Store(last)
	s.noteWriteOK()
	out := s.fsm.applyEntries(logs, entries)
	l.applied.Store(last)
	for i, lg := range logs {
		part := batch[i*maxBatch : min(len(batch), (i+1)*maxBatch)]
		b.answer(part, out[i].([]wire.Outcome), lg.Index, nil)
	}
	b.mu.Lock()
	b.inflight--
	b.wakeLocked()
	b.mu.Unlock()
	if last-l.snapIndex.Load() >= l.threshold {
		l.snapshotInBackground()
	}
}

// flush sends, from the calling goroutine, the queue up to p (Wait's).
// It stops once p is taken, or when another sender is at work: that one's
// end wakes the batcher goroutine, which sends the rest. So a connection
// that waits on its writes sends them itself, instead of waking the
// batcher and being woken back.
func (b *batcher) flush(p *Pending) {
	b.mu.Lock()
	for !p.taken && !b.sending && len(b.queue) > 0 {
		b.sendTakenLocked()
		b.mu.Lock()
	}
	b.mu.Unlock()
}

// snapshotInBackground starts an automatic snapshot unless one runs.
func (l *localLog) snapshotInBackground() {
	if l.closed.Load() || !l.snapping.CompareAndSwap(false, true) {
		return
	}
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		defer l.snapping.Store(false)
		if err := l.snapshot(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
			l.s.opts.Logger.Warn("automatic snapshot failed", "err", err)
		}
	}()
}

// snapshot captures the keyspace with the index it holds, writes it to the
// snapshot store as raft would (its term, the configuration) and compacts
// the log behind it, keeping the trailing entries raft keeps. Writes go on
// meanwhile; only the capture holds the keyspace's read lock.
func (l *localLog) snapshot() error {
	l.snapMu.Lock()
	defer l.snapMu.Unlock()
	s, f := l.s, l.s.fsm
	s.mu.RLock()
	index := s.applied.Load()
	if index <= l.snapIndex.Load() {
		s.mu.RUnlock()
		return raft.ErrNothingNewToSnapshot
	}
	ks := s.ks.Clone()
	changes := f.changes.Load()
	s.mu.RUnlock()
	f.snapBase.Store(f.logBytes.Load())
	var entry raft.Log
	if err := s.logs.GetLog(index, &entry); err != nil {
		return err
	}
	sink, err := s.snaps.Create(raft.SnapshotVersionMax, index, entry.Term, l.conf, l.confIndex, l.trans)
	if err != nil {
		return err
	}
	if err := (&fsmSnapshot{f: f, ks: ks, changes: changes}).Persist(sink); err != nil {
		return err
	}
	l.snapIndex.Store(index)
	l.snapTerm.Store(entry.Term)
	return l.compact(index)
}

// compact deletes the log up to the snapshot at index, keeping the last
// trailing entries (raft's compactLogs).
func (l *localLog) compact(index uint64) error {
	first, err := l.s.logs.FirstIndex()
	if err != nil {
		return err
	}
	last := l.last.Load()
	if last <= l.trailing {
		return nil
	}
	upTo := min(index, last-l.trailing)
	if first == 0 || first > upTo {
		return nil
	}
	return l.s.logs.DeleteRange(first, upTo)
}

// close ends the local log: no more automatic snapshots nor probes; waits
// for those running.
func (l *localLog) close() {
	if l.closed.CompareAndSwap(false, true) {
		close(l.stop)
	}
	l.bg.Wait()
}

// fail refuses writes after a failed append until the log takes one
// again: it records err and starts the probe.
func (l *localLog) fail(err error) {
	l.failed.Store(&err)
	if l.closed.Load() || !l.probing.CompareAndSwap(false, true) {
		return
	}
	l.bg.Add(1)
	go l.probe()
}

// probe appends a no-op entry every probeEvery until one succeeds (writes
// are accepted again) or the shard closes.
func (l *localLog) probe() {
	defer l.bg.Done()
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			l.probing.Store(false)
			return
		case <-t.C:
		}
		if err := l.s.batcher.appendNoop(); err != nil {
			l.failed.Store(&err)
			continue
		}
		// Done probing before writes are let through: a write that
		// fails next starts a probe of its own.
		l.probing.Store(false)
		l.failed.Store(nil)
		l.s.noteWriteOK()
		return
	}
}

// appendNoop appends a raft no-op entry (the FSM ignores it, as it ignores
// those raft appends at each election), as the sender.
func (b *batcher) appendNoop() error {
	b.mu.Lock()
	b.noopWaiting++
	for b.sending {
		b.cond.Wait()
	}
	b.noopWaiting--
	b.sending = true
	b.mu.Unlock()
	l := b.s.local
	e := &raft.Log{Index: l.next, Term: l.term, Type: raft.LogNoop, AppendedAt: time.Now()}
	err := b.s.logs.StoreLogs([]*raft.Log{e})
	if err == nil {
		l.next++
		l.last.Store(e.Index)
		l.applied.Store(e.Index)
	}
	b.mu.Lock()
	b.sending = false
	b.wakeLocked()
	b.mu.Unlock()
	return err
}

// raftView is what the shard asks raft about its state: raft itself, or a
// single node's localLog once raft has handed the log over (view).
type raftView interface {
	State() raft.RaftState
	CurrentTerm() uint64
	CommitIndex() uint64
	AppliedIndex() uint64
	LastIndex() uint64
	LeaderWithID() (raft.ServerAddress, raft.ServerID)
	GetConfiguration() raft.ConfigurationFuture
	Stats() map[string]string
	Snapshot() raft.SnapshotFuture
}

// view returns the shard's raftView.
func (s *Shard) view() raftView {
	if s.local != nil {
		return s.local
	}
	return s.raft
}

// State is Leader until the shard closes, then Shutdown.
func (l *localLog) State() raft.RaftState {
	if l.closed.Load() {
		return raft.Shutdown
	}
	return raft.Leader
}

// CurrentTerm is the term raft left (every local entry's).
func (l *localLog) CurrentTerm() uint64 { return l.term }

// CommitIndex is the last entry in the log: an entry is committed once
// stored (the only voter holds it), and applied before anyone is answered.
func (l *localLog) CommitIndex() uint64 { return l.last.Load() }

// AppliedIndex is the last entry applied.
func (l *localLog) AppliedIndex() uint64 { return l.applied.Load() }

// LastIndex is the last entry in the log.
func (l *localLog) LastIndex() uint64 { return l.last.Load() }

// LeaderWithID names this node while it runs, as raft did.
func (l *localLog) LeaderWithID() (raft.ServerAddress, raft.ServerID) {
	if l.closed.Load() {
		return "", ""
	}
	return l.leaderAddr, l.leaderID
}

// GetConfiguration returns the configuration raft left.
func (l *localLog) GetConfiguration() raft.ConfigurationFuture {
	return &localConfFuture{conf: l.conf.Clone(), index: l.confIndex}
}

// Stats returns the figures of raft's Stats the shard reads.
func (l *localLog) Stats() map[string]string {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	return map[string]string{
		"state":                      l.State().String(),
		"term":                       u(l.term),
		"last_log_index":             u(l.last.Load()),
		"commit_index":               u(l.last.Load()),
		"applied_index":              u(l.applied.Load()),
		"last_snapshot_index":        u(l.snapIndex.Load()),
		"last_snapshot_term":         u(l.snapTerm.Load()),
		"latest_configuration_index": u(l.confIndex),
		"num_peers":                  "0",
	}
}

// Snapshot takes a snapshot now (Save), as raft's Snapshot would.
func (l *localLog) Snapshot() raft.SnapshotFuture {
	if l.closed.Load() {
		return &localSnapFuture{err: raft.ErrRaftShutdown}
	}
	return &localSnapFuture{err: l.snapshot()}
}

// localConfFuture is GetConfiguration's answer, known at once.
type localConfFuture struct {
	conf  raft.Configuration
	index uint64
}

func (f *localConfFuture) Error() error                      { return nil }
func (f *localConfFuture) Index() uint64                     { return f.index }
func (f *localConfFuture) Configuration() raft.Configuration { return f.conf }

// localSnapFuture is Snapshot's answer, known once it returns.
type localSnapFuture struct{ err error }

func (f *localSnapFuture) Error() error { return f.err }

// Open is not offered: nothing in the shard reads a snapshot back this way.
func (f *localSnapFuture) Open() (*raft.SnapshotMeta, io.ReadCloser, error) {
	return nil, nil, errors.New("replication: a local snapshot is read from the snapshot store")
}
