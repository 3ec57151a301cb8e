package replication

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// The repairs of logstore/walstore_repair.go on states built from a real log with
// small segments (the fixture from outside is TestWALFixtureSuffixTruncation).

// repairFixture returns a wal data dir with at least two sealed segments
// and the state a clean open loads, plus the dir's segment list.
func repairFixture(t *testing.T) (string, []byte, types.PersistentState) {
	t.Helper()
	smallSegments(t)
	dir, want := walFixture(t, 40)
	st, err := readWALMeta(filepath.Join(walDir(dir), "wal-meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Segments) < 3 {
		t.Fatalf("fixture has %d segments, want 3 or more", len(st.Segments))
	}
	return dir, want, st
}

// openLogged opens the wal shard in d with its log captured.
func openLogged(t *testing.T, d string) (*Shard, *lockedBuffer, error) {
	t.Helper()
	var logs lockedBuffer
	o := walOpts(d)
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s, err := Open(o)
	return s, &logs, err
}

// setMeta commits st (changed by edit) as d's segment list.
func setMeta(t *testing.T, d string, st types.PersistentState, edit func(*types.PersistentState)) {
	t.Helper()
	st.Segments = append([]types.SegmentInfo(nil), st.Segments...)
	edit(&st)
	if err := commitWALMeta(walDir(d), st); err != nil {
		t.Fatal(err)
	}
}

// A sealed segment whose index block is in the file but not in the
// metadata (a crash between the two steps of the index repair): the
// index is recorded and the state loads unchanged.
func TestWALRepairRecordsIndex(t *testing.T) {
	dir, want, st := repairFixture(t)
	d := copyDir(t, dir)
	setMeta(t, d, st, func(st *types.PersistentState) { st.Segments[0].IndexStart = 0 })
	s, logs, err := openLogged(t, d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snapshotBytes(t, s), want) {
		t.Fatal("state differs after the repair")
	}
	s.Close(false)
	if !strings.Contains(logs.String(), "recorded the index block of sealed segment "+segment.FileName(st.Segments[0])) {
		t.Fatalf("no repair line in:\n%s", logs)
	}
	got, err := readWALMeta(filepath.Join(walDir(d), "wal-meta.db"))
	if err != nil || got.Segments[0].IndexStart != st.Segments[0].IndexStart {
		t.Fatalf("IndexStart after repair: %+v, %v; want %d", got.Segments[0], err, st.Segments[0].IndexStart)
	}
}

// A sealed segment without an index block whose batches do not check is
// damage: refused naming the file, and the file is not written to.
func TestWALRepairRefusesDamage(t *testing.T) {
	dir, _, st := repairFixture(t)
	d := copyDir(t, dir)
	setMeta(t, d, st, func(st *types.PersistentState) { st.Segments[0].IndexStart = 0 })
	path := filepath.Join(walDir(d), segment.FileName(st.Segments[0]))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the index frame and its commit, then flip a byte of an entry.
	idx := int64(st.Segments[0].IndexStart) - walFrameHeaderLen
	clear(b[idx:])
	b[walFileHeaderLen+walFrameHeaderLen+1] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = openLogged(t, d)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("want a refusal naming %s, got %v", path, err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, b) {
		t.Fatal("the damaged segment was written to")
	}
}

// The append that filled the tail sealed it (index frame fsynced) but the
// process stopped before the rotation committed wal-meta.db: the rotation is
// committed at start-up, the state holds every entry the segment holds, and
// the log takes new appends (raft-wal alone would answer ErrSealed to every
// one of them).
func TestWALRepairFinishesRotation(t *testing.T) {
	dir, _, st := repairFixture(t)
	d := copyDir(t, dir)
	n := len(st.Segments)
	sealed := st.Segments[n-2] // the last sealed segment becomes the tail again
	for _, si := range st.Segments[n-1:] {
		if err := os.Remove(filepath.Join(walDir(d), segment.FileName(si))); err != nil {
			t.Fatal(err)
		}
	}
	setMeta(t, d, st, func(st *types.PersistentState) {
		// The rotation had not happened: no next segment, the ID it would
		// take still free, the sealed segment still the tail.
		st.NextSegmentID = st.Segments[n-1].ID
		st.Segments = st.Segments[:n-1]
		tail := &st.Segments[n-2]
		*tail = types.SegmentInfo{ID: tail.ID, BaseIndex: tail.BaseIndex, MinIndex: tail.MinIndex,
			Codec: tail.Codec, CreateTime: tail.CreateTime, SizeLimit: tail.SizeLimit}
	})
	s, logs, err := openLogged(t, d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "committed the rotation of tail segment "+segment.FileName(sealed)) {
		s.Close(false)
		t.Fatalf("no repair line in:\n%s", logs)
	}
	// raft appends its own entries once it leads: the log reaches past the
	// sealed segment's last entry only if the new tail takes appends.
	if last, _ := s.logs.LastIndex(); last <= sealed.MaxIndex {
		s.Close(false)
		t.Fatalf("last index %d, want more than %d (the sealed segment's last entry)", last, sealed.MaxIndex)
	}
	before := xlenOf(t, s, "rotation")
	propose(t, s, xadd("rotation", "f", "v"))
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	s, logs, err = openLogged(t, d)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(false)
	if got := xlenOf(t, s, "rotation"); got != before+1 {
		t.Fatalf("XLEN after the append and a restart: %d, want %d", got, before+1)
	}
	if strings.Contains(logs.String(), "repaired") {
		t.Fatalf("second open repaired again:\n%s", logs)
	}
}
