package logstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dirLock is an exclusive flock on <dir>/LOCK, held while a Store has the
// data directory open (Open takes it, Close releases it), so that two processes never share one log. The
// kernel drops it if the process dies, so a crash never leaves a stale lock.
type dirLock struct{ f *os.File }

// lockDir takes the lock on dir's LOCK file, creating it if needed.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if err == unix.EWOULDBLOCK {
			return nil, fmt.Errorf("data directory %s is in use by another process (%s is locked)", dir, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &dirLock{f: f}, nil
}

// release drops the lock (the file stays: removing it would let a third
// process lock a fresh inode while a second one still holds the old one).
func (l *dirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// releaseAfter releases the lock after a close that returned err, and
// returns err joined with the release's error, if any.
func (l *dirLock) releaseAfter(err error) error {
	if rerr := l.release(); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}
