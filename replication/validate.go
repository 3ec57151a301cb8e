package replication

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/metadb"
	bolt "go.etcd.io/bbolt"

	"streamd/replication/state"
	"streamd/replication/wire"
)

// Open-time validation (issue #3 "Faults"): before raft starts, everything
// it will load is read and checked, so that a damaged data directory is
// refused with a message naming the file and the problem. raft itself
// would skip a snapshot whose metadata it cannot read and fall back to an
// older snapshot whose state does not check, which would silently start
// from an older state; validate prevents both.

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
func validate(dir string, store logStore, fss *raft.FileSnapshotStore) (*state.Keyspace, error) {
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
			return nil, corruptError(stableStorePath(store), "has no raft state but snapshot %s exists: the log was lost or replaced, so the writes after that snapshot are missing", m.ID)
		}
		snapIdx = m.Index
		statePath := filepath.Join(dir, "snapshots", m.ID, "state.bin")
		_, rc, err := fss.Open(m.ID)
		if err != nil {
			return nil, corruptError(statePath, "cannot load snapshot %s: %v", m.ID, err)
		}
		ks, err = state.ReadSnapshot(rc)
		rc.Close()
		if err != nil {
			return nil, corruptError(statePath, "cannot load snapshot %s: %v", m.ID, err)
		}
	}
	switch st := store.(type) {
	case *boltStore:
		err = validateLog(st, snapIdx)
	case *walStore:
		err = validateWALLog(st, snapIdx)
	default:
		err = fmt.Errorf("unknown log store %T", store)
	}
	if err != nil {
		if len(partial) > 0 {
			err = fmt.Errorf("%w (and %s is missing)", err, strings.Join(partial, ", "))
		}
		return nil, err
	}
	return ks, nil
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

// validateLog checks that the log continues the snapshot at snapIdx without
// a gap and that every entry after it reads (record checksum) and, for
// command entries, decodes. bbolt panics on some damaged pages; that is
// reported as corruption of the file too.
func validateLog(store *boltStore, snapIdx uint64) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = corruptError(store.path, "damaged database: %v", r)
		}
	}()
	return store.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLogs).Cursor()
		first, _ := c.First()
		if first == nil {
			return nil
		}
		firstIdx := binary.BigEndian.Uint64(first)
		if snapIdx == 0 && firstIdx != 1 {
			return corruptError(store.path, "log starts at entry %d but there is no snapshot before it", firstIdx)
		}
		if firstIdx > snapIdx+1 {
			return corruptError(store.path, "log starts at entry %d but the newest snapshot ends at %d (entries missing)", firstIdx, snapIdx)
		}
		var start [8]byte
		binary.BigEndian.PutUint64(start[:], snapIdx+1)
		want := snapIdx + 1
		for k, v := c.Seek(start[:]); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				return corruptError(store.path, "bad log key %x", k)
			}
			idx := binary.BigEndian.Uint64(k)
			if idx != want {
				return corruptError(store.path, "log entry %d missing (next is %d)", want, idx)
			}
			want++
			var l raft.Log
			if err := decodeLogRecord(idx, v, &l); err != nil {
				return corruptError(store.path, "%v", err)
			}
			if l.Type == raft.LogCommand {
				if _, err := wire.DecodeEntry(l.Data); err != nil {
					return corruptError(store.path, "log entry %d does not decode: %v", idx, err)
				}
			}
		}
		return nil
	})
}

// stableStorePath names the file holding store's raft state.
func stableStorePath(store logStore) string {
	if w, ok := store.(*walStore); ok {
		return filepath.Join(w.dir, metadb.FileName)
	}
	return store.(*boltStore).path
}

// validateWALLog checks that the wal log continues the snapshot at snapIdx
// without a gap and that every entry after it reads and, for command
// entries, decodes. checkWALFiles has already checked every batch's CRC.
func validateWALLog(store *walStore, snapIdx uint64) error {
	first, err := store.FirstIndex()
	if err != nil {
		return corruptError(store.dir, "cannot read the log: %v", err)
	}
	last, err := store.LastIndex()
	if err != nil {
		return corruptError(store.dir, "cannot read the log: %v", err)
	}
	if last == 0 {
		if snapIdx > 0 {
			return corruptError(store.dir, "log is empty but the newest snapshot ends at entry %d (the log was lost or replaced)", snapIdx)
		}
		if v, _ := store.Get(keyCurrentTerm); len(v) != 0 {
			return corruptError(store.dir, "log is empty but raft state exists: the log segments were lost (or the very first start crashed before writing anything; then remove %s)", store.dir)
		}
		return nil
	}
	if snapIdx == 0 && first != 1 {
		return corruptError(store.dir, "log starts at entry %d but there is no snapshot before it", first)
	}
	if first > snapIdx+1 {
		return corruptError(store.dir, "log starts at entry %d but the newest snapshot ends at %d (entries missing)", first, snapIdx)
	}
	for idx := max(first, snapIdx+1); idx <= last; idx++ {
		var l raft.Log
		if err := store.GetLog(idx, &l); err != nil {
			return corruptError(store.dir, "log entry %d does not read: %v", idx, err)
		}
		if l.Index != idx {
			return corruptError(store.dir, "log entry %d reads back as entry %d", idx, l.Index)
		}
		if l.Type == raft.LogCommand {
			if _, err := wire.DecodeEntry(l.Data); err != nil {
				return corruptError(store.dir, "log entry %d does not decode: %v", idx, err)
			}
		}
	}
	return nil
}

// openWALStoreSafe checks (and where walstore_repair.go says, repairs) the
// wal files (checkWALFiles, repairs logged to slog) and opens the store.
func openWALStoreSafe(dir string, noSync bool, log hclog.Logger, logger *slog.Logger) (*walStore, error) {
	if err := checkWALFiles(dir, logger); err != nil {
		return nil, err
	}
	return openWALStore(dir, noSync, log)
}

// openBoltStoreSafe opens raft.db, first checking that the file is as long
// as its own metadata says (bbolt maps the file and would fault reading a
// truncated one), and turning a bbolt panic or memory fault on a damaged
// file into an error naming it.
func openBoltStoreSafe(path string, noSync bool) (s *boltStore, err error) {
	if err := checkBoltSize(path); err != nil {
		return nil, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, corruptError(path, "damaged database: %v", r)
		}
	}()
	s, err = openBoltStore(path, noSync)
	if err != nil {
		return nil, fmt.Errorf("cannot open the log: %w", err)
	}
	return s, nil
}

// checkBoltSize reads bbolt's two meta pages and checks that the file holds
// every page the newest valid one counts (its high-water page id × page
// size). A missing or empty file is a new log. Layout (bbolt's
// common.Meta, after a 16-byte page header): magic u32, version u32,
// pageSize u32, flags u32, root bucket (16 bytes), freelist pgid u64, pgid
// u64, txid u64, checksum u64 (FNV-64a of the preceding 56 bytes), native
// (little-endian) byte order.
func checkBoltSize(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot open the log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("cannot open the log: %w", err)
	}
	size := fi.Size()
	if size == 0 {
		return nil
	}
	const hdr, metaLen = 16, 64
	readMeta := func(off int64) (pageSize uint32, pgid, txid uint64, ok bool) {
		var b [hdr + metaLen]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			return 0, 0, 0, false
		}
		m := b[hdr:]
		le := binary.LittleEndian
		if le.Uint32(m[0:]) != 0xED0CDAED {
			return 0, 0, 0, false
		}
		h := fnv.New64a()
		h.Write(m[:56])
		if h.Sum64() != le.Uint64(m[56:]) {
			return 0, 0, 0, false
		}
		return le.Uint32(m[8:]), le.Uint64(m[40:]), le.Uint64(m[48:]), true
	}
	ps0, pg0, tx0, ok0 := readMeta(0)
	second := int64(os.Getpagesize())
	if ok0 {
		second = int64(ps0)
	}
	ps1, pg1, tx1, ok1 := readMeta(second)
	var ps uint32
	var pgid uint64
	switch {
	case ok0 && (!ok1 || tx0 >= tx1):
		ps, pgid = ps0, pg0
	case ok1:
		ps, pgid = ps1, pg1
	default:
		return corruptError(path, "not a valid log database: both meta pages are damaged (file is %d bytes)", size)
	}
	if need := int64(pgid) * int64(ps); size < need {
		return corruptError(path, "file is truncated: %d bytes, the database needs %d", size, need)
	}
	return nil
}
