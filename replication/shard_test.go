package replication

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"streamd/replication/wire"
	"streamd/streams"
)

func xadd(key string, fv ...string) wire.XAdd {
	c := wire.XAdd{Base: wire.Base{Key: key}, ID: streams.IDSpec{Auto: true}, Trim: wire.Trim{Limit: -1}}
	for _, s := range fv {
		c.Fields = append(c.Fields, []byte(s))
	}
	return c
}

// mustOpen opens a shard and closes it (without saving) when the test ends.
func mustOpen(t testing.TB, opts Options) *Shard {
	t.Helper()
	return mustOpenHooks(t, opts, hooks{})
}

// mustOpenRaft is mustOpen of a single node whose writes keep going
// through raft (no goLocal): tests of raft's write path, run on one node.
func mustOpenRaft(t testing.TB, opts Options) *Shard {
	t.Helper()
	return mustOpenHooks(t, opts, hooks{raftWrites: true})
}

func mustOpenHooks(t testing.TB, opts Options, h hooks) *Shard {
	t.Helper()
	s, err := open(opts, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(false) })
	return s
}

// snapshotBytes serialises the shard's keyspace (canonical: equal states
// give equal bytes).
func snapshotBytes(t testing.TB, s *Shard) []byte {
	t.Helper()
	var buf bytes.Buffer
	s.mu.RLock()
	err := s.ks.WriteSnapshot(&buf)
	s.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func propose(t testing.TB, s *Shard, cmd wire.Command) any {
	t.Helper()
	res, err := s.Propose(cmd)
	if err != nil {
		t.Fatalf("%T: %v", cmd, err)
	}
	return res
}

func TestProposeQuery(t *testing.T) {
	s := NewShard()
	defer s.Close(false)
	id := propose(t, s, xadd("s", "f", "v"))
	if _, ok := id.(streams.ID); !ok {
		t.Fatalf("xadd result %T %v", id, id)
	}
	if res, err := s.Query(wire.XLen{Base: wire.Base{Key: "s"}}); err != nil || res != int64(1) {
		t.Fatalf("xlen %v %v", res, err)
	}
	// An engine error is the proposal's error, not a replication failure.
	_, err := s.Propose(wire.XGroupCreate{Base: wire.Base{Key: "nokey"}, Group: "g", EntriesRead: -1})
	if err == nil || !strings.HasPrefix(err.Error(), "ERR The XGROUP subcommand requires the key to exist") {
		t.Fatalf("xgroup create on missing key: %v", err)
	}
	if s.NodeMaxEntries() != streams.DefaultNodeMaxEntries || s.NodeMaxBytes() != 4096 {
		t.Fatal("default node settings")
	}
	st := s.Stats()
	if st.Durable || st.Proposals != 2 || st.ChangesSinceSave != 2 || st.AppliedIndex == 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestProposeClockNeverGoesBack(t *testing.T) {
	var mu sync.Mutex
	times := []int64{1000, 900, 1200}
	i := 0
	clock := func() int64 {
		mu.Lock()
		defer mu.Unlock()
		now := times[min(i, len(times)-1)]
		i++
		return now
	}
	s, err := open(Options{}, hooks{clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(false)
	want := []streams.ID{{Ms: 1000}, {Ms: 1000, Seq: 1}, {Ms: 1200}}
	for j, w := range want {
		if res := propose(t, s, xadd("s", "f", "v")); res != w {
			t.Fatalf("xadd %d = %v; want %v", j, res, w)
		}
	}
}

func TestQueryUsesClampedClock(t *testing.T) {
	var mu sync.Mutex
	now := int64(1000)
	clock := func() int64 { mu.Lock(); defer mu.Unlock(); return now }
	set := func(v int64) { mu.Lock(); now = v; mu.Unlock() }
	s, err := open(Options{}, hooks{clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(false)
	propose(t, s, xadd("k", "f", "v"))
	propose(t, s, wire.Expire{Base: wire.Base{Key: "k"}, Ms: 100, Relative: true})
	set(500) // the clock steps back: the key keeps its remaining time from 1000
	if res, _ := s.Query(wire.TTL{Base: wire.Base{Key: "k"}, Millis: true}); res != int64(100) {
		t.Fatalf("pttl %v, want 100", res)
	}
	set(1100)
	if res, _ := s.Query(wire.Exists{Names: []string{"k"}}); res != int64(0) {
		t.Fatalf("exists after deadline %v", res)
	}
}

// TestBatchOrder: proposals issued before any is awaited enter the log in
// call order (their "*" IDs increase in call order), from one pipeline and
// from many concurrent proposers, and are packed into shared entries.
func TestBatchOrder(t *testing.T) {
	s := NewShard()
	defer s.Close(false)
	const workers, per = 8, 300
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("s%d", w%2) // two keys shared by 4 workers each
			ps := make([]*Pending, per)
			for i := range ps {
				ps[i] = s.ProposeAsync(xadd(key, "w", fmt.Sprint(w), "i", fmt.Sprint(i)))
			}
			var last streams.ID
			for i, p := range ps {
				res, err := p.Wait()
				if err != nil {
					t.Error(err)
					return
				}
				id := res.(streams.ID)
				if i > 0 && id.Compare(last) <= 0 {
					t.Errorf("worker %d: proposal %d got %v after %v", w, i, id, last)
					return
				}
				last = id
			}
		}()
	}
	// Readers run alongside (race detector coverage of Query vs Apply).
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if _, err := s.Query(wire.XRange{Base: wire.Base{Key: "s0"}, End: streams.MaxID, Count: 10}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var total int64
	for _, k := range []string{"s0", "s1"} {
		res, _ := s.Query(wire.XLen{Base: wire.Base{Key: k}})
		total += res.(int64)
	}
	if total != workers*per {
		t.Fatalf("xlen total %d, want %d", total, workers*per)
	}
	// Within one worker, entries appear in XRANGE in call order.
	res, _ := s.Query(wire.XRange{Base: wire.Base{Key: "s0"}, End: streams.MaxID, Count: -1})
	next := map[string]int{}
	for _, e := range res.([]streams.Entry) {
		w, i := string(e.Fields[1]), string(e.Fields[3])
		if i != fmt.Sprint(next[w]) {
			t.Fatalf("worker %s: entry %s out of order (want %d)", w, i, next[w])
		}
		next[w]++
	}
	st := s.Stats()
	if st.Proposals != workers*per || st.Batches <= 0 || st.Batches > st.Proposals {
		t.Fatalf("stats %+v", st)
	}
	t.Logf("%d proposals in %d entries", st.Proposals, st.Batches)
}

func TestCloseRefusesProposals(t *testing.T) {
	s := NewShard()
	propose(t, s, xadd("s", "f", "v"))
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Propose(xadd("s", "f", "v")); !errors.Is(err, ErrShuttingDown) || err.Error() != "ERR server is shutting down" {
		t.Fatalf("propose after close: %v", err)
	}
	if err := s.Close(true); err != nil { // idempotent
		t.Fatal(err)
	}
	if st := s.Stats(); st.Proposals != 1 { // still answers after Close
		t.Fatalf("stats after close %+v", st)
	}
	if res, err := s.Query(wire.XLen{Base: wire.Base{Key: "s"}}); err != nil || res != int64(1) {
		t.Fatalf("query after close %v %v", res, err)
	}
}

func TestFSMRestoreAndCorruptEntry(t *testing.T) {
	src := NewShard()
	defer src.Close(false)
	propose(t, src, xadd("s", "f", "v"))
	propose(t, src, wire.XGroupCreate{Base: wire.Base{Key: "s"}, Group: "g", EntriesRead: -1})
	want := snapshotBytes(t, src)

	s := NewShard()
	defer s.Close(false)
	if err := s.fsm.Restore(io.NopCloser(bytes.NewReader(want))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snapshotBytes(t, s), want) {
		t.Fatal("restored state differs")
	}
	if err := s.fsm.Restore(io.NopCloser(bytes.NewReader(want[:len(want)-1]))); err == nil {
		t.Fatal("truncated snapshot restored")
	}

	// A committed entry that does not decode stops the state machine,
	// naming the index.
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "committed log entry 42 does not decode") {
			t.Fatalf("panic %v", r)
		}
	}()
	s.fsm.ApplyBatch([]*raft.Log{{Index: 42, Type: raft.LogCommand, Data: []byte{99}}})
}

func TestParseFsync(t *testing.T) {
	for _, c := range []struct {
		in   string
		want FsyncPolicy
	}{{"always", FsyncAlways}, {"EVERYSEC", FsyncEverySec}} {
		if p, err := ParseFsync(c.in); err != nil || p != c.want || !strings.EqualFold(p.String(), c.in) {
			t.Fatalf("ParseFsync(%q) = %v, %v", c.in, p, err)
		}
	}
	if _, err := ParseFsync("no"); err == nil {
		t.Fatal("no accepted")
	}
}

// Ready is "" while the single node leads and says why once it is closed.
func TestShardReady(t *testing.T) {
	s := NewShard()
	if why := s.Ready(); why != "" {
		t.Fatalf("Ready() = %q on an open shard", why)
	}
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	if why := s.Ready(); why != "shard closed" {
		t.Fatalf("Ready() = %q after Close, want %q", why, "shard closed")
	}
}
