package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// Start-up repair of two states raft-wal leaves behind that hold intact,
// checksummed entries but that raft-wal itself cannot open or append to.
// Both are finished here, before the checks of walstore_check.go run, with
// one log line each:
//
//   - A sealed segment without an index block (IndexStart 0 in wal-meta.db).
//     raft-wal v0.4.0 truncated a log suffix (raft's "clearing log suffix",
//     on a deposed leader whose uncommitted tail the new leader overwrote)
//     by marking the tail segment sealed without writing its index
//     (hashicorp/raft-wal#31, fixed by #33 in v0.4.1). Every read of that
//     segment fails after a restart ("sealed segment has no index block").
//     The repair does what v0.4.1's ForceSeal does: it appends the index
//     frame, listing every entry frame of the segment's committed batches,
//     and its commit frame after the last commit, fsyncs, then records
//     IndexStart. The metadata's MaxIndex still bounds what is read, so the
//     truncated entries stay invisible. Should a crash fall between the two
//     steps, the next start finds the index frame committed and records it.
//
//   - A tail segment whose last commit holds an index frame: the append that
//     filled the segment sealed it and was fsynced, but the process stopped
//     before the rotation (which runs in the background) committed the seal
//     and the next segment to wal-meta.db; or a suffix truncation stopped
//     between sealing the tail (ForceSeal) and committing. raft-wal recovers
//     such a tail as sealed and refuses every later append (ErrSealed), so
//     the node could never take another log entry. The repair commits the
//     rotation: the segment sealed with its index and last entry, and an
//     empty tail after it (raft-wal creates the file). A truncation that was
//     cut short is redone by raft, which sends the conflicting entries again.
//
// Nothing else is changed: a segment whose committed batches do not check,
// or that holds data after its last commit, is left to the checks, which
// refuse it.

// repairWALSegments repairs the segments of st (the metadata read from
// dir's wal-meta.db) as described above, commits the new metadata if
// anything changed, and returns it.
func repairWALSegments(dir string, st types.PersistentState, log *slog.Logger) (types.PersistentState, error) {
	var done []string
	for i := range st.Segments {
		si := &st.Segments[i]
		path := filepath.Join(dir, segment.FileName(*si))
		tail := si.SealTime.IsZero()
		if !tail && si.IndexStart != 0 {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil || uint64(len(data)) < uint64(si.SizeLimit) {
			continue // missing or truncated: the checks decide
		}
		sc := scanSegment(data)
		if sc.badCommit || sc.goodEnd == 0 || !allZero(data[sc.goodEnd:]) {
			continue // damaged, or data after the last commit: the checks decide
		}
		if checkSegmentHeader(data, *si) != nil {
			continue
		}
		switch {
		case !tail && sc.index != 0:
			si.IndexStart = uint64(sc.index)
			done = append(done, fmt.Sprintf("recorded the index block of sealed segment %s (written by an earlier repair)", filepath.Base(path)))
		case !tail:
			if uint64(len(sc.entries)) < si.MaxIndex-si.BaseIndex+1 || si.MaxIndex < si.BaseIndex {
				continue // entries missing: refused by the checks
			}
			idx, err := appendIndexBlock(path, sc)
			if err != nil {
				return st, err
			}
			si.IndexStart = uint64(idx)
			done = append(done, fmt.Sprintf("wrote the missing index block of sealed segment %s (entries %d..%d; left by a log-suffix truncation, hashicorp/raft-wal#31)",
				filepath.Base(path), si.MinIndex, si.MaxIndex))
		case sc.index != 0 && i == len(st.Segments)-1 && len(sc.entries) > 0:
			last := si.BaseIndex + uint64(len(sc.entries)) - 1
			next := types.SegmentInfo{ID: st.NextSegmentID, BaseIndex: last + 1, MinIndex: last + 1,
				SizeLimit: uint32(walSegmentSize), Codec: si.Codec, CreateTime: time.Now()}
			if _, err := os.Stat(filepath.Join(dir, segment.FileName(next))); !errors.Is(err, os.ErrNotExist) {
				return st, corruptError(path, "tail segment is sealed but segment file %s, which the rotation would create, already exists", segment.FileName(next))
			}
			si.IndexStart, si.MaxIndex, si.SealTime = uint64(sc.index), last, time.Now()
			st.Segments = append(st.Segments, next)
			st.NextSegmentID++
			done = append(done, fmt.Sprintf("committed the rotation of tail segment %s, sealed at entry %d before the process stopped; new tail starts at %d",
				filepath.Base(path), last, last+1))
			// st.Segments may have moved: the loop ends here (the new tail
			// has no file yet).
		}
		if tail {
			break
		}
	}
	if len(done) == 0 {
		return st, nil
	}
	if err := commitWALMeta(dir, st); err != nil {
		return st, err
	}
	for _, d := range done {
		log.Warn("repaired the log: "+d, "dir", dir)
	}
	return st, nil
}

// appendIndexBlock writes an index frame listing sc.entries and its commit
// frame after the segment's last commit (sc.goodEnd), as raft-wal's seal
// does, and fsyncs the file. It returns the offset of the index array.
func appendIndexBlock(path string, sc segmentScan) (int64, error) {
	le := binary.LittleEndian
	n := len(sc.entries)
	payload := 4 * n
	frame := make([]byte, walFrameHeaderLen+(payload+7)&^7+walFrameHeaderLen)
	frame[0] = walFrameIndex
	le.PutUint32(frame[4:], uint32(payload))
	for i, off := range sc.entries {
		le.PutUint32(frame[walFrameHeaderLen+4*i:], off)
	}
	commit := frame[len(frame)-walFrameHeaderLen:]
	commit[0] = walFrameCommit
	le.PutUint32(commit[4:], crc32.Checksum(frame[:len(frame)-walFrameHeaderLen], castagnoli))
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteAt(frame, sc.goodEnd)
		if serr := f.Sync(); err == nil {
			err = serr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%s: cannot write the missing index block: %w", path, err)
	}
	return sc.goodEnd + walFrameHeaderLen, nil
}

// commitWALMeta replaces the segment list in dir's wal-meta.db with st, the
// way raft-wal commits it (one bbolt transaction, fsynced).
func commitWALMeta(dir string, st types.PersistentState) error {
	var db metadb.BoltMetaDB
	if _, err := db.Load(dir); err != nil {
		return fmt.Errorf("%s: cannot open to repair: %w", filepath.Join(dir, metadb.FileName), err)
	}
	err := db.CommitState(st)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: cannot commit the repaired segment list: %w", filepath.Join(dir, metadb.FileName), err)
	}
	return nil
}
