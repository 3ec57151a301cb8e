package replication

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"streamd/replication/logstore"
)

// Shard options: the fsync policy, raft timing, membership, and the log
// store names of package logstore.

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

// DefaultSnapshotLogSize is Options.SnapshotLogSize's default: a snapshot
// after 64 MiB of log entries (the log-store's segment size).
const DefaultSnapshotLogSize = 64 << 20

// trailingLogs is how many entries stay in the log behind a snapshot: a
// single node replays nothing before its snapshot, so only a few are kept.
const trailingLogs = 16

// clusterTrailingLogs is the default in a cluster: a follower that fell
// less than this far behind catches up from the log instead of installing
// a snapshot.
const clusterTrailingLogs = 10240

// clusterCommitTimeout is raft's CommitTimeout unless Timing.Commit is set
// (raftConfig).
const clusterCommitTimeout = 50 * time.Millisecond

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
	// Commit is how long a leader with nothing new to send waits before
	// telling its followers the commit index again (raft's CommitTimeout;
	// default clusterCommitTimeout).
	Commit time.Duration
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
	// SnapshotLogSize snapshots once this many bytes of log entries have
	// been applied since the last snapshot, before SnapshotThreshold
	// entries when entries are large (0 = DefaultSnapshotLogSize; < 0:
	// by entry count only).
	SnapshotLogSize int64
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
