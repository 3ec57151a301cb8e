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
// leadership and Info are in cluster_shard.go. A Shard's options are in
// shard_options.go, its start-up in shard_open.go, writes and reads in
// shard_propose.go, SAVE, appendfsync and Stats in shard_persist.go.
//
// A Node (node.go) holds one Shard per slot range: node_open.go opens them
// (clustered, over one raft port: package internal/mux), node_membership.go
// changes membership at each shard's leader, node_peers.go knows the other
// nodes, node_reads.go serves followers' linearizable reads, and rpc.go
// carries the node RPCs between them.
package replication

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"streamd/internal/lograte"
	"streamd/replication/logstore"
	"streamd/replication/state"
)

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

	// keepLevel: never raise the engine level (hooks.keepLevel, tests).
	keepLevel bool

	opts  Options
	clock func() int64
	raft  *raft.Raft
	// local is a single node's log once raft has handed it over (nil in
	// a cluster, and while a single node opens): local.go.
	local   *localLog
	fsm     *fsm
	batcher *batcher
	// store is the on-disk log, holding the directory's lock (nil in
	// memory).
	store logstore.Store
	// storePath names the log for messages (raft.db or the wal directory).
	storePath string

	// writeErrLog limits the "log write failed" lines (one per refused
	// write) to one every repeatedLogEvery.
	writeErrLog *lograte.Limiter

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
	clustered bool
	// joining is set while the shard waits for its first entry as a
	// node being added (shard_join.go: the JOINING marker).
	joining atomic.Bool
	// transferring is set while TransferLeadership hands the shard's
	// leadership to another member: writes are refused unproposed
	// (ErrTransferInProgress), so their outcome is certain.
	transferring atomic.Bool
	// existed: raft state was on disk when the shard opened (before any
	// bootstrap).
	existed bool
	// nudging is set while a barrier NudgeReplicas issued is out.
	nudging       atomic.Bool
	quorumTimeout time.Duration
	// electionTimeout is raft's ElectionTimeout (LeaderUnreachable's bound).
	electionTimeout time.Duration
	snaps           raft.SnapshotStore
	lead            leadership
	reads           readCoalescer
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
	// durable wraps it to answer ACKLEVEL LEADER XADDs once stored; acks
	// assigns their IDs (acklevel.go).
	durable *durableLogs
	// proposed holds the commands of this node's entries in flight, which
	// its FSM applies without decoding them (proposed.go).
	proposed proposedEntries
	// sent holds the batches of this node's entries in flight, which its
	// FSM finishes as it applies them (settle_early.go).
	sent sentBatches
	acks ackTracker
	// progressEvery is how often loading a snapshot logs its progress
	// (0: snapshotProgressEvery).
	progressEvery time.Duration

	// aclVersion changes when the ACL users may have changed; aclHooks
	// are told (shard_acl.go).
	aclVersion atomic.Uint64
	aclHookMu  sync.Mutex
	aclHooks   []func()
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
	// keepLevel makes the shard act as a release before engine levels:
	// it never proposes wire.EngineLevel (see raiseLevel).
	keepLevel bool
	// raftWrites keeps a single node's writes going through raft (no
	// goLocal): tests of raft's own path on one node.
	raftWrites bool
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

// IDMPDefaults returns the keyspace's stream-idmp-duration and
// stream-idmp-maxsize (CONFIG GET).
func (s *Shard) IDMPDefaults() (durationS, maxSize int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.IDMPDefaults()
}

// IDMPExpiring returns up to count keys of database db, from cursor in
// SCAN order, holding XADD IDMP iids expired by this node's clock, and the
// cursor to go on from (0 at the end): the expiry sweep's query.
func (s *Shard) IDMPExpiring(db int, cursor uint64, count int) ([]string, uint64) {
	now := s.clock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.IDMPExpiring(db, cursor, count, max(now, s.ks.LastNow()))
}

// Ready reports why the shard cannot take writes now ("" when it can): it
// is shut down, or this node does not lead its Raft group (a single node
// leads from Open until Close; in a cluster, see also IsLeader).
func (s *Shard) Ready() string {
	switch st := s.view().State(); st {
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
		if s.local != nil {
			s.local.close() // raft was shut down at Open (goLocal)
		} else if err := s.raft.Shutdown().Error(); err != nil {
			errs = append(errs, fmt.Errorf("shut raft down: %w", err))
		}
		if hs, ok := s.opts.Transport.(heartbeatStopper); ok {
			hs.stopHeartbeats() // before the store closes (heartbeat_guard.go)
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

// KeyspaceCounters returns the keyspace's hit/miss/expired counters (INFO
// stats); they outlive snapshot restores.
func (s *Shard) KeyspaceCounters() *state.Counters {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.Counters()
}
