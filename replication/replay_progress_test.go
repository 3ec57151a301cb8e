package replication

import (
	"bytes"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"streamd/internal/testutil"
	"streamd/replication/wire"
)

// lockedBuffer is a bytes.Buffer safe for a logger and a test at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// slowReads is a log store whose reads take a while, as a slow disk's
// would: the start-up replay of a short log then lasts long enough to
// report progress.
type slowReads struct {
	raft.LogStore
	delay time.Duration
}

func (s slowReads) GetLog(index uint64, l *raft.Log) error {
	time.Sleep(s.delay)
	return s.LogStore.GetLog(index, l)
}

var replayLine = regexp.MustCompile(`replaying: applied (\d+) of (\d+) entries \((\d+)/s\), ETA (\d+s|unknown)`)

// TestReplayProgress: a single node whose start-up replay lasts longer
// than the progress interval logs "replaying: applied X of Y entries
// (Z/s), ETA Ns" lines with X growing up to Y, then the total time; a
// replay shorter than the interval (the default second) logs none.
func TestReplayProgress(t *testing.T) {
	dir := t.TempDir()
	const n = 300
	s, err := Open(Options{Dir: dir, Fsync: FsyncEverySec, SnapshotThreshold: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := s.Propose(xadd("s", "i", strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}

	var out lockedBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	s, err = open(Options{Dir: dir, Fsync: FsyncEverySec, SnapshotThreshold: 1 << 30, Logger: log}, hooks{
		progressEvery: 10 * time.Millisecond,
		wrapLogs:      func(ls raft.LogStore) raft.LogStore { return slowReads{ls, time.Millisecond} },
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Query(wire.XLen{Base: wire.Base{Key: "s"}})
	s.Close(false)
	if err != nil || res != int64(n) {
		t.Fatalf("XLEN after the replay = %v, %v; want %d", res, err, n)
	}
	text := out.String()
	lines := replayLine.FindAllStringSubmatch(text, -1)
	if len(lines) < 2 {
		t.Fatalf("want progress lines, log:\n%s", text)
	}
	prev := uint64(0)
	for _, m := range lines {
		x, _ := strconv.ParseUint(m[1], 10, 64)
		y, _ := strconv.ParseUint(m[2], 10, 64)
		if y < n || y > n+5 || x > y || x < prev {
			t.Fatalf("progress line %q: want X growing up to Y, Y about %d; log:\n%s", m[0], n, text)
		}
		prev = x
	}
	if prev == 0 {
		t.Fatalf("no progress reported; log:\n%s", text)
	}
	if !regexp.MustCompile(`replayed \d+ log entries in \d+\.\ds`).MatchString(text) {
		t.Fatalf("no final replay line; log:\n%s", text)
	}

	var quiet lockedBuffer
	log = slog.New(slog.NewTextHandler(&quiet, nil))
	s, err = Open(Options{Dir: dir, Fsync: FsyncEverySec, SnapshotThreshold: 1 << 30, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(false)
	if text := quiet.String(); replayLine.MatchString(text) {
		t.Fatalf("a replay shorter than a second reported progress:\n%s", text)
	}
}

// TestClusterReplayProgress: a cluster member (here the only voter of a
// networked group) replays its log in the background after Open and
// reports it the same way until it has caught up.
func TestClusterReplayProgress(t *testing.T) {
	dir := t.TempDir()
	const n = 300
	opts := func(log *slog.Logger, boot []Member) Options {
		_, trans := raft.NewInmemTransport("n1")
		return Options{Dir: dir, Fsync: FsyncEverySec, SnapshotThreshold: 1 << 30, NodeID: "n1",
			Transport: trans, Bootstrap: boot, Logger: log,
			Timing: Timing{Heartbeat: 50 * time.Millisecond, Election: 50 * time.Millisecond, LeaderLease: 50 * time.Millisecond}}
	}
	s, err := Open(opts(nil, []Member{{ID: "n1", RaftAddr: "n1", Voter: true}}))
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		if !s.IsLeader() {
			return errors.New("not leading yet")
		}
		return nil
	})
	for i := 0; i < n; i++ {
		if _, err := s.Propose(xadd("s", "i", strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}

	var out lockedBuffer
	s, err = open(opts(slog.New(slog.NewTextHandler(&out, nil)), nil), hooks{
		progressEvery: 10 * time.Millisecond,
		wrapLogs:      func(ls raft.LogStore) raft.LogStore { return slowReads{ls, time.Millisecond} },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(false)
	testutil.Eventually(t, 20*time.Second, 10*time.Millisecond, func() error {
		text := out.String()
		if !replayLine.MatchString(text) || !regexp.MustCompile(`replayed \d+ log entries in \d+\.\ds`).MatchString(text) {
			return errors.New("no progress and final lines yet:\n" + text)
		}
		return nil
	})
	res, err := s.Query(wire.XLen{Base: wire.Base{Key: "s"}})
	if err != nil || res != int64(n) {
		t.Fatalf("XLEN after the replay = %v, %v; want %d", res, err, n)
	}
}
