package replication

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"streamd/replication/logstore"
	"streamd/replication/state"
	"streamd/replication/wire"
)

// Open-time validation (issue #3 "Faults"): before raft starts, everything
// it will load is read and checked, so that a damaged data directory is
// refused with a message naming the file and the problem. raft itself
// would skip a snapshot whose metadata it cannot read and fall back to an
// older snapshot whose state does not check, which would silently start
// from an older state; validate prevents both. The log store's own files
// are checked (and repaired) by logstore.Open, its entries by its Verify.

// keyCurrentTerm is the stable-store key raft keeps its term under.
var keyCurrentTerm = []byte("CurrentTerm")

// snapshotDirMeta is raft's meta.json (FileSnapshotStore's fileSnapshotMeta).
type snapshotDirMeta struct {
	raft.SnapshotMeta
	CRC []byte
}

// validate checks the newest snapshot in dir/snapshots and every log entry
// after it in store. It returns the decoded snapshot (nil if there is none)
// for the FSM to restore without decoding it again.
func validate(dir string, store logstore.Store, fss raft.SnapshotStore, log *slog.Logger, every time.Duration) (*state.Keyspace, error) {
	var partial []string
	metas, err := readSnapshotMetas(filepath.Join(dir, "snapshots"), &partial)
	if err != nil {
		return nil, err
	}
	var ks *state.Keyspace
	var snapIdx uint64
	if len(metas) > 0 {
		m := metas[0]
		// raft writes its term to the log database before any snapshot
		// exists: a snapshot without it means raft.db was lost or replaced,
		// and with it every entry after the snapshot.
		if v, err := store.Get(keyCurrentTerm); err != nil || len(v) == 0 {
			return nil, corruptError(store.StablePath(), "has no raft state but snapshot %s exists: the log was lost or replaced, so the writes after that snapshot are missing", m.ID)
		}
		snapIdx = m.Index
		statePath := filepath.Join(dir, "snapshots", m.ID, "state.bin")
		meta, rc, err := fss.Open(m.ID)
		if err != nil {
			return nil, corruptError(statePath, "cannot load snapshot %s: %v", m.ID, err)
		}
		r, done := loadingSnapshot(log, m.ID, meta.Size, rc, every)
		ks, err = state.ReadSnapshot(r)
		done()
		rc.Close()
		if err != nil {
			return nil, corruptError(statePath, "cannot load snapshot %s: %v", m.ID, err)
		}
	}
	if snapIdx == 0 && joiningMarked(dir) {
		if last, err := store.LastIndex(); err == nil && last == 0 {
			return nil, nil // never a member yet (shard_join.go)
		}
	}
	if err := store.Verify(snapIdx, decodeEntry); err != nil {
		if len(partial) > 0 {
			err = fmt.Errorf("%w (and %s is missing)", err, strings.Join(partial, ", "))
		}
		return nil, err
	}
	return ks, nil
}

// decodeEntry checks that a command entry's data decodes (the log stores'
// Verify calls it on every entry after the snapshot), without keeping the
// decoded commands: raft's replay decodes them again.
func decodeEntry(data []byte) error { return wire.CheckEntry(data) }

// newestSnapshot returns the ID of the newest finished snapshot in dir
// ("" if none, or if the snapshots cannot be read: validate reports that).
func newestSnapshot(dir string) string {
	metas, err := readSnapshotMetas(filepath.Join(dir, "snapshots"), nil)
	if err != nil || len(metas) == 0 {
		return ""
	}
	return metas[0].ID
}

// readSnapshotMetas reads every finished snapshot's meta.json in snapDir
// (directories named *.tmp are snapshots that were being written when the
// process stopped; raft ignores them, so do we; a directory without a
// meta.json is listed in partial) and returns them newest first, in raft's
// order (term, index, id).
func readSnapshotMetas(snapDir string, partial *[]string) ([]snapshotDirMeta, error) {
	ents, err := os.ReadDir(snapDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var metas []snapshotDirMeta
	for _, e := range ents {
		if !e.IsDir() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		path := filepath.Join(snapDir, e.Name(), "meta.json")
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			// raft writes meta.json before it renames a snapshot into
			// place, so a directory without one was never a finished
			// snapshot: an old snapshot whose removal (raft's reaping)
			// a crash cut short. raft skips it; so do we. Were it the
			// newest snapshot damaged instead, the log would not continue
			// the older one and validate refuses with both named.
			if partial != nil {
				*partial = append(*partial, path)
			}
			continue
		}
		if err != nil {
			return nil, corruptError(path, "cannot read snapshot metadata: %v", err)
		}
		var m snapshotDirMeta
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, corruptError(path, "snapshot metadata does not parse: %v", err)
		}
		if m.ID != e.Name() {
			return nil, corruptError(path, "snapshot metadata names %q, not its directory %q", m.ID, e.Name())
		}
		metas = append(metas, m)
	}
	sort.Slice(metas, func(i, j int) bool {
		a, b := metas[i], metas[j]
		if a.Term != b.Term {
			return a.Term > b.Term
		}
		if a.Index != b.Index {
			return a.Index > b.Index
		}
		return a.ID > b.ID
	})
	return metas, nil
}
