package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// boltStore is raft's LogStore and StableStore on one bbolt file
// (<dir>/raft.db). It replaces raft-boltdb/v2 for two reasons:
//
//   - appendfsync must be switchable at runtime (CONFIG SET appendfsync):
//     that is bbolt's DB.NoSync, which raft-boltdb keeps behind an
//     unexported field; here every write transaction and the switch share
//     one mutex, so the flag changes between commits, race-free.
//   - every log record carries a CRC-32C, so a flipped bit in raft.db is
//     reported at Open (naming the file and the index) instead of being
//     decoded into a wrong command; records are a small fixed binary layout
//     instead of msgpack.
//
// Buckets: "logs" (8-byte big-endian index → record) and "conf" (stable
// store keys). A record is: crc32c(rest) uint32 BE | version byte | term
// uvarint | type byte | appendedAt unix-ns varint | len(data) uvarint | data
// | len(extensions) uvarint | extensions.
type boltStore struct {
	path string
	db   *bolt.DB
	// wmu serialises write transactions with SetNoSync.
	wmu sync.Mutex
	// hist times each fsync: a committing transaction while NoSync is off
	// (bbolt fsyncs twice inside it) and each Sync (fsync_stats.go).
	hist LatencyHist
	lock *dirLock // nil when opened without Open
	// errs is the last failed write, for LastWriteError.
	errs lastErr
}

// LastWriteError returns the last failed write transaction's error, nil
// once a later one succeeded.
func (s *boltStore) LastWriteError() error { return s.errs.get() }

// FsyncStats returns the histogram of the committing transactions and Syncs.
func (s *boltStore) FsyncStats() FsyncStats { return s.hist.Snapshot() }

// Kind returns Bolt.
func (s *boltStore) Kind() string { return Bolt }

// Path returns the bolt file.
func (s *boltStore) Path() string { return s.path }

// StablePath returns the bolt file, which also holds raft's stable keys.
func (s *boltStore) StablePath() string { return s.path }

var (
	bucketLogs = []byte("logs")
	bucketConf = []byte("conf")
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	// errKeyNotFound is the StableStore's "no such key": raft compares the
	// text "not found" literally (as raft-boltdb returns it).
	errKeyNotFound = errors.New("not found")
)

// logRecordVersion is the version byte of a stored log record.
const logRecordVersion = 1

// openBoltStore opens (creating if needed) the bolt file at path.
func openBoltStore(path string, noSync bool) (*boltStore, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	db.NoSync = noSync
	s := &boltStore{path: path, db: db}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketLogs); err != nil {
			return err
		}
		_, err := tx.CreateBucketIfNotExists(bucketConf)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// update runs a write transaction under wmu.
func (s *boltStore) update(fn func(tx *bolt.Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var err error
	if s.db.NoSync {
		err = s.db.Update(fn)
	} else {
		err = s.hist.time(func() error { return s.db.Update(fn) })
	}
	if err != nil {
		err = diskFullHint(s.path, err)
	}
	s.errs.note(err)
	return err
}

// SetNoSync switches fsync-per-commit off (true) or on (false).
func (s *boltStore) SetNoSync(noSync bool) {
	s.wmu.Lock()
	s.db.NoSync = noSync
	s.wmu.Unlock()
}

// Sync fsyncs the file (the everysec policy calls it once a second).
func (s *boltStore) Sync() error { return s.hist.time(s.db.Sync) }

// Close closes the file, then releases the directory lock.
func (s *boltStore) Close() error { return s.lock.releaseAfter(s.db.Close()) }

// FirstIndex returns the first stored log index, 0 if none.
func (s *boltStore) FirstIndex() (uint64, error) {
	var idx uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketLogs).Cursor().First(); k != nil {
			idx = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return idx, err
}

// LastIndex returns the last stored log index, 0 if none.
func (s *boltStore) LastIndex() (uint64, error) {
	var idx uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketLogs).Cursor().Last(); k != nil {
			idx = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return idx, err
}

// GetLog reads log entry idx into log (raft.ErrLogNotFound if absent).
func (s *boltStore) GetLog(idx uint64, log *raft.Log) error {
	var key [8]byte
	binary.BigEndian.PutUint64(key[:], idx)
	return s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketLogs).Get(key[:])
		if v == nil {
			return raft.ErrLogNotFound
		}
		return decodeLogRecord(idx, v, log)
	})
}

// StoreLog stores one entry.
func (s *boltStore) StoreLog(log *raft.Log) error { return s.StoreLogs([]*raft.Log{log}) }

// StoreLogs stores entries in one transaction (one commit, one fsync pair
// unless NoSync).
func (s *boltStore) StoreLogs(logs []*raft.Log) error {
	return s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLogs)
		var buf []byte
		for _, l := range logs {
			var key [8]byte
			binary.BigEndian.PutUint64(key[:], l.Index)
			// bbolt keeps a reference to the value until commit: each
			// record gets its own slice.
			buf = appendLogRecord(nil, l)
			if err := b.Put(key[:], buf); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteRange deletes entries min..max inclusive.
func (s *boltStore) DeleteRange(min, max uint64) error {
	var start [8]byte
	binary.BigEndian.PutUint64(start[:], min)
	return s.update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLogs).Cursor()
		for k, _ := c.Seek(start[:]); k != nil; k, _ = c.Next() {
			if binary.BigEndian.Uint64(k) > max {
				break
			}
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
}

// Set stores a stable-store key.
func (s *boltStore) Set(k, v []byte) error {
	return s.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketConf).Put(k, v) })
}

// Get reads a stable-store key (errKeyNotFound if absent).
func (s *boltStore) Get(k []byte) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketConf).Get(k)
		if v == nil {
			return errKeyNotFound
		}
		out = append([]byte(nil), v...)
		return nil
	})
	return out, err
}

// SetUint64 stores a stable-store integer.
func (s *boltStore) SetUint64(key []byte, val uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], val)
	return s.Set(key, b[:])
}

// GetUint64 reads a stable-store integer.
func (s *boltStore) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("stable key %q: %d bytes, want 8", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// appendLogRecord appends l's record encoding to dst.
func appendLogRecord(dst []byte, l *raft.Log) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, logRecordVersion)
	dst = binary.AppendUvarint(dst, l.Term)
	dst = append(dst, byte(l.Type))
	var at int64
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	dst = binary.AppendVarint(dst, at)
	dst = binary.AppendUvarint(dst, uint64(len(l.Data)))
	dst = append(dst, l.Data...)
	dst = binary.AppendUvarint(dst, uint64(len(l.Extensions)))
	dst = append(dst, l.Extensions...)
	binary.BigEndian.PutUint32(dst[start:], crc32.Checksum(dst[start+4:], castagnoli))
	return dst
}

// decodeLogRecord decodes the record of entry idx into l, copying the
// bytes (bbolt's memory is only valid inside the transaction). Errors say
// what is wrong.
func decodeLogRecord(idx uint64, v []byte, l *raft.Log) error {
	if len(v) < 5 {
		return fmt.Errorf("log entry %d: record truncated (%d bytes)", idx, len(v))
	}
	if got, want := crc32.Checksum(v[4:], castagnoli), binary.BigEndian.Uint32(v); got != want {
		return fmt.Errorf("log entry %d: checksum mismatch (stored %08x, computed %08x)", idx, want, got)
	}
	if v[4] != logRecordVersion {
		return fmt.Errorf("log entry %d: unknown record version %d", idx, v[4])
	}
	p := v[5:]
	bad := func(what string) error { return fmt.Errorf("log entry %d: record truncated in %s", idx, what) }
	term, n := binary.Uvarint(p)
	if n <= 0 {
		return bad("term")
	}
	p = p[n:]
	if len(p) < 1 {
		return bad("type")
	}
	typ := raft.LogType(p[0])
	p = p[1:]
	at, n := binary.Varint(p)
	if n <= 0 {
		return bad("time")
	}
	p = p[n:]
	data, p, ok := cutBytes(p)
	if !ok {
		return bad("data")
	}
	ext, p, ok := cutBytes(p)
	if !ok {
		return bad("extensions")
	}
	if len(p) != 0 {
		return fmt.Errorf("log entry %d: %d trailing bytes in record", idx, len(p))
	}
	*l = raft.Log{Index: idx, Term: term, Type: typ, Data: data, Extensions: ext}
	if at != 0 {
		l.AppendedAt = time.Unix(0, at)
	}
	return nil
}

// cutBytes reads a uvarint length and that many bytes (copied; nil if 0).
func cutBytes(p []byte) (b, rest []byte, ok bool) {
	n, k := binary.Uvarint(p)
	if k <= 0 || uint64(len(p)-k) < n {
		return nil, nil, false
	}
	p = p[k:]
	if n > 0 {
		b = append([]byte(nil), p[:n]...)
	}
	return b, p[n:], true
}
