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
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrLeadershipTransferInProgress),
		errors.Is(err, raft.ErrAbortedByRestore):
		return &OutcomeUnknownError{Cause: err}
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrEnqueueTimeout):
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
