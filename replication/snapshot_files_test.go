package replication

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"streamd/internal/testutil"
)

// bigXAdds proposes n XADDs of 8 KiB each to s.
func bigXAdds(t *testing.T, s *Shard, n int) {
	t.Helper()
	v := strings.Repeat("v", 8<<10)
	for i := range n {
		if _, err := s.Propose(xadd("s", "f", v+fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotDirs lists the finished and the unfinished (.tmp) snapshot
// directories in dir/snapshots.
func snapshotDirs(t *testing.T, dir string) (done, tmp []string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "snapshots"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			tmp = append(tmp, e.Name())
		} else {
			done = append(done, e.Name())
		}
	}
	return done, tmp
}

// TestSnapshotByLogSize: with large entries a shard snapshots once
// SnapshotLogSize bytes were logged, long before the entry-count threshold,
// and keeps only the newest snapshot on disk; with the size trigger off it
// does not snapshot at all.
func TestSnapshotByLogSize(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Fsync: FsyncEverySec, SnapshotThreshold: 1 << 30, SnapshotLogSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(false)
	bigXAdds(t, s, 200) // 1.6 MB in at most 200 entries: several snapshots
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		st := s.Stats()
		if st.Saves < 2 || s.fsm.logBytes.Load()-s.fsm.snapBase.Load() >= 256<<10 {
			return fmt.Errorf("want several snapshots, the last one holding all but < 256 KiB: %+v", st)
		}
		if done, tmp := snapshotDirs(t, dir); len(done) != 1 || len(tmp) != 0 {
			return fmt.Errorf("snapshots on disk: %v, unfinished %v; want exactly one", done, tmp)
		}
		return nil
	})
	if st := s.Stats(); st.LastLogIndex > 210 || st.SnapshotIndex == 0 {
		t.Fatalf("want snapshots of a log far below the entry threshold: %+v", st)
	}

	off := t.TempDir()
	s2, err := Open(Options{Dir: off, Fsync: FsyncEverySec, SnapshotThreshold: 1 << 30, SnapshotLogSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close(false)
	bigXAdds(t, s2, 200)
	if st := s2.Stats(); st.SnapshotIndex != 0 || st.Saves != 0 {
		t.Fatalf("snapshot-log-size off: a snapshot was taken: %+v", st)
	}
}

// TestSnapshotLoadLogged: a restart logs "loading snapshot <id> (<size>)"
// and the time the load took; unfinished snapshot directories left behind
// are removed at start-up.
func TestSnapshotLoadLogged(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Fsync: FsyncEverySec})
	if err != nil {
		t.Fatal(err)
	}
	bigXAdds(t, s, 20)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	done, _ := snapshotDirs(t, dir)
	if len(done) != 1 {
		t.Fatalf("snapshots: %v", done)
	}
	stale := filepath.Join(dir, "snapshots", "1-5-123.tmp")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	s, err = Open(Options{Dir: dir, Fsync: FsyncEverySec, Logger: slog.New(slog.NewTextHandler(&out, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(false)
	logs := out.String()
	for _, want := range []string{"loading snapshot " + done[0] + " (", "loaded snapshot " + done[0], "removed an unfinished snapshot"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("unfinished snapshot directory still there: %v", err)
	}
}

// gatedReader returns the first half of its data, then blocks until gate
// is closed.
type gatedReader struct {
	data []byte
	off  int
	gate chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if g.off == len(g.data)/2 {
		<-g.gate
	}
	if g.off == len(g.data) {
		return 0, io.EOF
	}
	end := len(g.data)
	if g.off < len(g.data)/2 {
		end = len(g.data) / 2
	}
	n := copy(p, g.data[g.off:end])
	g.off += n
	return n, nil
}

// TestSnapshotLoadProgress: a load that takes longer than the period logs
// how far it has got.
func TestSnapshotLoadProgress(t *testing.T) {
	var out lockedBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	g := &gatedReader{data: make([]byte, 4<<20), gate: make(chan struct{})}
	r, done := loadingSnapshot(log, "2-100-1", int64(len(g.data)), g, time.Millisecond)
	readDone := make(chan error)
	go func() {
		_, err := io.Copy(io.Discard, r)
		readDone <- err
	}()
	testutil.Eventually(t, 10*time.Second, time.Millisecond, func() error {
		if !strings.Contains(out.String(), "loading snapshot 2-100-1: 50% (2.00M of 4.00M)") {
			return fmt.Errorf("no progress line yet:\n%s", out.String())
		}
		return nil
	})
	close(g.gate)
	if err := <-readDone; err != nil {
		t.Fatal(err)
	}
	done()
	logs := out.String()
	if !strings.Contains(logs, "loading snapshot 2-100-1 (4.00M)") || !strings.Contains(logs, "loaded snapshot 2-100-1 (4.00M) in") {
		t.Fatalf("log:\n%s", logs)
	}
}

// TestFailedSnapshotLeavesNoTmp: a snapshot that fails on a full disk
// leaves no .tmp directory behind.
func TestFailedSnapshotLeavesNoTmp(t *testing.T) {
	mnt := testutil.MountTmpfs(t, 1<<20)
	ss, err := openSnapStore(mnt, hclog.NewNullLogger(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	free := testutil.FillDisk(t, filepath.Join(mnt, "filler"), 0)
	defer free()
	for i := range 3 {
		sink, err := ss.Create(1, uint64(10+i), 1, raft.Configuration{}, 1, nil)
		if err == nil {
			_, werr := sink.Write(bytes.Repeat([]byte("x"), 2<<20))
			if werr == nil {
				err = sink.Close()
			} else {
				err = werr
				if i%2 == 0 {
					sink.Cancel()
				} else {
					sink.Close()
				}
			}
		}
		if err == nil {
			t.Fatal("a 2 MB snapshot on a full 1 MB disk succeeded")
		}
		if _, tmp := snapshotDirs(t, mnt); len(tmp) != 0 {
			t.Fatalf("failed snapshot left %v (err %v)", tmp, err)
		}
	}
}
