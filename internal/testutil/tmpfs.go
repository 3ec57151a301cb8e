package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// MountTmpfs mounts a tmpfs of size bytes on a new directory under the
// test's temporary directory and unmounts it at cleanup, so a test can fill
// a disk. Where mounting is not permitted (not root, no CAP_SYS_ADMIN) the
// test is skipped with a message (CI runs as root).
func MountTmpfs(t testing.TB, size int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (needs root; CI runs as root): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// FillDisk writes the file path until the file system holding it is full,
// then gives back leave bytes (rounded to pages by the file system), and
// returns the function that removes the file again.
func FillDisk(t testing.TB, path string, leave int64) (free func()) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for len(buf) > 0 {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", path, err)
			}
			buf = buf[:len(buf)/2] // fill the last pages too
		}
	}
	if leave > 0 {
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(max(0, fi.Size()-leave)); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatalf("free the disk: %v", err)
		}
	}
}
