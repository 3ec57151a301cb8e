package replication

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// The error texts a proposal can fail with, besides the engine's own replies.
// Each Error() is the exact Redis-style reply text, code first.
var (
	// ErrShuttingDown is returned for proposals made after Close began, or
	// cut off because raft shut down before they were committed.
	ErrShuttingDown = errors.New("ERR server is shutting down")
	// ErrNoLeader is returned when the log had no leader to append to (a
	// single node is briefly a follower after a failed log write, until it
	// elects itself again). The write was not applied.
	ErrNoLeader = errors.New("TRYAGAIN the log has no leader at the moment; the write was not applied")
	// ErrTransferInProgress is returned for a write proposed while this node
	// hands the shard's leadership to another (RAFT TRANSFER, the leader
	// balancer, a graceful shutdown). The write was not applied.
	ErrTransferInProgress = errors.New("TRYAGAIN leadership of the shard is being transferred; the write was not applied")
	// ErrLogBusy is returned for a write raft did not take into its queue
	// within the quorum timeout (the log is stalled, e.g. a disk that
	// stopped answering). The write was not applied.
	ErrLogBusy = errors.New("TRYAGAIN the log did not take the write within the quorum timeout; the write was not applied")
)

// MisconfError is a failed log write or fsync: the write was not
// acknowledged. Its text mirrors Redis's reply when its AOF cannot be
// written ("MISCONF Errors writing to the AOF file: ...").
type MisconfError struct{ Cause error }

// Error returns "MISCONF Errors writing to the log: <cause>".
func (e *MisconfError) Error() string {
	return "MISCONF Errors writing to the log: " + e.Cause.Error()
}

// Unwrap returns the underlying write error.
func (e *MisconfError) Unwrap() error { return e.Cause }

// OutcomeUnknownError is returned when a write was handed to raft but raft
// could not say whether it was committed: leadership was lost between the
// append and the commit (for example a later log write failed and the node
// stepped down). The entry may still be applied once the node leads again,
// so the client must not assume either outcome — never reported as OK.
type OutcomeUnknownError struct{ Cause error }

// Error returns "ERR outcome unknown: <cause>; the write may or may not have
// been applied".
func (e *OutcomeUnknownError) Error() string {
	return "ERR outcome unknown: " + e.Cause.Error() + "; the write may or may not have been applied"
}

// Unwrap returns raft's error.
func (e *OutcomeUnknownError) Unwrap() error { return e.Cause }

// proposalError maps the error of a resolved raft apply future to the
// reply the proposer gets. lastWriteErr is the most recent log write
// failure, if any (used when raft refused the entry because the node stepped
// down after that failure).
func proposalError(err, lastWriteErr error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrShuttingDown
	case errors.Is(err, raft.ErrLeadershipTransferInProgress):
		// Raft refuses new entries while it hands leadership over, before
		// appending them.
		return ErrTransferInProgress
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrAbortedByRestore):
		return &OutcomeUnknownError{Cause: err}
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return ErrLogBusy
	case errors.Is(err, raft.ErrNotLeader):
		if lastWriteErr != nil {
			return &MisconfError{Cause: lastWriteErr}
		}
		return ErrNoLeader
	}
	// Anything else is the log store's own error, delivered by raft's
	// dispatchLogs when StoreLogs failed: nothing was written.
	return &MisconfError{Cause: err}
}

// corruptError names a data file and what is wrong with it (Open refuses
// to start on it).
func corruptError(file string, format string, args ...any) error {
	return fmt.Errorf("%s: %s", file, fmt.Sprintf(format, args...))
}

// NotLeaderError is a proposal or a linearizable read refused because this
// node does not lead the shard's Raft group: another node leads it
// (LeaderID/LeaderAddr name it) or, with both empty, no leader is known
// (an election is under way, or no majority is reachable). Nothing was
// applied: the client may retry, at the leader.
type NotLeaderError struct {
	// LeaderID and LeaderAddr are the leader's raft server ID and raft
	// address ("" when unknown).
	LeaderID, LeaderAddr string
}

// Error returns "TRYAGAIN this node does not lead the shard (leader <id> at
// <addr>); the write was not applied" when the leader is known, else
// "CLUSTERDOWN The cluster is down: the shard has no leader".
func (e *NotLeaderError) Error() string {
	if e.LeaderID == "" && e.LeaderAddr == "" {
		return "CLUSTERDOWN The cluster is down: the shard has no leader"
	}
	return "TRYAGAIN this node does not lead the shard (leader " + e.LeaderID + " at " + e.LeaderAddr +
		"); the write was not applied"
}

// notLeader returns the NotLeaderError naming the leader raft knows now.
func (s *Shard) notLeader() *NotLeaderError {
	addr, id := s.view().LeaderWithID()
	if st := s.view().State(); st == raft.Leader || st == raft.Shutdown {
		// Leading but not ready yet (barrier pending), or closed: no
		// other node to send the client to.
		addr, id = "", ""
	}
	return &NotLeaderError{LeaderID: string(id), LeaderAddr: string(addr)}
}

// proposalError maps a resolved raft apply error for this shard: a
// clustered shard reports "not the leader" as *NotLeaderError (the client
// should go to the leader); a single node keeps proposalError's mapping.
func (s *Shard) proposalError(err error) error {
	if s.clustered && err != nil && errors.Is(err, raft.ErrNotLeader) {
		return s.notLeader()
	}
	return proposalError(err, s.lastWriteErr())
}
