package replication

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Snapshot files: raft's FileSnapshotStore in <dir>/snapshots keeping only
// the newest snapshot (all raft needs: a restart restores the newest, and
// validate refuses rather than fall back to an older one), with the
// directories of failed snapshots (<id>.tmp) removed — raft leaves them
// behind when a write fails, e.g. on a full disk — and the progress of
// loading a large snapshot logged.

// snapshotsRetained is how many finished snapshots are kept on disk.
const snapshotsRetained = 1

// snapshotProgressEvery is how often loading a snapshot logs its progress;
// tests lower it through hooks.progressEvery.
const snapshotProgressEvery = 2 * time.Second

// snapStore is raft's FileSnapshotStore that cleans up after a failed
// snapshot.
type snapStore struct {
	*raft.FileSnapshotStore
	dir string // <data dir>/snapshots
	log *slog.Logger
}

// openSnapStore opens the snapshot store in dataDir/snapshots, first
// removing the .tmp directories of snapshots that were being written when
// the process stopped or that failed.
func openSnapStore(dataDir string, hlog hclog.Logger, log *slog.Logger) (*snapStore, error) {
	dir := filepath.Join(dataDir, "snapshots")
	removeTmpSnapshots(dir, "", log)
	fss, err := raft.NewFileSnapshotStoreWithLogger(dataDir, snapshotsRetained, hlog)
	if err != nil {
		return nil, err
	}
	return &snapStore{FileSnapshotStore: fss, dir: dir, log: log}, nil
}

// removeTmpSnapshots removes dir's unfinished snapshot directories (*.tmp)
// whose names start with prefix ("" for all).
func removeTmpSnapshots(dir, prefix string, log *slog.Logger) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasSuffix(e.Name(), ".tmp") || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(path); err != nil {
			log.Warn("cannot remove an unfinished snapshot", "dir", path, "err", err)
			continue
		}
		log.Info("removed an unfinished snapshot", "dir", path)
	}
}

// Create starts a snapshot; if that fails, its .tmp directory is removed.
func (s *snapStore) Create(version raft.SnapshotVersion, index, term uint64, conf raft.Configuration,
	confIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.FileSnapshotStore.Create(version, index, term, conf, confIndex, trans)
	if err != nil {
		removeTmpSnapshots(s.dir, fmt.Sprintf("%d-%d-", term, index), s.log)
		return nil, err
	}
	return &cleanSink{SnapshotSink: sink, tmp: filepath.Join(s.dir, sink.ID()+".tmp")}, nil
}

// cleanSink removes its .tmp directory when the snapshot fails.
type cleanSink struct {
	raft.SnapshotSink
	tmp string
}

// Close finishes the snapshot; on failure the unfinished directory goes.
func (c *cleanSink) Close() error {
	err := c.SnapshotSink.Close()
	if err != nil {
		os.RemoveAll(c.tmp)
	}
	return err
}

// Cancel abandons the snapshot and removes its directory (raft's Cancel
// leaves it when flushing the buffered data fails).
func (c *cleanSink) Cancel() error {
	err := c.SnapshotSink.Cancel()
	if rerr := os.RemoveAll(c.tmp); err == nil {
		err = rerr
	}
	return err
}

// progressReader counts the bytes read through it.
type progressReader struct {
	r io.Reader
	n atomic.Int64
}

// Read reads from the underlying reader.
func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n.Add(int64(n))
	return n, err
}

// loadingSnapshot logs "loading snapshot <id> (<size>)", then every `every`
// how far reading r has got, and returns the reader to read the snapshot
// through and the function to call when done (it logs the time taken).
func loadingSnapshot(log *slog.Logger, id string, size int64, r io.Reader, every time.Duration) (io.Reader, func()) {
	if every <= 0 {
		every = snapshotProgressEvery
	}
	log.Info(fmt.Sprintf("loading snapshot %s (%s)", id, humanBytes(size)))
	pr := &progressReader{r: r}
	start := time.Now()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				log.Info(fmt.Sprintf("loaded snapshot %s (%s) in %.1fs", id, humanBytes(pr.n.Load()), time.Since(start).Seconds()))
				return
			case <-t.C:
			}
			n := pr.n.Load()
			pct := 100.0
			if size > 0 {
				pct = min(100, 100*float64(n)/float64(size))
			}
			log.Info(fmt.Sprintf("loading snapshot %s: %.0f%% (%s of %s)", id, pct, humanBytes(n), humanBytes(size)))
		}
	}()
	return pr, func() {
		close(done)
		<-finished
	}
}

// humanBytes formats a size as Redis's INFO does (e.g. 407.12M).
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// sizeSnapshotRetry is how long a failed snapshot by log size holds the
// next one back.
const sizeSnapshotRetry = 10 * time.Second

// snapshotBySize asks raft for a snapshot (in the background: raft takes it
// on its own goroutines, which wait for this FSM call to return) once the
// entries applied since the last snapshot hold Options.SnapshotLogSize
// bytes. raft's SnapshotThreshold counts entries, which hold up to 128 (512
// in a cluster) commands each: with large commands the log would grow far
// beyond what a snapshot needs to replace.
func (f *fsm) snapshotBySize(total int64) {
	limit := f.s.opts.SnapshotLogSize
	if limit <= 0 || total-f.snapBase.Load() < limit || !f.raftSet.Load() ||
		time.Now().UnixNano() < f.sizeSnapAfter.Load() || !f.sizeSnap.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer f.sizeSnap.Store(false)
		// Entries applied while a snapshot is written may reach the
		// limit again: go on until they do not.
		for f.logBytes.Load()-f.snapBase.Load() >= limit {
			err := f.s.view().Snapshot().Error()
			if errors.Is(err, raft.ErrNothingNewToSnapshot) || errors.Is(err, raft.ErrRaftShutdown) {
				return
			}
			if err != nil {
				f.sizeSnapAfter.Store(time.Now().Add(sizeSnapshotRetry).UnixNano())
				f.s.opts.Logger.Warn("snapshot by log size failed; retrying in 10s", "err", err)
				return
			}
		}
	}()
}
