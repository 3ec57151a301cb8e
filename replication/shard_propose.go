package replication

import (
	"streamd/replication/state"
	"streamd/replication/wire"
)

// Writes (proposals through the batcher) and reads of a shard, and the
// log write errors that turn proposals into MISCONF replies.

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
//
// While the shard's leadership is being transferred (Transferring), a write
// is not proposed: it fails at once with ErrTransferInProgress, so it was
// certainly not applied and may be sent to the new leader.
func (s *Shard) ProposeAsync(cmd wire.Command) *Pending {
	if s.transferring.Load() {
		return failedPending(ErrTransferInProgress)
	}
	return s.batcher.add(cmd)
}

// ProposeAsyncMany is ProposeAsync of each of cmds in order, out[i]
// receiving cmds[i]'s handle (len(out) >= len(cmds)): a pipeline's writes
// queued together, under one hold of the batcher's lock and in one
// allocation.
func (s *Shard) ProposeAsyncMany(cmds []wire.Command, out []*Pending) {
	s.proposeMany(cmds, out, false)
}

// QueueMany is ProposeAsyncMany for a caller that is about to Wait on the
// writes (an event loop's turn): on a single node the first Wait sends
// them, from the caller's goroutine, together with whatever else is
// queued, so the batcher goroutine is not woken for them. In a cluster it
// is ProposeAsyncMany.
func (s *Shard) QueueMany(cmds []wire.Command, out []*Pending) {
	s.proposeMany(cmds, out, true)
}

// proposeMany queues cmds (see addMany for quiet), or fails them at once
// while a leadership transfer runs.
func (s *Shard) proposeMany(cmds []wire.Command, out []*Pending, quiet bool) {
	if s.transferring.Load() {
		for i := range cmds {
			out[i] = failedPending(ErrTransferInProgress)
		}
		return
	}
	s.batcher.addMany(cmds, out, quiet)
}

// Query answers a read from the local state at the wall clock's time (the
// keyspace clamps it to its own clock, so a read never sees a key a write
// already treated as expired).
func (s *Shard) Query(q wire.Query) (any, error) {
	now := s.clock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.Query(q, now)
}

// writeBlocked returns the MISCONF error that refuses writes after a failed
// everysec sync, or on a local single node after a failed append until the
// log takes one again (localLog.probe); nil if none.
func (s *Shard) writeBlocked() error {
	if s.local != nil {
		if p := s.local.failed.Load(); p != nil {
			return &MisconfError{Cause: *p}
		}
	}
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
		if ok, n := s.writeErrLog.Allow(); ok {
			s.opts.Logger.Error("log write failed; the write was not acknowledged", "err", err, "more", n)
		}
	}
}

// noteWriteOK clears the last write error after a successful write.
func (s *Shard) noteWriteOK() {
	if s.writeErr.Load() != nil {
		s.writeErr.Store(nil)
	}
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
