package replication

// Start-up over the wal log store (package logstore): a Shard restarted
// over sealed segments, everysec, and wal directories damaged byte by byte,
// truncated or torn, opened through Open as a node would.

import (
	"bytes"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"streamd/replication/logstore"
)

// walOpts returns Options for a wal-backed shard in dir.
func walOpts(dir string) Options { return Options{Dir: dir, LogStore: LogStoreWAL} }

// smallSegments makes wal segments 8 KiB for the test, so that a workload
// seals several of them.
func smallSegments(t *testing.T) {
	t.Cleanup(logstore.SetSegmentSizeForTest(8 << 10))
}

// walFixture runs a workload on a wal shard in a new dir (no snapshot: every
// entry is live in the log), closes it without saving, and returns the dir
// and the state a clean reopen loads.
func walFixture(t *testing.T, rounds int) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(walOpts(dir))
	if err != nil {
		t.Fatal(err)
	}
	workload(t, s, rounds)
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	ref, err := Open(walOpts(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := snapshotBytes(t, ref)
	if err := ref.Close(false); err != nil {
		t.Fatal(err)
	}
	return dir, want
}

// copyDir copies a data dir (minus its LOCK) into a new temp dir.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	d := t.TempDir()
	if err := os.CopyFS(d, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(d, "LOCK"))
	return d
}

// segments returns the dir's segment file paths, oldest first.
func segments(t *testing.T, dir string) []string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(walDir(dir), "*.wal"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments in %s: %v", dir, err)
	}
	sort.Strings(segs)
	return segs
}

// writtenLen is the length of a segment's data before its zero tail.
func writtenLen(b []byte) int {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return n
}

func TestWALRestartAndSnapshot(t *testing.T) {
	smallSegments(t)
	dir := t.TempDir()
	s := mustOpen(t, walOpts(dir))
	workload(t, s, 30)
	before := snapshotBytes(t, s)
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "raft.db")); err == nil {
		t.Fatal("wal store created raft.db")
	}
	if n := len(segments(t, dir)); n < 3 {
		t.Fatalf("want several sealed segments with 8 KiB segments, got %d", n)
	}
	// Log replay across sealed segments.
	s2, err := Open(Options{Dir: dir}) // "" picks the store the dir holds
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, snapshotBytes(t, s2)) {
		t.Fatal("state after replay differs")
	}
	// Snapshot, truncation of the log's head, snapshot + tail.
	workload(t, s2, 3)
	if err := s2.Save(); err != nil {
		t.Fatal(err)
	}
	workload(t, s2, 3)
	mid := snapshotBytes(t, s2)
	if err := s2.Close(false); err != nil {
		t.Fatal(err)
	}
	s3 := mustOpen(t, walOpts(dir))
	if !bytes.Equal(mid, snapshotBytes(t, s3)) {
		t.Fatal("snapshot + log tail differs")
	}
	if st := s3.Stats(); st.SnapshotIndex == 0 {
		t.Fatalf("no snapshot: %+v", st)
	}
}

func TestWALEverySec(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, LogStore: LogStoreWAL, Fsync: FsyncEverySec})
	if err != nil {
		t.Fatal(err)
	}
	workload(t, s, 5)
	dirty := logstore.DirtySegmentsForTest(s.store)
	if dirty == 0 {
		t.Fatal("everysec: appends fsynced (no dirty segment)")
	}
	if err := s.SetFsync(FsyncAlways); err != nil {
		t.Fatal(err)
	}
	dirty = logstore.DirtySegmentsForTest(s.store)
	if dirty != 0 {
		t.Fatalf("switch to always left %d dirty segments", dirty)
	}
	workload(t, s, 2)
	before := snapshotBytes(t, s)
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, walOpts(dir))
	if !bytes.Equal(before, snapshotBytes(t, s2)) {
		t.Fatal("state after restart differs")
	}
}

// flipOutcome is what Open did with a damaged wal directory.
type flipOutcome int

const (
	flipRefused flipOutcome = iota // refused, naming a wal file
	flipSame                       // opened with the exact state
	flipLost                       // opened with a different state (silent loss or change)
	flipBadErr                     // refused without naming the file
)

// openFlipped opens d (a damaged copy) and classifies the outcome.
func openFlipped(t *testing.T, d string, want []byte) (flipOutcome, error) {
	s, err := Open(walOpts(d))
	if err != nil {
		if strings.Contains(err.Error(), walDir(d)) {
			return flipRefused, err
		}
		return flipBadErr, err
	}
	got := snapshotBytes(t, s)
	s.Close(false)
	if bytes.Equal(got, want) {
		return flipSame, nil
	}
	return flipLost, nil
}

// flipOffsets returns offsets across a segment's written bytes (every frame
// header region and payloads, step bytes apart) plus a few in its zero tail.
func flipOffsets(b []byte, perFile int) []int {
	n := writtenLen(b)
	step := max(1, n/perFile)
	var offs []int
	for off := 0; off < n; off += step {
		offs = append(offs, off)
	}
	for _, off := range []int{n - 1, n + 3, n + 4096, len(b) - 1} {
		if off >= 0 && off < len(b) {
			offs = append(offs, off)
		}
	}
	return offs
}

// TestWALByteFlips flips single bytes across every segment (sealed and tail)
// and checks that Open either refuses naming the file or loads exactly the
// state that was there. It also measures what raft-wal detects without
// the start-up checks (logstore's checkWALFiles) and logs the counts.
func TestWALByteFlips(t *testing.T) {
	smallSegments(t)
	dir, want := walFixture(t, 12)
	perFile := 60
	if testing.Short() {
		perFile = 12
	}
	counts := map[bool]map[flipOutcome]int{false: {}, true: {}}
	ref := readWALEntries(t, dir)
	for _, path := range segments(t, dir) {
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, path)
		for _, off := range flipOffsets(orig, perFile) {
			for _, raw := range []bool{false, true} {
				d := copyDir(t, dir)
				b := bytes.Clone(orig)
				b[off] ^= 0x5a
				if err := os.WriteFile(filepath.Join(d, rel), b, 0o644); err != nil {
					t.Fatal(err)
				}
				if raw {
					counts[raw][rawWALOutcome(t, d, ref)]++
					continue
				}
				out, err := openFlipped(t, d, want)
				counts[raw][out]++
				switch out {
				case flipLost:
					t.Errorf("%s flip at %d: opened with a different state", rel, off)
				case flipBadErr:
					t.Errorf("%s flip at %d: error does not name the wal dir: %v", rel, off, err)
				}
			}
		}
	}
	report := func(m map[flipOutcome]int) string {
		var sb strings.Builder
		for _, k := range []flipOutcome{flipRefused, flipSame, flipLost, flipBadErr} {
			sb.WriteString([]string{" refused=", " same=", " different-state=", " refused-unnamed="}[k])
			sb.WriteString(strconv.Itoa(m[k]))
		}
		return sb.String()
	}
	t.Logf("with checkWALFiles:%s", report(counts[false]))
	t.Logf("raft-wal alone:    %s", report(counts[true]))
	if counts[false][flipRefused] == 0 {
		t.Fatal("no flip was refused")
	}
}

// readWALEntries reads every entry of dir's wal with raft-wal alone.
func readWALEntries(t *testing.T, dir string) []raft.Log {
	t.Helper()
	w, err := openWALStore(walDir(dir), false, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	logs, err := walEntries(w)
	if err != nil {
		t.Fatal(err)
	}
	return logs
}

// walEntries reads every entry of w.
func walEntries(w logstore.Store) ([]raft.Log, error) {
	first, _ := w.FirstIndex()
	last, _ := w.LastIndex()
	var logs []raft.Log
	for i := first; i <= last && last > 0; i++ {
		var l raft.Log
		if err := w.GetLog(i, &l); err != nil {
			return nil, err
		}
		logs = append(logs, l)
	}
	return logs, nil
}

// rawWALOutcome opens a damaged copy with raft-wal alone (no checkWALFiles,
// no raft) and compares its entries with ref: refused (an error from Open or
// a read), same, or different (entries missing or changed, silently).
func rawWALOutcome(t *testing.T, d string, ref []raft.Log) flipOutcome {
	w, err := openWALStore(walDir(d), false, hclog.NewNullLogger())
	if err != nil {
		return flipRefused
	}
	defer w.Close()
	logs, err := walEntries(w)
	if err != nil {
		return flipRefused
	}
	if len(logs) != len(ref) {
		return flipLost
	}
	for i := range logs {
		a, b := logs[i], ref[i]
		if a.Index != b.Index || a.Term != b.Term || a.Type != b.Type || !bytes.Equal(a.Data, b.Data) {
			return flipLost
		}
	}
	return flipSame
}

// TestWALTruncation truncates each segment at several lengths: always refused.
func TestWALTruncation(t *testing.T) {
	smallSegments(t)
	dir, _ := walFixture(t, 12)
	if len(segments(t, dir)) < 2 {
		t.Fatal("fixture has no sealed segment")
	}
	for _, path := range segments(t, dir) {
		rel, _ := filepath.Rel(dir, path)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n := writtenLen(orig)
		for _, size := range []int{0, 40, n / 2, n - 8, n, len(orig) - 1} {
			if size >= len(orig) {
				continue
			}
			d := copyDir(t, dir)
			if err := os.Truncate(filepath.Join(d, rel), int64(size)); err != nil {
				t.Fatal(err)
			}
			_, err := Open(walOpts(d))
			if err == nil || !strings.Contains(err.Error(), filepath.Join(d, rel)) {
				t.Errorf("%s truncated to %d: want refusal naming it, got %v", rel, size, err)
			}
		}
	}
	// A missing sealed segment.
	segs := segments(t, dir)
	d := copyDir(t, dir)
	rel, _ := filepath.Rel(dir, segs[0])
	os.Remove(filepath.Join(d, rel))
	if _, err := Open(walOpts(d)); err == nil || !strings.Contains(err.Error(), filepath.Join(d, rel)) {
		t.Errorf("missing sealed segment: %v", err)
	}
}

// TestWALTornTail appends what a crash mid-append leaves — a batch cut
// short, or a complete batch with an unpersisted (zero) sector — after the
// last commit of the tail: Open discards it and loads the committed state.
// The same damage followed by a checksummed batch is refused.
func TestWALTornTail(t *testing.T) {
	dir, want := walFixture(t, 6)
	segs := segments(t, dir)
	tail := segs[len(segs)-1]
	rel, _ := filepath.Rel(dir, tail)
	orig, err := os.ReadFile(tail)
	if err != nil {
		t.Fatal(err)
	}
	sc := scanSegment(orig)
	if sc.stop != sc.goodEnd || sc.goodEnd == 0 {
		t.Fatalf("fixture tail not clean: %+v", sc)
	}
	end := sc.goodEnd
	// A fake batch: one entry frame of 2000 bytes of payload, then a commit.
	batch := make([]byte, 8+2000)
	batch[0] = walFrameEntry
	batch[4], batch[5] = byte(2000&0xff), byte(2000>>8)
	for i := 8; i < len(batch); i++ {
		batch[i] = byte(i)
	}
	commit := func(b []byte, crcStart int64, data []byte) []byte {
		c := make([]byte, 8)
		c[0] = walFrameCommit
		sum := crcOf(append(append([]byte(nil), b[crcStart:end]...), data...))
		c[4], c[5], c[6], c[7] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
		return c
	}
	write := func(b []byte) string {
		d := copyDir(t, dir)
		if err := os.WriteFile(filepath.Join(d, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Cut short: the entry frame without its commit.
	b := bytes.Clone(orig)
	copy(b[end:], batch[:1200])
	if out, err := openFlipped(t, write(b), want); out != flipSame {
		t.Errorf("batch cut short: outcome %d, %v", out, err)
	}
	// Complete but with a zero sector: CRC of the intended bytes.
	b = bytes.Clone(orig)
	full := append(bytes.Clone(batch), commit(orig, end, batch)...)
	torn := bytes.Clone(full)
	s0 := (end + 511) &^ 511
	clear(torn[s0-end : s0-end+512])
	copy(b[end:], torn)
	if out, err := openFlipped(t, write(b), want); out != flipSame {
		t.Errorf("batch with a zero sector: outcome %d, %v", out, err)
	}
	// Complete, one byte flipped, no zero sector: corruption.
	b = bytes.Clone(orig)
	bad := bytes.Clone(full)
	bad[100] ^= 1
	copy(b[end:], bad)
	if out, err := openFlipped(t, write(b), want); out != flipRefused {
		t.Errorf("final batch with a flipped byte: outcome %d, %v", out, err)
	}
	// Cut short, then a checksummed batch after it: acknowledged data after
	// the damage.
	b = bytes.Clone(orig)
	copy(b[end:], batch[:1200])
	next := end + int64(len(full))
	second := []byte{walFrameEntry, 0, 0, 0, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}
	copy(b[next:], second)
	// The second batch's CRC covers the bytes since the end of the first
	// batch's commit frame (whose place the tear left zero).
	crc := crcOf(b[next : next+int64(len(second))])
	cf := []byte{walFrameCommit, 0, 0, 0, byte(crc), byte(crc >> 8), byte(crc >> 16), byte(crc >> 24)}
	copy(b[next+int64(len(second)):], cf)
	if out, err := openFlipped(t, write(b), want); out != flipRefused {
		t.Errorf("torn batch followed by a committed one: outcome %d, %v", out, err)
	}
}

// crcOf is the segment format's CRC-32C.
func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// LogStore reports the store chosen when Options.LogStore is empty: the
// default for a new directory, and the existing store on reopening.
func TestLogStoreReportsDefault(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, Options{Dir: dir})
	if got := s.LogStore(); got != DefaultLogStore {
		t.Fatalf("LogStore() = %q for a new directory, want %q", got, DefaultLogStore)
	}
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	bolt := t.TempDir()
	s = mustOpen(t, Options{Dir: bolt, LogStore: LogStoreBolt})
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, Options{Dir: bolt})
	defer s.Close(false)
	if got := s.LogStore(); got != LogStoreBolt {
		t.Fatalf("LogStore() = %q reopening a bolt directory, want %q", got, LogStoreBolt)
	}
}
