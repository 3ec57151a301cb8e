package logstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"streamd/internal/testutil"
)

// Disk-full tests on a small tmpfs (skipped where mounting is not allowed):
// the wal store refuses appends while a new segment cannot be created,
// takes them again by itself once space is freed, and a store reopened at
// any point — disk still full or not — holds every acknowledged entry or
// refuses with what to do.

// entry is log entry i (4 KiB of data naming i).
func entry(i uint64) *raft.Log {
	data := bytes.Repeat([]byte(fmt.Sprintf("entry %08d ", i)), 4096/15)
	return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: data}
}

// appendUntilFull appends entries after last until an append fails and
// returns the last acknowledged index and the error.
func appendUntilFull(t *testing.T, s Store, last uint64) (uint64, error) {
	t.Helper()
	for range 100000 {
		if err := s.StoreLogs([]*raft.Log{entry(last + 1)}); err != nil {
			return last, err
		}
		last++
	}
	t.Fatal("the disk never filled")
	return 0, nil
}

// requireEntries checks that s holds entries 1..last as written.
func requireEntries(t *testing.T, s Store, last uint64) {
	t.Helper()
	if got, err := s.LastIndex(); err != nil || got != last {
		t.Fatalf("LastIndex = %d, %v; want %d", got, err, last)
	}
	for i := uint64(1); i <= last; i++ {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if !bytes.Equal(l.Data, entry(i).Data) {
			t.Fatalf("entry %d reads back wrong", i)
		}
	}
}

// TestWALDiskFullRecoversInPlace fills the disk in the append that seals a
// segment (leave 0) or in the rotation after it (leave 64 KiB), then frees
// it: appends resume without a restart.
func TestWALDiskFullRecoversInPlace(t *testing.T) {
	for _, leave := range []int64{0, 64 << 10} {
		t.Run(fmt.Sprintf("leave=%d", leave), func(t *testing.T) { diskFullRecovers(t, leave) })
	}
}

func diskFullRecovers(t *testing.T, leave int64) {
	mnt := testutil.MountTmpfs(t, 4<<20)
	t.Cleanup(SetSegmentSizeForTest(256 << 10))
	dir := filepath.Join(mnt, "data")
	s, err := Open(dir, Options{Kind: WAL})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var last uint64
	for ; last < 100; last++ { // a few segments
		if err := s.StoreLogs([]*raft.Log{entry(last + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	free := testutil.FillDisk(t, filepath.Join(mnt, "filler"), leave)
	last, err = appendUntilFull(t, s, last)
	if !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "writes resume once space is freed") {
		t.Fatalf("append on a full disk: %v", err)
	}
	// Still refused, at once, while the disk stays full.
	for range 3 {
		if err := s.StoreLogs([]*raft.Log{entry(last + 1)}); err == nil || !strings.Contains(err.Error(), "no space left") {
			t.Fatalf("append while still full: %v", err)
		}
	}
	if err := s.LastWriteError(); err == nil {
		t.Fatal("LastWriteError is nil after a failed append")
	}
	requireEntries(t, s, last)
	free()
	start := time.Now()
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		return s.StoreLogs([]*raft.Log{entry(last + 1)})
	})
	t.Logf("appends resumed %v after the disk was freed", time.Since(start).Round(time.Millisecond))
	last++
	for range 200 { // and go on across further rotations
		if err := s.StoreLogs([]*raft.Log{entry(last + 1)}); err != nil {
			t.Fatal(err)
		}
		last++
	}
	if err := s.LastWriteError(); err != nil {
		t.Fatalf("LastWriteError after recovery: %v", err)
	}
	requireEntries(t, s, last)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir, WAL)
	requireEntries(t, s, last)
}

// TestWALDiskFullRestart stops the store (as a SIGKILL would: everything
// acknowledged is fsynced) after the disk filled either in the append that
// sealed a segment (no room for its last bytes: leave 0) or in the rotation
// after it (room for the append but not for the new preallocated segment:
// raft-wal committed the new tail to wal-meta.db and its file is empty), and
// opens it again with the disk still full, then freed.
func TestWALDiskFullRestart(t *testing.T) {
	for _, leave := range []int64{0, 64 << 10} {
		for _, freeFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("leave=%d/freed=%v", leave, freeFirst), func(t *testing.T) {
				diskFullRestart(t, leave, freeFirst)
			})
		}
	}
}

func diskFullRestart(t *testing.T, leave int64, freeFirst bool) {
	mnt := testutil.MountTmpfs(t, 4<<20)
	t.Cleanup(SetSegmentSizeForTest(256 << 10))
	dir := filepath.Join(mnt, "data")
	s := openT(t, dir, WAL)
	var last uint64
	for ; last < 100; last++ {
		if err := s.StoreLogs([]*raft.Log{entry(last + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	free := testutil.FillDisk(t, filepath.Join(mnt, "filler"), leave)
	last, _ = appendUntilFull(t, s, last)
	s.Close()
	if leave > 0 {
		st, err := ReadWALMetaForTest(filepath.Join(dir, "wal", "wal-meta.db"))
		if err != nil {
			t.Fatal(err)
		}
		tail := st.Segments[len(st.Segments)-1]
		if !tail.SealTime.IsZero() || tail.BaseIndex != last+1 {
			t.Fatalf("expected a committed rotation to an empty tail at %d: %+v", last+1, tail)
		}
	}
	if !freeFirst {
		s, err := Open(dir, Options{Kind: WAL})
		switch {
		case err != nil:
			// No room to create the tail segment: refused, saying what
			// to do, and nothing left behind.
			if !strings.Contains(err.Error(), "is full: free space there; the log is intact") {
				t.Fatalf("Open on a full disk: %v", err)
			}
			segs, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
			for _, p := range segs {
				if fi, err := os.Stat(p); err == nil && fi.Size() == 0 {
					t.Fatalf("Open on a full disk left the empty segment file %s", p)
				}
			}
		case leave > 0:
			t.Fatal("Open succeeded on a disk without room for the new tail segment")
		default:
			// The tail is there: it opens, holds everything, and
			// refuses appends until space is freed.
			requireEntries(t, s, last)
			if err := s.StoreLogs([]*raft.Log{entry(last + 1)}); err == nil || !strings.Contains(err.Error(), "no space left") {
				t.Fatalf("append on a full disk after a restart: %v", err)
			}
			s.Close()
		}
	}
	free()
	s = openT(t, dir, WAL)
	defer s.Close()
	requireEntries(t, s, last)
	for range 100 {
		if err := s.StoreLogs([]*raft.Log{entry(last + 1)}); err != nil {
			t.Fatal(err)
		}
		last++
	}
	requireEntries(t, s, last)
}

// TestWALFailedFsyncReopen: an append whose fsync fails reached the file
// with its commit but was never acknowledged; the reopen after it truncates
// it away, so raft's retry of the same index succeeds and the log holds
// the retried entry, not the failed one.
func TestWALFailedFsyncReopen(t *testing.T) {
	t.Cleanup(SetSegmentSizeForTest(256 << 10))
	dir := t.TempDir()
	s := openT(t, dir, WAL)
	defer s.Close()
	for i := uint64(1); i <= 10; i++ {
		if err := s.StoreLogs([]*raft.Log{entry(i)}); err != nil {
			t.Fatal(err)
		}
	}
	w := s.(*walStore)
	w.vfs.mu.Lock()
	w.vfs.failSync = syscall.EIO
	w.vfs.mu.Unlock()
	failed := &raft.Log{Index: 11, Term: 1, Type: raft.LogCommand, Data: []byte("never acknowledged")}
	if err := s.StoreLogs([]*raft.Log{failed}); err == nil || !errors.Is(err, syscall.EIO) {
		t.Fatalf("append with a failing fsync: %v", err)
	}
	if err := s.StoreLogs([]*raft.Log{entry(11)}); err != nil {
		t.Fatalf("retry after the failed fsync: %v", err)
	}
	requireEntries(t, s, 11)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir, WAL)
	requireEntries(t, s, 11)
}
