package logstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
	bolt "go.etcd.io/bbolt"
)

// Start-up validation of the wal store's files, run before raft-wal opens
// them. raft-wal itself checks little on open: it reads the tail segment's
// frames until the first zero or malformed frame header and CRC-checks only
// the last commit it finds, silently rewinding to the commit before it on a
// mismatch; sealed segments are not checked at all (entries are read back
// through the index frame without a checksum). A flipped byte in a committed
// batch, or a damaged frame header in the middle of the tail, would make it
// drop or misread acknowledged entries without a word. checkWALFiles walks
// every segment listed in wal-meta.db frame by frame and checks the CRC-32C of
// every commit (each append batch ends in a commit frame holding the CRC of
// every byte written since the previous commit).
//
// What may legitimately be wrong after a crash is the last append of the
// tail segment, which raft-wal wrote but had not fsynced (so raft had not
// acknowledged it): it may be missing, cut short, or — after a machine crash
// — have sectors that never reached the disk, which read back as zeros on the
// preallocated file. checkWALFiles accepts exactly that and nothing else:
//
//   - the final batch ends before its commit frame (a write cut short), and
//     no complete, checksummed batch follows anywhere after it; or
//   - the final batch's commit frame is there but its CRC does not match and
//     the batch contains a whole zero 512-byte sector (an unpersisted sector).
//
// A CRC mismatch in any other batch, a sealed segment that does not check end
// to end (commits, index frame, entry count), a segment shorter than its
// preallocated size (truncated), a header that does not match the metadata,
// or a missing sealed segment is refused with the file's name and offset.

// sectorSize is the unit a machine crash can lose inside a write.
const sectorSize = 512

// walFrameHeaderLen and walFileHeaderLen are raft-wal's segment format
// constants (segment/format.go, format version 0).
const (
	walFrameHeaderLen = 8
	walFileHeaderLen  = 32
	walMagic          = 0x58eb6b0d
	walFrameEntry     = 1
	walFrameIndex     = 2
	walFrameCommit    = 3
)

// checkWALFiles validates dir's wal-meta.db and segment files, after
// repairing what walstore_repair.go repairs (logged to log). A missing
// wal-meta.db (with no segment files) is a new log.
func checkWALFiles(dir string, log *slog.Logger) error {
	metaPath := filepath.Join(dir, metadb.FileName)
	if _, err := os.Stat(metaPath); errors.Is(err, os.ErrNotExist) {
		segs, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
		if len(segs) > 0 {
			return corruptError(metaPath, "missing, but %d log segment files exist (e.g. %s)", len(segs), filepath.Base(segs[0]))
		}
		return nil
	}
	st, err := readWALMeta(metaPath)
	if err != nil {
		return err
	}
	if st, err = repairWALSegments(dir, st, log); err != nil {
		return err
	}
	for i, si := range st.Segments {
		tail := si.SealTime.IsZero()
		if tail && i != len(st.Segments)-1 {
			return corruptError(metaPath, "unsealed segment %d is not the last one", si.ID)
		}
		if err := checkSegment(filepath.Join(dir, segment.FileName(si)), si, tail); err != nil {
			return err
		}
	}
	return nil
}

// readWALMeta reads raft-wal's segment list from wal-meta.db (bbolt bucket
// "wal-meta", key "m", JSON), read-only; a damaged file is reported, not
// panicked on.
func readWALMeta(path string) (st types.PersistentState, err error) {
	if err := checkBoltSize(path); err != nil {
		return st, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = corruptError(path, "damaged database: %v", r)
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return st, corruptError(path, "cannot open: %v", err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(metadb.MetaBucket))
		if b == nil || tx.Bucket([]byte(metadb.StableBucket)) == nil {
			return corruptError(path, "missing bucket %q or %q", metadb.MetaBucket, metadb.StableBucket)
		}
		raw := b.Get([]byte(metadb.MetaKey))
		if raw == nil {
			return nil
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return corruptError(path, "segment list does not parse: %v", err)
		}
		return nil
	})
	return st, err
}

// segmentScan is what walking a segment's frames found.
type segmentScan struct {
	entries   []uint32 // offsets of entry frames in committed batches
	index     int64    // payload offset of a committed index frame, 0 if none
	indexLen  int      // its payload length
	goodEnd   int64    // offset just after the last good commit frame (0: none)
	stop      int64    // offset where the walk stopped
	badCommit bool     // stopped at a commit frame whose CRC does not match
	// walked holds the ends of the frames walked after goodEnd (candidate
	// batch starts for the scan for later commits).
	walked []int64
}

// checkSegment validates one segment file (see the comment at the top).
func checkSegment(path string, si types.SegmentInfo, tail bool) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if tail {
			// raft-wal creates the tail file after committing it to the
			// metadata, so a crash can leave it missing before anything was
			// written to it; it recreates it. The log checks that follow
			// (continuity with the snapshot) still apply.
			return nil
		}
		return corruptError(path, "sealed log segment is missing (entries %d..%d)", si.MinIndex, si.MaxIndex)
	}
	if err != nil {
		return corruptError(path, "cannot read log segment: %v", err)
	}
	if uint64(len(data)) < uint64(si.SizeLimit) {
		if tail && allZero(data) {
			// Created, never written (raft-wal writes the header with the
			// first append): what a process killed while preallocating it
			// leaves — or a truncation of a tail that held entries.
			return corruptError(path, "log segment is truncated: %d bytes, it was preallocated to %d; it holds no data: if the process stopped while the disk was full, remove this file (the log is rebuilt from the rest) and start again; if it was truncated later, restore it from a backup",
				len(data), si.SizeLimit)
		}
		return corruptError(path, "log segment is truncated: %d bytes, it was preallocated to %d", len(data), si.SizeLimit)
	}
	sc := scanSegment(data)
	if sc.goodEnd > 0 {
		if err := checkSegmentHeader(data, si); err != nil {
			return corruptError(path, "%v", err)
		}
	}
	if !tail {
		return checkSealed(path, data, si, sc)
	}
	return checkTail(path, data, si, sc)
}

// checkTail classifies what follows the tail segment's last good commit:
// nothing, an append cut short or torn by a crash (discarded: zeroed on disk,
// so that no stale bytes are left for a later crash to mix with), or damage
// (refused). See the comment at the top of this file.
func checkTail(path string, data []byte, si types.SegmentInfo, sc segmentScan) error {
	start := max(sc.goodEnd, walFileHeaderLen)
	end := int64(len(data))
	for end > start && data[end-1] == 0 {
		end--
	}
	if end <= start || sc.stop >= end {
		return nil // nothing after the last commit
	}
	last := si.BaseIndex + uint64(len(sc.entries)) - 1
	damaged := func(what string) error {
		return corruptError(path, "log segment damaged at offset %d: %s (entries after index %d would be lost)", sc.stop, what, last)
	}
	if off, ok := findLaterCommit(data, sc); ok {
		return damaged(fmt.Sprintf("a checksummed write at offset %d follows it", off))
	}
	if !hasZeroSector(data, start, end) {
		// The whole write is there (or a prefix of it, if the process died
		// while writing): it cannot fail its checksum or hold a bad frame.
		h := data[sc.stop:min(sc.stop+walFrameHeaderLen, int64(len(data)))]
		switch {
		case sc.badCommit:
			return damaged("the write fails its checksum")
		case len(h) == walFrameHeaderLen && !allZero(h) && (h[0] > walFrameCommit || h[0] == 0 || !allZero(h[1:4])):
			return damaged("malformed frame header")
		}
		lf := (end - 1) &^ 7
		if lf >= start && data[lf] == walFrameCommit && allZero(data[lf+1:lf+4]) {
			return damaged(fmt.Sprintf("the complete write ending at offset %d does not check", lf+walFrameHeaderLen))
		}
	}
	// An unfinished append: raft never acknowledged it. Zero it so that only
	// the next append's bytes can ever follow the last commit.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteAt(make([]byte, end-start), start)
		if serr := f.Sync(); err == nil {
			err = serr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("%s: cannot discard the unfinished write at offset %d: %w", path, start, err)
	}
	return nil
}

// checkSegmentHeader compares the file header with the metadata.
func checkSegmentHeader(data []byte, si types.SegmentInfo) error {
	le := binary.LittleEndian
	if len(data) < walFileHeaderLen || le.Uint32(data) != walMagic || data[7] != 0 {
		return errors.New("bad segment header")
	}
	if le.Uint64(data[8:]) != si.BaseIndex || le.Uint64(data[16:]) != si.ID || le.Uint64(data[24:]) != si.Codec {
		return fmt.Errorf("segment header (base %d, id %d, codec %d) does not match the metadata (base %d, id %d, codec %d)",
			le.Uint64(data[8:]), le.Uint64(data[16:]), le.Uint64(data[24:]), si.BaseIndex, si.ID, si.Codec)
	}
	return nil
}

// checkSealed checks a sealed segment end to end: its last commit holds an
// index frame at IndexStart listing exactly the entry frames found, and it
// has at least MaxIndex-BaseIndex+1 entries (more when a log-suffix
// truncation sealed it: the index lists every entry written, the metadata's
// MaxIndex bounds what is read).
func checkSealed(path string, data []byte, si types.SegmentInfo, sc segmentScan) error {
	switch {
	case sc.goodEnd == 0:
		return corruptError(path, "sealed log segment has no valid commit (damaged at offset %d)", sc.stop)
	case sc.badCommit:
		return corruptError(path, "sealed log segment damaged at offset %d (checksum mismatch or bad frame)", sc.stop)
	case sc.index == 0:
		return corruptError(path, "sealed log segment has no index block (its batches end at offset %d, damaged or cut short after it)", sc.stop)
	case uint64(sc.index) != si.IndexStart:
		return corruptError(path, "sealed log segment's index is at offset %d, the metadata says %d", sc.index, si.IndexStart)
	case si.MaxIndex < si.BaseIndex || uint64(len(sc.entries)) < si.MaxIndex-si.BaseIndex+1:
		return corruptError(path, "sealed log segment holds %d entries, the metadata says %d..%d", len(sc.entries), si.BaseIndex, si.MaxIndex)
	case sc.indexLen < 4*len(sc.entries):
		return corruptError(path, "sealed log segment's index is short")
	}
	for i, off := range sc.entries {
		if binary.LittleEndian.Uint32(data[sc.index+int64(4*i):]) != off {
			return corruptError(path, "sealed log segment's index entry %d does not point at its frame", i)
		}
	}
	return nil
}

// scanSegment walks the frames of a segment from just after its header,
// checking every commit's CRC, until the end of the written data or the
// first damage.
func scanSegment(data []byte) segmentScan {
	var sc segmentScan
	le := binary.LittleEndian
	off := int64(walFileHeaderLen)
	crcStart := int64(0)
	var pending []uint32
	var pendIndex int64
	var pendIndexLen int
	n := int64(len(data))
	for {
		sc.stop = off
		if off+walFrameHeaderLen > n {
			return sc
		}
		h := data[off : off+walFrameHeaderLen]
		if h[0] == 0 || h[0] > walFrameCommit || h[1] != 0 || h[2] != 0 || h[3] != 0 {
			return sc // zeros (end of data) or a bad header
		}
		if h[0] == walFrameCommit {
			if crc32.Checksum(data[crcStart:off], castagnoli) != le.Uint32(h[4:]) {
				sc.badCommit = true
				return sc
			}
			sc.entries = append(sc.entries, pending...)
			pending = pending[:0]
			if pendIndex != 0 {
				sc.index, sc.indexLen = pendIndex, pendIndexLen
			}
			off += walFrameHeaderLen
			crcStart, sc.goodEnd = off, off
			sc.walked = sc.walked[:0]
			continue
		}
		l := int64(le.Uint32(h[4:]))
		next := off + walFrameHeaderLen + (l+7)&^7
		if next > n {
			return sc
		}
		if h[0] == walFrameEntry {
			pending = append(pending, uint32(off))
		} else {
			pendIndex, pendIndexLen = off+walFrameHeaderLen, int(l)
		}
		off = next
		sc.walked = append(sc.walked, off)
	}
}

// findLaterCommit looks past the point where the walk stopped for a commit
// frame whose CRC checks against the bytes since some plausible batch start:
// proof that acknowledged writes follow the damage (a torn append is the last
// one; nothing after it was ever committed). It returns that commit's offset.
func findLaterCommit(data []byte, sc segmentScan) (int64, bool) {
	le := binary.LittleEndian
	end := int64(len(data))
	for end > sc.stop && data[end-1] == 0 {
		end--
	}
	starts := []int64{sc.goodEnd}
	if sc.goodEnd == 0 {
		starts[0] = 0
	}
	starts = append(starts, sc.walked...)
	starts = append(starts, sc.stop+walFrameHeaderLen)
	const maxStarts = 1024
	for c := (sc.stop + 7) &^ 7; c+walFrameHeaderLen <= end; c += 8 {
		h := data[c : c+walFrameHeaderLen]
		if h[0] != walFrameCommit || h[1] != 0 || h[2] != 0 || h[3] != 0 {
			continue
		}
		want := le.Uint32(h[4:])
		for _, s := range starts {
			if s <= c && crc32.Checksum(data[s:c], castagnoli) == want {
				return c, true
			}
		}
		starts = append(starts, c+walFrameHeaderLen)
		if len(starts) > maxStarts {
			starts = starts[len(starts)-maxStarts:]
		}
	}
	return 0, false
}

// hasZeroSector reports whether data[from:to] contains a whole zero sector
// (aligned to file offsets).
func hasZeroSector(data []byte, from, to int64) bool {
	for s := (from + sectorSize - 1) &^ (sectorSize - 1); s+sectorSize <= to; s += sectorSize {
		if allZero(data[s : s+sectorSize]) {
			return true
		}
	}
	return false
}

// allZero reports whether b is all zero bytes.
func allZero(b []byte) bool {
	var zero [sectorSize]byte
	for len(b) > 0 {
		k := min(len(b), len(zero))
		if !bytes.Equal(b[:k], zero[:k]) {
			return false
		}
		b = b[k:]
	}
	return true
}
