package replication

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"streamd/internal/testutil"
	"streamd/replication/wire"
	"streamd/streams"
)

// workload applies a mix of writes (streams in two databases, a group with
// deliveries and acks, an expiry, a config change), n rounds, through
// pipelined proposals.
func workload(t testing.TB, s *Shard, n int) {
	t.Helper()
	propose(t, s, xadd("s", "f", "v"))
	if _, err := s.Propose(wire.XGroupCreate{Base: wire.Base{Key: "s"}, Group: "g", EntriesRead: -1}); err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		t.Fatal(err)
	}
	for r := 0; r < n; r++ {
		var ps []*Pending
		for i := 0; i < 20; i++ {
			ps = append(ps, s.ProposeAsync(xadd("s", "r", fmt.Sprint(r), "i", fmt.Sprint(i))))
			ps = append(ps, s.ProposeAsync(wire.XAdd{Base: wire.Base{DB: 3, Key: "other"}, ID: streams.IDSpec{Auto: true},
				Trim: wire.Trim{Strategy: wire.TrimMaxLen, MaxLen: 50, Limit: -1}, Fields: [][]byte{[]byte("x"), []byte("y")}}))
		}
		ps = append(ps, s.ProposeAsync(wire.XReadGroup{Group: "g", Consumer: fmt.Sprint("c", r%3), Count: 5,
			Streams: []wire.ReadStream{{Key: "s", New: true}}}))
		for _, p := range ps {
			if _, err := p.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		if r%2 == 0 {
			res, err := s.Query(wire.XPending{Base: wire.Base{Key: "s"}, Group: "g", IdleMs: -1, End: streams.MaxID, Count: 2})
			if err != nil {
				t.Fatal(err)
			}
			_ = res
		}
	}
	propose(t, s, wire.XAck{Base: wire.Base{Key: "s"}, Group: "g", IDs: []streams.ID{{Ms: 0, Seq: 0}}})
	propose(t, s, wire.Expire{Base: wire.Base{DB: 3, Key: "other"}, Ms: 3_600_000, Relative: true})
	propose(t, s, wire.ConfigSet{Name: "stream-node-max-entries", Value: "7"})
	propose(t, s, xadd("after-config", "a", "b"))
}

func TestRestartReplaysLog(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	workload(t, s, 10)
	before := snapshotBytes(t, s)
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "snapshots")); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, Options{Dir: dir})
	if after := snapshotBytes(t, s2); !bytes.Equal(before, after) {
		t.Fatalf("state after restart differs (%d vs %d bytes)", len(before), len(after))
	}
	st := s2.Stats()
	if !st.Durable || st.ChangesSinceSave == 0 || st.SnapshotIndex != 0 {
		t.Fatalf("after replay: %+v", st)
	}
	if s2.NodeMaxEntries() != 7 {
		t.Fatalf("config not replayed: %d", s2.NodeMaxEntries())
	}
	// The clock carries over: new IDs are after the old ones.
	last, _ := s2.Query(wire.LastIDs{Names: []string{"s"}})
	id := propose(t, s2, xadd("s", "f", "v")).(streams.ID)
	if id.Compare(last.([]streams.ID)[0]) <= 0 {
		t.Fatalf("new id %v not after %v", id, last)
	}
}

func TestCloseSaveRestoresFromSnapshot(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	workload(t, s, 30)
	before := snapshotBytes(t, s)
	if err := s.Close(true); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, Options{Dir: dir})
	if after := snapshotBytes(t, s2); !bytes.Equal(before, after) {
		t.Fatal("state after restore differs")
	}
	st := s2.Stats()
	if st.SnapshotIndex == 0 || st.ChangesSinceSave != 0 {
		t.Fatalf("stats after restore: %+v", st)
	}
	first, err := s2.store.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	if first <= 1 || st.SnapshotIndex-first >= trailingLogs+1 {
		t.Fatalf("log not truncated behind snapshot %d: first index %d", st.SnapshotIndex, first)
	}
	// Writes after the snapshot, a restart without saving: snapshot + tail.
	workload(t, s2, 3)
	mid := snapshotBytes(t, s2)
	if err := s2.Close(false); err != nil {
		t.Fatal(err)
	}
	s3 := mustOpen(t, Options{Dir: dir})
	if !bytes.Equal(mid, snapshotBytes(t, s3)) {
		t.Fatal("snapshot + log tail differs")
	}
}

func TestSaveStats(t *testing.T) {
	s := mustOpen(t, Options{Dir: t.TempDir()})
	workload(t, s, 2)
	if st := s.Stats(); st.ChangesSinceSave == 0 || st.Saves != 0 {
		t.Fatalf("before save %+v", st)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.ChangesSinceSave != 0 || st.Saves != 1 || !st.LastSaveOK || st.LastSaveUnix == 0 || st.SaveInProgress || st.SnapshotIndex == 0 {
		t.Fatalf("after save %+v", st)
	}
	if err := s.Save(); err != nil { // nothing new: still OK
		t.Fatal(err)
	}
	propose(t, s, xadd("s", "f", "v"))
	if st := s.Stats(); st.ChangesSinceSave != 1 {
		t.Fatalf("changes after one write %d", st.ChangesSinceSave)
	}
}

func TestAutomaticSnapshot(t *testing.T) {
	s := mustOpen(t, Options{Dir: t.TempDir(), SnapshotThreshold: 5})
	for i := 0; i < 20; i++ {
		propose(t, s, xadd("s", "f", "v"))
	}
	// raft checks the threshold every SnapshotInterval; force the check.
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.SnapshotIndex == 0 {
		t.Fatalf("%+v", st)
	}
}

func TestFsyncEverySec(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Fsync: FsyncEverySec})
	if err != nil {
		t.Fatal(err)
	}
	if s.Stats().Fsync != FsyncEverySec {
		t.Fatal("policy")
	}
	workload(t, s, 2)
	if err := s.SetFsync(FsyncAlways); err != nil {
		t.Fatal(err)
	}
	workload(t, s, 1)
	if err := s.SetFsync(FsyncEverySec); err != nil {
		t.Fatal(err)
	}
	workload(t, s, 1)
	before := snapshotBytes(t, s)
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, Options{Dir: dir})
	if !bytes.Equal(before, snapshotBytes(t, s2)) {
		t.Fatal("state differs")
	}
	if s2.Stats().Fsync != FsyncAlways {
		t.Fatal("default policy")
	}
}

func TestLockRefusesSecondOpen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(Options{Dir: dir})
	want := fmt.Sprintf("data directory %s is in use by another process (%s is locked)", dir, filepath.Join(dir, "LOCK"))
	if err == nil || err.Error() != want {
		t.Fatalf("second open: %v", err)
	}
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, Options{Dir: dir})
}

// savedDir returns a data directory holding a snapshot (and the newest
// snapshot's directory) plus a few log entries after it.
func savedDir(t *testing.T) (dir, snapDir string) {
	dir = t.TempDir()
	s, err := Open(Options{Dir: dir, LogStore: LogStoreBolt})
	if err != nil {
		t.Fatal(err)
	}
	workload(t, s, 3)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	workload(t, s, 1)
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	metas, err := readSnapshotMetas(filepath.Join(dir, "snapshots"), nil)
	if err != nil || len(metas) == 0 {
		t.Fatalf("snapshots: %v %v", metas, err)
	}
	return dir, filepath.Join(dir, "snapshots", metas[0].ID)
}

func openErr(t *testing.T, dir string, wantFile string, wantText string) {
	t.Helper()
	s, err := Open(Options{Dir: dir})
	if err == nil {
		s.Close(false)
		t.Fatalf("Open succeeded on a damaged directory")
	}
	if !strings.Contains(err.Error(), wantFile) || !strings.Contains(err.Error(), wantText) {
		t.Fatalf("Open error %q; want it to name %s and say %q", err, wantFile, wantText)
	}
	t.Log(err)
}

func TestCorruptSnapshotRefused(t *testing.T) {
	t.Run("flipped byte", func(t *testing.T) {
		dir, snap := savedDir(t)
		path := filepath.Join(snap, "state.bin")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x40
		os.WriteFile(path, b, 0o644)
		openErr(t, dir, path, "CRC mismatch")
	})
	t.Run("truncated, raft CRC fixed", func(t *testing.T) {
		// raft's CRC agrees with the damaged file: the snapshot's own
		// framing must catch it.
		dir, snap := savedDir(t)
		path := filepath.Join(snap, "state.bin")
		b, _ := os.ReadFile(path)
		b = b[:len(b)-10]
		os.WriteFile(path, b, 0o644)
		metaPath := filepath.Join(snap, "meta.json")
		var m map[string]any
		mb, _ := os.ReadFile(metaPath)
		if err := json.Unmarshal(mb, &m); err != nil {
			t.Fatal(err)
		}
		h := crc64.New(crc64.MakeTable(crc64.ECMA))
		h.Write(b)
		m["CRC"] = h.Sum(nil)
		m["Size"] = len(b)
		mb, _ = json.Marshal(m)
		os.WriteFile(metaPath, mb, 0o644)
		openErr(t, dir, path, "truncated")
	})
	t.Run("bad meta.json", func(t *testing.T) {
		dir, snap := savedDir(t)
		path := filepath.Join(snap, "meta.json")
		os.WriteFile(path, []byte("{\"ID\": "), 0o644)
		openErr(t, dir, path, "metadata does not parse")
	})
	t.Run("missing state.bin", func(t *testing.T) {
		dir, snap := savedDir(t)
		path := filepath.Join(snap, "state.bin")
		os.Remove(path)
		openErr(t, dir, path, "no such file")
	})
}

func TestCorruptLogRefused(t *testing.T) {
	t.Run("truncated raft.db", func(t *testing.T) {
		dir, _ := savedDir(t)
		path := filepath.Join(dir, "raft.db")
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, fi.Size()/3); err != nil {
			t.Fatal(err)
		}
		openErr(t, dir, path, "")
	})
	t.Run("empty raft.db", func(t *testing.T) {
		dir, _ := savedDir(t)
		path := filepath.Join(dir, "raft.db")
		os.Truncate(path, 0)
		// The entries after the snapshot are gone: refused, not started
		// from the snapshot alone.
		openErr(t, dir, path, "the log was lost or replaced")
	})
	t.Run("missing raft.db", func(t *testing.T) {
		dir, _ := savedDir(t)
		path := filepath.Join(dir, "raft.db")
		os.Remove(path)
		openErr(t, dir, path, "the log was lost or replaced")
	})
	editLast := func(t *testing.T, fn func(idx uint64, v []byte) []byte) (dir, path string) {
		dir, _ = savedDir(t)
		path = filepath.Join(dir, "raft.db")
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketLogs)
			c := b.Cursor()
			// The last command entry.
			for k, v := c.Last(); k != nil; k, v = c.Prev() {
				var l raft.Log
				idx := uint64(0)
				for _, x := range k {
					idx = idx<<8 | uint64(x)
				}
				if err := decodeLogRecord(idx, v, &l); err != nil {
					return err
				}
				if l.Type == raft.LogCommand {
					return b.Put(append([]byte(nil), k...), fn(idx, append([]byte(nil), v...)))
				}
			}
			return errors.New("no command entry")
		})
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		return dir, path
	}
	t.Run("flipped bit in a record", func(t *testing.T) {
		dir, path := editLast(t, func(_ uint64, v []byte) []byte { v[len(v)-3] ^= 1; return v })
		openErr(t, dir, path, "checksum mismatch")
	})
	t.Run("entry that does not decode", func(t *testing.T) {
		dir, path := editLast(t, func(idx uint64, v []byte) []byte {
			l := raft.Log{Index: idx, Term: 1, Type: raft.LogCommand, Data: []byte{wire.EntryVersion, 1, 1, 0xfe}}
			return appendLogRecord(nil, &l)
		})
		openErr(t, dir, path, "does not decode")
	})
	t.Run("gap after snapshot", func(t *testing.T) {
		dir, _ := savedDir(t)
		path := filepath.Join(dir, "raft.db")
		store, err := openBoltStore(path, false)
		if err != nil {
			t.Fatal(err)
		}
		first, _ := store.FirstIndex()
		last, _ := store.LastIndex()
		if err := store.DeleteRange(first, last-2); err != nil {
			t.Fatal(err)
		}
		store.Close()
		openErr(t, dir, path, "entries missing")
	})
}

// failingLogs is a LogStore whose writes fail while fail is set.
type failingLogs struct {
	raft.LogStore
	fail atomic.Bool
}

var errDiskFull = errors.New("write raft.db: no space left on device")

func (f *failingLogs) StoreLogs(logs []*raft.Log) error {
	if f.fail.Load() {
		return errDiskFull
	}
	return f.LogStore.StoreLogs(logs)
}

func (f *failingLogs) StoreLog(l *raft.Log) error { return f.StoreLogs([]*raft.Log{l}) }

func TestWriteErrorIsMisconf(t *testing.T) {
	var fl *failingLogs
	s, err := open(Options{}, hooks{wrapLogs: func(ls raft.LogStore) raft.LogStore {
		fl = &failingLogs{LogStore: ls}
		return fl
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(false)
	propose(t, s, xadd("s", "f", "ok1"))
	fl.fail.Store(true)
	_, err = s.Propose(xadd("s", "f", "lost"))
	var me *MisconfError
	if !errors.As(err, &me) || err.Error() != "MISCONF Errors writing to the log: "+errDiskFull.Error() {
		t.Fatalf("propose during write failure: %v", err)
	}
	if st := s.Stats(); st.LastWriteErr != errDiskFull.Error() || st.WriteErrors == 0 {
		t.Fatalf("stats %+v", st)
	}
	// While the log cannot be written no write is acknowledged.
	for i := 0; i < 3; i++ {
		if res, err := s.Propose(xadd("s", "f", "lost")); err == nil {
			t.Fatalf("acknowledged %v during write failure", res)
		}
	}
	fl.fail.Store(false)
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		_, err := s.Propose(xadd("s", "f", "ok2"))
		return err
	})
	if st := s.Stats(); st.LastWriteErr != "" {
		t.Fatalf("write error not cleared: %+v", st)
	}
	res, _ := s.Query(wire.XRange{Base: wire.Base{Key: "s"}, End: streams.MaxID, Count: -1})
	var vals []string
	for _, e := range res.([]streams.Entry) {
		vals = append(vals, string(e.Fields[1]))
	}
	if strings.Join(vals, ",") != "ok1,ok2" {
		t.Fatalf("entries %v: a failed write was applied", vals)
	}
}

func TestOutcomeUnknownText(t *testing.T) {
	err := proposalError(raft.ErrLeadershipLost, nil)
	var ou *OutcomeUnknownError
	if !errors.As(err, &ou) || err.Error() != "ERR outcome unknown: leadership lost while committing log; the write may or may not have been applied" {
		t.Fatalf("%v", err)
	}
	if err := proposalError(raft.ErrRaftShutdown, nil); err != ErrShuttingDown {
		t.Fatal(err)
	}
	if err := proposalError(raft.ErrNotLeader, nil); err != ErrNoLeader {
		t.Fatal(err)
	}
	if err := proposalError(raft.ErrLeadershipTransferInProgress, nil); err != ErrTransferInProgress {
		t.Fatal(err)
	}
	if err := proposalError(raft.ErrEnqueueTimeout, nil); err != ErrLogBusy {
		t.Fatal(err)
	}
	if err := proposalError(raft.ErrNotLeader, errDiskFull); !strings.HasPrefix(err.Error(), "MISCONF ") {
		t.Fatal(err)
	}
}

// benchProposers runs 50 concurrent proposers of XADD on a data directory,
// each issuing depth XADDs before waiting on them (redis-benchmark -c 50
// -P depth), and reports the mean commands per log entry.
func benchProposers(b *testing.B, fsync FsyncPolicy, depth int) {
	s, err := Open(Options{Dir: b.TempDir(), Fsync: fsync})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(false)
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps := make([]*Pending, 0, depth)
			for next.Add(int64(depth)) <= int64(b.N+depth-1) {
				ps = ps[:0]
				for range depth {
					ps = append(ps, s.ProposeAsync(xadd("s", "f", "v")))
				}
				for _, p := range ps {
					if _, err := p.Wait(); err != nil {
						b.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	st := s.Stats()
	b.ReportMetric(float64(st.Proposals)/float64(max(st.Batches, 1)), "cmds/entry")
}

// BenchmarkProposeDurable50: 50 proposers each waiting for its reply
// (FsyncAlways: after the fsync), in both fsync modes.
func BenchmarkProposeDurable50(b *testing.B) {
	for _, p := range []FsyncPolicy{FsyncAlways, FsyncEverySec} {
		b.Run(p.String(), func(b *testing.B) { benchProposers(b, p, 1) })
	}
}

// BenchmarkProposePipelined50x16: 50 proposers each issuing 16 XADDs
// before waiting on them (redis-benchmark -c 50 -P 16), FsyncAlways.
func BenchmarkProposePipelined50x16(b *testing.B) { benchProposers(b, FsyncAlways, 16) }

// TestRaftDBByteFlips flips single bytes across raft.db (past bbolt's two
// meta pages, whose damage bbolt treats as a torn last commit and rolls
// back) and checks that Open either refuses naming raft.db or loads exactly
// the state that was there: never a crash, never a different state.
func TestRaftDBByteFlips(t *testing.T) {
	dir := t.TempDir() // no snapshot: every entry is live in the log
	s0, err := Open(Options{Dir: dir, LogStore: LogStoreBolt})
	if err != nil {
		t.Fatal(err)
	}
	workload(t, s0, 5)
	if err := s0.Close(false); err != nil {
		t.Fatal(err)
	}
	ref := mustOpen(t, Options{Dir: dir, LogStore: LogStoreBolt})
	want := snapshotBytes(t, ref)
	if err := ref.Close(false); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(dir, "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	step := len(orig) / 40
	if testing.Short() {
		step = len(orig) / 8
	}
	refused := 0
	for off := 2 * os.Getpagesize(); off < len(orig); off += step {
		d := t.TempDir()
		if err := os.CopyFS(d, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(d, "LOCK"))
		b := bytes.Clone(orig)
		b[off] ^= 0x5a
		path := filepath.Join(d, "raft.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(Options{Dir: d})
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("flip at %d: error does not name raft.db: %v", off, err)
			}
			refused++
			t.Logf("flip at %d: %v", off, err)
			continue
		}
		got := snapshotBytes(t, s)
		s.Close(false)
		if !bytes.Equal(got, want) {
			t.Fatalf("flip at %d: opened with a different state", off)
		}
	}
	t.Logf("%d of %d flips refused (the rest hit unused pages)", refused, (len(orig)-2*os.Getpagesize()+step-1)/step)
}

// A crash while raft removes an old snapshot can leave its directory
// without meta.json (it is never so for a finished one: meta.json is
// written before the rename): Open skips it as raft does. The newest
// snapshot's meta.json missing is refused, naming it, because the log no
// longer continues the older state.
func TestSnapshotDirWithoutMeta(t *testing.T) {
	t.Run("interrupted reap", func(t *testing.T) {
		dir, _ := savedDir(t)
		old := filepath.Join(dir, "snapshots", "1-1-1")
		if err := os.MkdirAll(old, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(old, "state.bin"), []byte("partly removed"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatalf("Open with a half-removed old snapshot: %v", err)
		}
		defer s.Close(false)
		if n := xlenOf(t, s, "s"); n == 0 {
			t.Fatal("data lost")
		}
	})
	t.Run("newest meta.json missing", func(t *testing.T) {
		dir := t.TempDir()
		s, err := Open(Options{Dir: dir, LogStore: LogStoreBolt, TrailingLogs: 1})
		if err != nil {
			t.Fatal(err)
		}
		workload(t, s, 3)
		if err := s.Save(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(false); err != nil {
			t.Fatal(err)
		}
		metas, err := readSnapshotMetas(filepath.Join(dir, "snapshots"), nil)
		if err != nil || len(metas) == 0 {
			t.Fatalf("snapshots: %v %v", metas, err)
		}
		meta := filepath.Join(dir, "snapshots", metas[0].ID, "meta.json")
		if err := os.Remove(meta); err != nil {
			t.Fatal(err)
		}
		openErr(t, dir, meta, "is missing")
	})
}
