package main

// Corruption and lock tests on the real binary (issue #3 "Faults"): a data
// directory whose newest snapshot or raft.db was damaged after a clean run
// must make the binary refuse to start — exit non-zero, never answer PING,
// no panic, and a message naming the file and what is wrong — instead of
// starting empty, partial, or from an older snapshot. A second binary on a
// directory in use is refused; a stale LOCK file left by SIGKILL is not.

import (
	"bytes"
	"encoding/binary"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// copyDir copies the regular files under src to dst (created).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		info, err := in.Stat()
		if err != nil {
			return err
		}
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// snapshotDirs lists the raft snapshot directories under dir (those holding
// a meta.json), oldest first by raft's order: term, index, then time.
func snapshotDirs(t *testing.T, dir string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "meta.json" && !strings.HasSuffix(filepath.Dir(path), ".tmp") {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	key := func(p string) []uint64 {
		var k []uint64
		for _, part := range strings.Split(filepath.Base(p), "-") {
			n, _ := strconv.ParseUint(part, 10, 64)
			k = append(k, n)
		}
		return k
	}
	sort.Slice(dirs, func(i, j int) bool {
		a, b := key(dirs[i]), key(dirs[j])
		for x := 0; x < len(a) && x < len(b); x++ {
			if a[x] != b[x] {
				return a[x] < b[x]
			}
		}
		return len(a) < len(b)
	})
	return dirs
}

// newestSnapshot returns the newest snapshot directory under dir, failing
// the test if there is none.
func newestSnapshot(t *testing.T, dir string) string {
	t.Helper()
	dirs := snapshotDirs(t, dir)
	if len(dirs) == 0 {
		t.Fatalf("no snapshot (meta.json) under %s after SIGTERM", dir)
	}
	return dirs[len(dirs)-1]
}

// flipBytes XORs n bytes of file starting at off.
func flipBytes(t *testing.T, file string, off int64, n int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 || off+int64(n) > int64(len(b)) {
		t.Fatalf("%s: %d bytes, cannot flip %d at %d", file, len(b), n, off)
	}
	for i := off; i < off+int64(n); i++ {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// truncateTo shortens file to size bytes.
func truncateTo(t *testing.T, file string, size int64) {
	t.Helper()
	if err := os.Truncate(file, size); err != nil {
		t.Fatal(err)
	}
}

// boltMeta reads the page size and high-water mark (pages in use) from the
// newer valid-looking meta page of a bbolt file. Layout (bbolt's meta page):
// 16-byte page header, then magic, version, pageSize, flags (uint32 each),
// root bucket (16 bytes), freelist pgid, pgid (the high-water mark), txid,
// checksum (uint64 each), little-endian on this platform.
func boltMeta(t *testing.T, file string) (pageSize, hwm int64) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const magic = 0xED0CDAED
	var bestTx uint64
	for _, off := range []int64{0, 4096, 8192, 16384, 65536} {
		if off+80 > int64(len(b)) {
			continue
		}
		m := b[off:]
		if binary.LittleEndian.Uint32(m[16:]) != magic {
			continue
		}
		ps := int64(binary.LittleEndian.Uint32(m[24:]))
		if off != 0 && off != ps {
			continue
		}
		tx := binary.LittleEndian.Uint64(m[64:])
		if pageSize == 0 || tx > bestTx {
			pageSize, hwm, bestTx = ps, int64(binary.LittleEndian.Uint64(m[56:])), tx
		}
	}
	if pageSize == 0 {
		t.Fatalf("%s: no bbolt meta page found", file)
	}
	return pageSize, hwm
}

// preparedDir makes a data directory through two clean runs (workload
// halves, SIGTERM after each) on the given log store ("bolt": raft.db,
// "wal": wal/), so it holds two snapshots and the log. Later starts pass no
// --log-store: the binary must pick the store the directory holds.
func preparedDir(t *testing.T, store string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "prepared")
	port := pickPort(t)
	s := startReady(t, port, dir, "--log-store", store)
	runWorkload(t, port, 0)
	s.terminate()
	s = startReady(t, port, dir)
	runWorkload(t, port, 1)
	s.terminate()
	logFile := map[string]string{"bolt": "raft.db", "wal": filepath.Join("wal", "wal-meta.db")}[store]
	if _, err := os.Stat(filepath.Join(dir, logFile)); err != nil {
		t.Fatalf("no %s after a clean run: %v", logFile, err)
	}
	if n := len(snapshotDirs(t, dir)); n < 2 {
		t.Logf("note: %d snapshot(s) after two clean runs", n)
	}
	return dir
}

// expectRefusal starts the binary on dir and requires it to exit non-zero
// without ever answering PING, with a message (stderr) that matches every
// pattern in want (case-insensitive regexps).
func expectRefusal(t *testing.T, dir string, want ...string) {
	t.Helper()
	port := pickPort(t)
	s := startServer(t, port, dir)
	deadline := time.Now().Add(60 * time.Second)
	for !s.exited() {
		if ping(s.addr()) == nil {
			t.Fatalf("streamd answered PING on a damaged data directory\n%s", s.logs())
		}
		if time.Now().After(deadline) {
			t.Fatalf("streamd still running 60s after start on a damaged data directory\n%s", s.logs())
		}
		s.waitExit(20 * time.Millisecond)
	}
	code := s.exitCode()
	stderr := s.stderr.String()
	t.Logf("refused with exit status %d: %s", code, strings.TrimSpace(stderr))
	if code == 0 {
		t.Fatalf("streamd exited 0 on a damaged data directory\n%s", s.logs())
	}
	if code < 0 {
		t.Fatalf("streamd died of a signal (%v), not a refusal\n%s", s.err, s.logs())
	}
	if strings.Contains(stderr, "panic:") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("streamd panicked instead of refusing:\n%s", stderr)
	}
	if strings.Contains(stderr, "Ready to accept connections") {
		t.Errorf("streamd logged readiness before refusing:\n%s", stderr)
	}
	for _, w := range want {
		if !regexp.MustCompile("(?i)" + w).MatchString(stderr) {
			t.Errorf("stderr does not match %q:\n%s", w, stderr)
		}
	}
}

// TestCorruptionRefusal damages snapshots and the log, on each log store.
func TestCorruptionRefusal(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts the binary many times")
	}
	for _, store := range []string{"wal", "bolt"} {
		t.Run(store, func(t *testing.T) { corruptionRefusal(t, store) })
	}
}

// corruptionRefusal runs the corruption cases on one log store.
func corruptionRefusal(t *testing.T, store string) {
	prepared := preparedDir(t, store)

	// Control: an undamaged copy starts and has the data.
	t.Run("control", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		copyDir(t, prepared, dir)
		port := pickPort(t)
		s := startReady(t, port, dir)
		c := newClient(t, port, 0)
		if n := asInt(t, "XLEN", do(t, c, "XLEN", "orders")); n != 28 {
			t.Errorf("XLEN orders = %d after restart of a copy, want 28", n)
		}
		s.terminate()
	})

	snapReason := `checksum|crc|corrupt|mismatch|invalid|truncat|short|unexpected (eof|end)|size`
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string) (fileName string)
		reason string
	}{
		{"snapshot-byte-flip", func(t *testing.T, dir string) string {
			snap := newestSnapshot(t, dir)
			state := filepath.Join(snap, "state.bin")
			info, err := os.Stat(state)
			if err != nil {
				t.Fatal(err)
			}
			flipBytes(t, state, info.Size()/2, 4)
			return filepath.Base(snap)
		}, snapReason},
		{"snapshot-truncated", func(t *testing.T, dir string) string {
			snap := newestSnapshot(t, dir)
			state := filepath.Join(snap, "state.bin")
			info, err := os.Stat(state)
			if err != nil {
				t.Fatal(err)
			}
			truncateTo(t, state, info.Size()/2)
			return filepath.Base(snap)
		}, snapReason},
		{"snapshot-meta-truncated", func(t *testing.T, dir string) string {
			// raft itself skips a snapshot whose meta.json it cannot read
			// and falls back to an older one: that must be refused too.
			snap := newestSnapshot(t, dir)
			meta := filepath.Join(snap, "meta.json")
			info, err := os.Stat(meta)
			if err != nil {
				t.Fatal(err)
			}
			truncateTo(t, meta, info.Size()/2)
			return filepath.Base(snap)
		}, snapReason + `|meta|json`},
	}
	boltCases := []struct {
		name   string
		damage func(t *testing.T, dir string) (fileName string)
		reason string
	}{
		{"raftdb-truncated", func(t *testing.T, dir string) string {
			db := filepath.Join(dir, "raft.db")
			ps, hwm := boltMeta(t, db)
			size := max(2*ps, (hwm*ps/2)/ps*ps)
			if size >= hwm*ps {
				t.Fatalf("raft.db uses only %d pages of %d bytes; cannot truncate into it", hwm, ps)
			}
			truncateTo(t, db, size)
			return "raft.db"
		}, `truncat|size|short|corrupt|invalid|eof|checksum|page|damaged`},
		{"raftdb-meta-pages-flipped", func(t *testing.T, dir string) string {
			db := filepath.Join(dir, "raft.db")
			ps, _ := boltMeta(t, db)
			flipBytes(t, db, 32, 8)    // meta 0: root bucket page
			flipBytes(t, db, ps+32, 8) // meta 1
			return "raft.db"
		}, `checksum|invalid|corrupt|crc|mismatch`},
	}
	walCases := []struct {
		name   string
		damage func(t *testing.T, dir string) (fileName string)
		reason string
	}{
		{"wal-segment-truncated", func(t *testing.T, dir string) string {
			seg := tailSegment(t, dir)
			b, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			n := len(bytes.TrimRight(b, "\x00"))
			truncateTo(t, seg, int64(n/2))
			return filepath.Base(seg)
		}, `truncat`},
		{"wal-segment-truncated-at-data-end", func(t *testing.T, dir string) string {
			// Cut exactly after the written data: every record is intact,
			// but the file is shorter than it was preallocated.
			seg := tailSegment(t, dir)
			b, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			truncateTo(t, seg, int64(len(bytes.TrimRight(b, "\x00"))))
			return filepath.Base(seg)
		}, `truncat`},
		{"wal-segment-missing", func(t *testing.T, dir string) string {
			seg := tailSegment(t, dir)
			if err := os.Remove(seg); err != nil {
				t.Fatal(err)
			}
			return "wal"
		}, `lost|missing|empty`},
		{"wal-meta-truncated", func(t *testing.T, dir string) string {
			meta := filepath.Join(dir, "wal", "wal-meta.db")
			ps, hwm := boltMeta(t, meta)
			truncateTo(t, meta, max(2*ps, (hwm*ps/2)/ps*ps))
			return "wal-meta.db"
		}, `truncat|size|short|corrupt|invalid|damaged`},
	}
	if store == "bolt" {
		cases = append(cases, boltCases...)
	} else {
		cases = append(cases, walCases...)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			copyDir(t, prepared, dir)
			name := tc.damage(t, dir)
			expectRefusal(t, dir, regexp.QuoteMeta(name), tc.reason)
		})
	}

	// A flipped byte inside a live log record (written after the last
	// snapshot, then SIGKILL so no snapshot covers it): every record, or
	// only the first or only the last of them (the last append before the
	// kill, acknowledged, must not pass for a torn write).
	// (bbolt's copy-on-write pages keep stale copies of records, so only
	// "all" is meaningful there: file order is log order only in wal.)
	variants := []string{"all", "first", "last"}
	if store == "bolt" {
		variants = variants[:1]
	}
	for _, which := range variants {
		t.Run("log-record-flipped-"+which, func(t *testing.T) { flipLogRecord(t, prepared, store, which) })
	}
}

// tailSegment returns the newest wal segment file in dir.
func tailSegment(t *testing.T, dir string) string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no wal segment in %s: %v", dir, err)
	}
	sort.Strings(segs)
	return segs[len(segs)-1]
}

// flipLogRecord writes marked entries after the last snapshot, kills the
// server, flips a byte inside the marker of all, the first or the last
// marked record in the log file, and expects a refusal naming the file.
func flipLogRecord(t *testing.T, prepared, store, which string) {
	{
		dir := filepath.Join(t.TempDir(), "data")
		copyDir(t, prepared, dir)
		port := pickPort(t)
		s := startReady(t, port, dir)
		c := newClient(t, port, 0)
		marker := "MARKER-" + strings.Repeat("x", 40) + "-END"
		for i := range 5 {
			do(t, c, "XADD", "marked", "*", "n", i, "v", marker)
		}
		c.Close()
		s.kill()
		db, name := filepath.Join(dir, "raft.db"), `raft\.db`
		if store == "wal" {
			db = tailSegment(t, dir)
			name = regexp.QuoteMeta(filepath.Base(db))
		}
		b, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		var at []int
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte(marker))
			if j < 0 {
				break
			}
			at = append(at, i+j)
			i += j + len(marker)
		}
		if len(at) == 0 {
			t.Fatalf("marker not found in %s: the log records are not where this test expects them", db)
		}
		switch which {
		case "first":
			at = at[:1]
		case "last":
			at = at[len(at)-1:]
		}
		for _, i := range at {
			b[i+10] ^= 0x5a
		}
		if err := os.WriteFile(db, b, 0o600); err != nil {
			t.Fatal(err)
		}
		expectRefusal(t, dir, name, `checksum|crc|corrupt|mismatch|damaged`)
	}
}

func TestDataDirLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	portA := pickPort(t)
	a := startReady(t, portA, dir)
	c := newClient(t, portA, 0)
	do(t, c, "XADD", "s", "1-1", "f", "v")

	expectRefusal(t, dir, `in use`, `LOCK`)
	if err := ping(a.addr()); err != nil {
		t.Fatalf("first server stopped answering after the refused second start: %v", err)
	}
	if n := asInt(t, "XLEN", do(t, c, "XLEN", "s")); n != 1 {
		t.Fatalf("XLEN s = %d on the first server, want 1", n)
	}
	c.Close()

	// SIGKILL leaves the LOCK file behind; the lock itself dies with the
	// process, so the next start succeeds.
	a.kill()
	portB := pickPort(t)
	b := startReady(t, portB, dir)
	c = newClient(t, portB, 0)
	if n := asInt(t, "XLEN", do(t, c, "XLEN", "s")); n != 1 {
		t.Fatalf("XLEN s = %d after SIGKILL and restart, want 1", n)
	}
	c.Close()
	b.terminate()
}
