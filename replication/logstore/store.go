// Package logstore owns a shard's on-disk Raft log: the two log stores
// behind raft's LogStore and StableStore — hashicorp/raft-wal segment files
// in <dir>/wal/ (walstore.go; the default, one fsync per append) and one
// bbolt file, <dir>/raft.db (boltstore.go; a CRC-32C per record, two fsyncs
// per commit) —, their start-up checks and repairs (walstore_check.go,
// walstore_repair.go, boltstore_check.go: a damaged file is refused with
// its name and the problem), appendfsync everysec underneath each store,
// the fsync latency histogram (fsync_stats.go) and the data directory's
// LOCK (lock.go). Open is the one entry point.
//
// It knows nothing of what the entries hold: Verify takes the decoder of
// command entries from its caller (replication), and the snapshots beside
// the log are replication's.
package logstore

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/metadb"
)

// Log store kinds (Options.Kind, the log-store config directive).
const (
	// Bolt keeps the log in one bbolt file, <dir>/raft.db
	// (boltstore.go): two fsyncs per append, a CRC-32C per record.
	Bolt = "bolt"
	// WAL keeps the log in hashicorp/raft-wal segment files under
	// <dir>/wal/ (walstore.go): one fsync per append, a CRC-32C per append
	// batch, checked at Open by checkWALFiles.
	WAL = "wal"
)

// Default is the kind used when Options.Kind is empty and the data
// directory holds no log yet.
const Default = WAL

// ParseKind checks a log-store name ("bolt" or "wal"; "" means Default)
// and returns it in canonical form.
func ParseKind(s string) (string, error) {
	switch s {
	case "":
		return Default, nil
	case Bolt, WAL:
		return s, nil
	}
	return "", fmt.Errorf("invalid log store %q (want bolt or wal)", s)
}

// Store is a shard's on-disk log: raft's LogStore and StableStore plus the
// appendfsync switch, the start-up check of the entries, and the fsync
// statistics. It is safe for concurrent use, as raft requires.
type Store interface {
	raft.LogStore
	raft.StableStore
	// SetNoSync switches fsync-per-append off (true) or on (false).
	SetNoSync(noSync bool)
	// Sync makes everything written so far durable.
	Sync() error
	// Close closes the store's files and releases the data directory's
	// lock.
	Close() error
	// Kind returns Bolt or WAL.
	Kind() string
	// Path returns where the log lives: <dir>/wal or <dir>/raft.db.
	Path() string
	// StablePath names the file holding raft's stable keys (its term).
	StablePath() string
	// FsyncStats returns the store's fsync latency histogram.
	FsyncStats() FsyncStats
	// LastWriteError returns the last failed write (an append, a
	// truncation, a stable key), nil once a later write succeeded: why
	// raft could not lead, when it could not.
	LastWriteError() error
	// Verify checks that the log continues a snapshot ending at snapIdx
	// (0: no snapshot) without a gap and that every entry after it reads;
	// decode is called on the data of each command entry after it, and an
	// error from it is reported as the entry not decoding. Errors name the
	// file.
	Verify(snapIdx uint64, decode func(data []byte) error) error
}

// Options configures Open.
type Options struct {
	// Kind is the store to open: Bolt, WAL, or "" for the one the data
	// directory holds (Default for a new directory). Naming the other
	// store than the one a directory holds is refused.
	Kind string
	// NoSync opens the store with fsync-per-append off (appendfsync
	// everysec; the caller syncs).
	NoSync bool
	// RaftLog is raft's logger; raft-wal logs under it as "wal" (nil: no
	// logging).
	RaftLog hclog.Logger
	// Log receives the lines of the start-up repairs (nil: slog.Default()).
	Log *slog.Logger
	// NewestSnapshot, if set, returns the ID of the newest finished
	// snapshot in the data directory ("" if none). With Kind "" and no log
	// of either kind, a snapshot means the log was lost: Open refuses.
	NewestSnapshot func() string
}

// Open opens the log in the data directory dir (created if missing): it
// takes <dir>/LOCK (held until Close), chooses the store (Options.Kind
// checked against what dir holds), checks its files — and repairs what
// walstore_repair.go repairs — and opens it. A damaged file is refused with
// an error naming it.
func Open(dir string, o Options) (_ Store, err error) {
	if o.RaftLog == nil {
		o.RaftLog = hclog.NewNullLogger()
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.release()
		}
	}()
	kind, err := chooseLogStore(dir, o.Kind, o.NewestSnapshot)
	if err != nil {
		return nil, err
	}
	if kind == WAL {
		w, err := openWALStoreSafe(WALDir(dir), o.NoSync, o.RaftLog, o.Log)
		if err != nil {
			return nil, err
		}
		w.lock = lock
		return w, nil
	}
	b, err := openBoltStoreSafe(filepath.Join(dir, "raft.db"), o.NoSync)
	if err != nil {
		return nil, diskFullHint(dir, err)
	}
	b.lock = lock
	return b, nil
}

// WALDir returns the wal store's directory inside the data directory.
func WALDir(dataDir string) string { return filepath.Join(dataDir, "wal") }

// chooseLogStore returns the log store to open in dataDir: the one asked
// for, checked against what the directory already holds (a bolt log in
// raft.db, a wal log in wal/), or with want == "" the one it holds
// (Default for a new directory). Opening the other store would start
// from an empty log beside the real one. newestSnapshot (may be nil) names
// the newest snapshot, if any.
func chooseLogStore(dataDir, want string, newestSnapshot func() string) (string, error) {
	explicit := want != ""
	want, err := ParseKind(want)
	if err != nil {
		return "", err
	}
	_, boltErr := os.Stat(filepath.Join(dataDir, "raft.db"))
	_, walErr := os.Stat(filepath.Join(WALDir(dataDir), metadb.FileName))
	hasBolt, hasWAL := boltErr == nil, walErr == nil
	switch {
	case hasBolt && hasWAL:
		return "", fmt.Errorf("data directory %s holds both a bolt log (raft.db) and a wal log (wal/): remove the one not in use", dataDir)
	case explicit && hasBolt && want != Bolt:
		return "", fmt.Errorf("data directory %s holds a bolt log (raft.db), not a wal log: start with log-store bolt", dataDir)
	case explicit && hasWAL && want != WAL:
		return "", fmt.Errorf("data directory %s holds a wal log (wal/), not a bolt log: start with log-store wal", dataDir)
	case hasBolt:
		return Bolt, nil
	case hasWAL:
		return WAL, nil
	}
	if !explicit && newestSnapshot != nil {
		// No log of either kind beside a snapshot: whichever it was, it is
		// gone, and with it every write after the snapshot.
		if id := newestSnapshot(); id != "" {
			return "", corruptError(filepath.Join(dataDir, "raft.db"), "missing, and no wal log in %s either, but snapshot %s exists: the log was lost or replaced, so the writes after that snapshot are missing",
				WALDir(dataDir), id)
		}
	}
	return want, nil
}

// lastErr holds a store's last failed write (nil after a success).
type lastErr struct{ p atomic.Pointer[error] }

// note records the outcome of a write.
func (l *lastErr) note(err error) {
	if err != nil {
		l.p.Store(&err)
	} else if l.p.Load() != nil {
		l.p.Store(nil)
	}
}

// get returns the last failed write's error, or nil.
func (l *lastErr) get() error {
	if p := l.p.Load(); p != nil {
		return *p
	}
	return nil
}

// keyCurrentTerm is the stable-store key raft keeps its term under.
var keyCurrentTerm = []byte("CurrentTerm")

// corruptError names a data file and what is wrong with it (Open refuses
// to start on it).
func corruptError(file string, format string, args ...any) error {
	return fmt.Errorf("%s: %s", file, fmt.Sprintf(format, args...))
}
