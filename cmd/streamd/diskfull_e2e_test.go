package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// Disk full, on the real binary over a small tmpfs (skipped where mounting
// is not allowed; CI runs as root): writes answer MISCONF while the disk is
// full, succeed again within seconds once space is freed (no restart), and
// a SIGKILL at any point — disk still full or freed — followed by a restart
// either serves every acknowledged write or refuses, saying the disk is
// full; after freeing space the restart serves them all.

// diskFullValue is the field value of each XADD (32 KiB: the 64 MiB wal
// segment fills in about 2000 writes).
var diskFullValue = strings.Repeat("v", 32<<10)

// diskFullWrites tracks a stream's acknowledged and unknown-outcome writes.
type diskFullWrites struct {
	acked   []string // IDs of acknowledged XADDs, in order
	unknown int      // writes whose outcome is unknown (may be applied)
}

// xaddUntilMisconf adds entries to stream s until a write answers MISCONF
// and returns that error.
func (w *diskFullWrites) xaddUntilMisconf(t *testing.T, c *redis.Client) error {
	t.Helper()
	for range 20000 {
		id, err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: "s", Values: []string{"f", diskFullValue}}).Result()
		switch {
		case err == nil:
			w.acked = append(w.acked, id)
			continue
		case strings.HasPrefix(err.Error(), "MISCONF"):
			return err
		case strings.Contains(err.Error(), "outcome unknown"):
			w.unknown++
			continue
		}
		t.Fatalf("XADD on a filling disk: %v", err)
	}
	t.Fatal("the disk never filled")
	return nil
}

// check requires the server on port to hold every acknowledged entry (and
// at most the unknown ones besides).
func (w *diskFullWrites) check(t *testing.T, port int) {
	t.Helper()
	c := newClient(t, port, 0)
	ctx := context.Background()
	n, err := c.XLen(ctx, "s").Result()
	if err != nil {
		t.Fatal(err)
	}
	if n < int64(len(w.acked)) || n > int64(len(w.acked)+w.unknown) {
		t.Fatalf("XLEN = %d, want %d acknowledged (+ up to %d unknown)", n, len(w.acked), w.unknown)
	}
	start := "-"
	got := 0
	for got < len(w.acked) {
		msgs, err := c.XRangeN(ctx, "s", start, "+", 200).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if got < len(w.acked) && m.ID == w.acked[got] {
				got++
			}
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
	if got != len(w.acked) {
		t.Fatalf("acknowledged entry %s (%d of %d) is missing", w.acked[got], got, len(w.acked))
	}
}

// requireNoTmpSnapshots fails if dir/snapshots holds an unfinished snapshot.
func requireNoTmpSnapshots(t *testing.T, dir string) {
	t.Helper()
	// A snapshot the restarted server is taking right now is a .tmp
	// directory too, until it is renamed: wait for it. One left behind by
	// an earlier run never goes.
	testutil.Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
		tmp, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*.tmp"))
		if len(tmp) > 0 {
			return fmt.Errorf("unfinished snapshot directories left behind: %v", tmp)
		}
		return nil
	})
}

func TestDiskFullE2E(t *testing.T) {
	// leave: the space left free beside the filler. 0 fills the disk in
	// the wal append that seals the tail segment; 64 KiB lets that append
	// through and fills it in the rotation (the new segment's preallocation).
	for _, c := range []struct {
		store string
		leave int64
	}{{"wal", 0}, {"wal", 64 << 10}, {"bolt", 0}} {
		for _, kill := range []string{"freed", "full"} {
			t.Run(fmt.Sprintf("%s/leave=%d/kill-while-%s", c.store, c.leave, kill), func(t *testing.T) {
				diskFullE2E(t, c.store, c.leave, kill == "full")
			})
		}
	}
}

func diskFullE2E(t *testing.T, store string, leave int64, killWhileFull bool) {
	// Once freed, room for two 64 MiB wal segments (the tail and the one
	// it rolls to) and a snapshot of the ~64 MB written.
	mnt := testutil.MountTmpfs(t, 256<<20)
	dir := filepath.Join(mnt, "data")
	port := pickPort(t)
	srv := startReady(t, port, dir, "--log-store", store)
	c := newClient(t, port, 0)
	var w diskFullWrites
	for range 100 {
		id, err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: "s", Values: []string{"f", diskFullValue}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		w.acked = append(w.acked, id)
	}
	free := testutil.FillDisk(t, filepath.Join(mnt, "filler"), leave)
	err := w.xaddUntilMisconf(t, c)
	if !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("MISCONF does not say the disk is full: %v", err)
	}
	t.Logf("%d writes acknowledged before: %v", len(w.acked), err)
	// Refused for as long as the disk stays full.
	for range 5 {
		if err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: "s", Values: []string{"f", "x"}}).Err(); err == nil || !strings.HasPrefix(err.Error(), "MISCONF") {
			t.Fatalf("XADD on a full disk: %v", err)
		}
	}
	if killWhileFull {
		srv.kill()
		srv = startServer(t, port, dir, "--log-store", store)
		testutil.Eventually(t, 60*time.Second, 20*time.Millisecond, func() error {
			if srv.exited() {
				return nil
			}
			return pingAuth(srv.addr(), "")
		})
		if srv.exited() {
			// Refused: it must say the disk is full and what to do.
			logs := srv.logs()
			if !strings.Contains(logs, "no space left on device") || !strings.Contains(logs, "free space there") ||
				strings.Contains(logs, "not the leader") {
				t.Fatalf("restart on a full disk refused without saying why:\n%s", logs)
			}
			t.Logf("restart on a full disk refused: %s", lastLine(logs, "no space left"))
		} else {
			w.check(t, port)
			srv.kill()
		}
		free()
		srv = startReady(t, port, dir, "--log-store", store)
		w.check(t, port)
		c = newClient(t, port, 0)
		if err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: "s", Values: []string{"f", "after"}}).Err(); err != nil {
			t.Fatalf("XADD after freeing space and restarting: %v", err)
		}
		requireNoTmpSnapshots(t, dir)
		return
	}
	free()
	freed := time.Now()
	testutil.Eventually(t, 20*time.Second, 50*time.Millisecond, func() error {
		id, err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: "s", Values: []string{"f", "after"}}).Result()
		if err == nil {
			w.acked = append(w.acked, id)
		} else if strings.Contains(err.Error(), "outcome unknown") {
			w.unknown++
		}
		return err
	})
	t.Logf("writes resumed %v after the disk was freed", time.Since(freed).Round(time.Millisecond))
	for range 50 { // and keep working
		id, err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: "s", Values: []string{"f", diskFullValue}}).Result()
		if err != nil {
			t.Fatalf("XADD after the disk was freed: %v", err)
		}
		w.acked = append(w.acked, id)
	}
	srv.kill()
	srv = startReady(t, port, dir, "--log-store", store)
	w.check(t, port)
	requireNoTmpSnapshots(t, dir)
	srv.terminate()
}

// lastLine returns the last line of logs containing s.
func lastLine(logs, s string) string {
	lines := strings.Split(logs, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return lines[i]
		}
	}
	return fmt.Sprintf("(no line with %q)", s)
}

// TestSnapshotByLogSizeE2E: with large writes the server snapshots by log
// size (snapshot-log-size) long before 8192 entries, keeps one snapshot on
// disk, and a restart logs the loading of it.
func TestSnapshotByLogSizeE2E(t *testing.T) {
	dir := t.TempDir()
	port := pickPort(t)
	srv := startReady(t, port, dir, "--snapshot-log-size", "1mb")
	c := newClient(t, port, 0)
	var w diskFullWrites
	for range 200 { // 6.4 MB in at most 200 entries
		id, err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: "s", Values: []string{"f", diskFullValue}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		w.acked = append(w.acked, id)
	}
	var snaps []string
	testutil.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		all, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*"))
		snaps = all
		if len(all) != 1 || strings.HasSuffix(all[0], ".tmp") {
			return fmt.Errorf("snapshots on disk: %v, want exactly one", all)
		}
		return nil
	})
	srv.kill()
	srv = startReady(t, port, dir)
	w.check(t, port)
	id := filepath.Base(snaps[0])
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		// The snapshot on disk may have been replaced by a newer one
		// before the kill: any loading line will do, naming a snapshot.
		if !strings.Contains(srv.logs(), "loading snapshot ") || !strings.Contains(srv.logs(), "loaded snapshot ") {
			return fmt.Errorf("no loading lines (snapshot %s):\n%s", id, srv.logs())
		}
		return nil
	})
	srv.terminate()
}
