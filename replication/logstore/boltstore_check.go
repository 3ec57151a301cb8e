package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"runtime/debug"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// The bolt store's start-up checks: the file's length against its own
// metadata before bbolt maps it, and (Verify) every record after the
// snapshot. bbolt panics or faults on some damaged pages; both are reported
// as corruption of the file, naming it.

// Verify checks the database's pages (bbolt's Tx.Check), that the log
// continues the snapshot at snapIdx without a gap and that every entry
// after it reads (record checksum) and, for command entries, decodes. bbolt panics on some damaged pages; that is
// reported as corruption of the file too.
func (store *boltStore) Verify(snapIdx uint64, decode func(data []byte) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = corruptError(store.path, "damaged database: %v", r)
		}
	}()
	return store.db.View(func(tx *bolt.Tx) error {
		// bbolt's own consistency check visits every page (the entries
		// before the snapshot and the stable store's too): a damaged
		// branch page that the loop below would not read still makes
		// raft's first write panic inside bbolt.
		// Drained to the end: the check's goroutine reads the
		// transaction until it closes the channel.
		var damage error
		for err := range tx.Check() {
			if damage == nil {
				damage = err
			}
		}
		if damage != nil {
			return corruptError(store.path, "damaged database: %v", damage)
		}
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
				if err := decode(l.Data); err != nil {
					return corruptError(store.path, "log entry %d does not decode: %v", idx, err)
				}
			}
		}
		return nil
	})
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
