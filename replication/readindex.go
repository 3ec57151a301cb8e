package replication

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// readRound is one VerifyLeader round that callers wait on together.
type readRound struct {
	done chan struct{}
	err  error
}

// readCoalescer shares raft's VerifyLeader among concurrent readers: at
// most one round is in flight; callers that arrive while it is join the
// next round, which starts when it ends. A round that began before a caller
// arrived proves nothing about leadership after the caller's read began, so
// nobody joins a round already under way.
type readCoalescer struct {
	mu       sync.Mutex
	inflight *readRound
	next     *readRound
}

// verifyLeader waits for a leadership confirmation round that started after
// the call (within the quorum timeout).
func (s *Shard) verifyLeader() error {
	c := &s.reads
	c.mu.Lock()
	var r *readRound
	if c.inflight == nil {
		r = &readRound{done: make(chan struct{})}
		c.inflight = r
		go s.runReadRounds(r)
	} else {
		if c.next == nil {
			c.next = &readRound{done: make(chan struct{})}
		}
		r = c.next
	}
	c.mu.Unlock()
	t := time.NewTimer(s.quorumTimeout)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
		// No majority answered: this node cannot tell whether it still
		// leads, so it must not serve the read.
		return &NotLeaderError{}
	}
	switch err := r.err; {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrShuttingDown
	default:
		return s.notLeader()
	}
}

// runReadRounds runs r, then each round queued meanwhile, until none is.
func (s *Shard) runReadRounds(r *readRound) {
	c := &s.reads
	for r != nil {
		// Raft leaves a VerifyLeader queued at its shutdown unanswered.
		err, _ := awaitFuture(s.raft.VerifyLeader(), s.lead.quit)
		c.mu.Lock()
		r.err = err
		close(r.done)
		r, c.next = c.next, nil
		c.inflight = r
		c.mu.Unlock()
	}
}

// VerifyRead is the linearizable read point on the leader: it captures the
// commit index, confirms with a majority that this node still leads (one
// coalesced round for the callers that arrived before it started), and
// waits until the state holds every entry up to the captured index. A
// shard with a single voter answers at once. A non-leader gets
// *NotLeaderError.
func (s *Shard) VerifyRead() error {
	_, err := s.readIndex(true)
	return err
}

// ReadIndex returns, on the leader, the commit index captured at the call
// once leadership is confirmed as for VerifyRead (without waiting for the
// leader's own state to apply it): a follower that has applied up to it
// can serve a linearizable read. A non-leader gets *NotLeaderError.
func (s *Shard) ReadIndex() (uint64, error) { return s.readIndex(false) }

func (s *Shard) readIndex(apply bool) (uint64, error) {
	if !s.IsLeader() {
		if s.view().State() == raft.Shutdown {
			return 0, ErrShuttingDown
		}
		return 0, s.notLeader()
	}
	idx := s.view().CommitIndex()
	if !s.clustered || s.voters() <= 1 {
		// The only voter: nobody else can lead, and every acknowledged
		// write is applied here before it is acknowledged.
		return idx, nil
	}
	if err := s.verifyLeader(); err != nil {
		return 0, err
	}
	if apply {
		if err := s.WaitApplied(idx, s.quorumTimeout); err != nil {
			return 0, err
		}
	}
	return idx, nil
}

// WaitApplied waits until this node's state holds every log entry up to
// index (a follower serving a read at the leader's ReadIndex), or fails
// after timeout.
func (s *Shard) WaitApplied(index uint64, timeout time.Duration) error {
	if s.appliedCovers(index) {
		return nil
	}
	s.appliedWaiters.Add(1)
	defer s.appliedWaiters.Add(-1)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	// Entries the state machine never sees (raft's no-ops and barriers)
	// move raft's applied index without a wake-up: poll for those.
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		s.appliedMu.Lock()
		ch := s.appliedCh
		s.appliedMu.Unlock()
		if s.appliedCovers(index) {
			return nil
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			if s.view().State() == raft.Shutdown {
				return ErrShuttingDown
			}
			return fmt.Errorf("TRYAGAIN this node has not applied the log up to index %d within %v", index, timeout)
		}
	}
}

// NudgeReplicas has the leader tell its followers the commit index now
// rather than at its next idle send (Timing.Commit, 50 ms by default): it
// issues a barrier, whose append carries the index, unless one it issued
// is still out. WAIT, and a follower's read index when the follower has
// not applied that far, call it, so that the replicas apply a write within
// a round trip even when no other write follows it. A no-op off the leader
// and on a single node.
func (s *Shard) NudgeReplicas() {
	if !s.clustered || !s.IsLeader() || !s.nudging.CompareAndSwap(false, true) {
		return
	}
	f := s.raft.Barrier(s.quorumTimeout)
	go func() {
		f.Error()
		s.nudging.Store(false)
	}()
}

// appliedCovers reports whether the keyspace holds every entry up to index.
// s.applied moves only with entries the state machine applies (commands
// and configurations) and restored snapshots; raft's own applied index also
// counts no-ops and barriers but is advanced before the state machine has
// applied what it dispatched. So: covered if s.applied ≥ index, or raft
// dispatched up to index and no command or configuration entry lies
// between s.applied and index.
func (s *Shard) appliedCovers(index uint64) bool {
	applied := s.applied.Load()
	if applied >= index {
		return true
	}
	if s.view().AppliedIndex() < index || s.logs == nil {
		return false
	}
	var l raft.Log
	for i := index; i > applied; i-- {
		if err := s.logs.GetLog(i, &l); err != nil {
			// Compacted behind a snapshot the state would already hold
			// it (s.applied ≥ index above); any other failure proves
			// nothing: not covered (the caller waits for more applies
			// or its bound).
			return false
		}
		if l.Type == raft.LogCommand || l.Type == raft.LogConfiguration {
			return s.applied.Load() >= i
		}
	}
	return true
}

// noteApplied records the index of the last entry the state machine
// applied (under the shard's write lock) and wakes WaitApplied callers.
func (s *Shard) noteApplied(index uint64) {
	s.applied.Store(index)
	if s.appliedWaiters.Load() > 0 {
		s.appliedMu.Lock()
		close(s.appliedCh)
		s.appliedCh = make(chan struct{})
		s.appliedMu.Unlock()
	}
}
