package replication

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"streamd/replication/wire"
)

// A single node goes local once open: raft is shut down, the shard still
// reports itself the leader, and the entries it appends are raft's: the
// next start replays them with raft into the same state, and the log goes
// on from where it was, in raft's term.
func TestLocalLogReplaysWithRaft(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s.local == nil || s.raft.State() != raft.Shutdown {
		t.Fatalf("single node not local after Open (local %v, raft %v)", s.local != nil, s.raft.State())
	}
	if !s.IsLeader() || s.Ready() != "" || s.Info().Role != "leader" {
		t.Fatalf("local node: leader %v, ready %q, role %q", s.IsLeader(), s.Ready(), s.Info().Role)
	}
	first := s.Stats().LastLogIndex
	workload(t, s, 10)
	st := s.Stats()
	if st.LastLogIndex <= first || st.AppliedIndex != st.LastLogIndex {
		t.Fatalf("indexes after writes: %+v (first %d)", st, first)
	}
	var e raft.Log
	if err := s.logs.GetLog(st.LastLogIndex, &e); err != nil || e.Type != raft.LogCommand || e.Term != s.local.term {
		t.Fatalf("last entry %+v (%v), want a command in term %d", e, err, s.local.term)
	}
	want := snapshotBytes(t, s)
	if err := s.Close(false); err != nil { // no snapshot: all of it replays
		t.Fatal(err)
	}
	r := mustOpen(t, Options{Dir: dir})
	if got := snapshotBytes(t, r); string(got) != string(want) {
		t.Fatal("raft's replay of the local log gives another state")
	}
	if r.Stats().LastLogIndex <= st.LastLogIndex {
		t.Fatalf("log restarted at %d, was at %d", r.Stats().LastLogIndex, st.LastLogIndex)
	}
	propose(t, r, xadd("s", "after", "restart"))

	// Raft's own write path goes on from the local log, and the next
	// local node from raft's.
	if err := r.Close(false); err != nil {
		t.Fatal(err)
	}
	rr := mustOpenRaft(t, Options{Dir: dir})
	propose(t, rr, xadd("s", "via", "raft"))
	want = snapshotBytes(t, rr)
	if err := rr.Close(false); err != nil {
		t.Fatal(err)
	}
	if got := snapshotBytes(t, mustOpen(t, Options{Dir: dir})); string(got) != string(want) {
		t.Fatal("a local node does not replay what raft wrote after it")
	}
}

// A batch larger than an entry goes to the log as several entries of at
// most maxBatch commands, written together, in order.
func TestLocalLargeBatchSplitsIntoEntries(t *testing.T) {
	s := mustOpen(t, Options{Dir: t.TempDir()})
	before := s.Stats()
	const n = 3*maxBatch + 5
	cmds := make([]wire.Command, n)
	for i := range cmds {
		cmds[i] = xadd("s", "i", fmt.Sprint(i))
	}
	out := make([]*Pending, n)
	s.QueueMany(cmds, out) // the batcher is not woken: the wait sends them
	for i, p := range out {
		if _, err := p.Wait(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	after := s.Stats()
	if got := after.Batches - before.Batches; got != 4 {
		t.Fatalf("%d entries for %d writes, want 4", got, n)
	}
	for i := 1; i < n; i++ {
		if out[i].Index() < out[i-1].Index() {
			t.Fatalf("write %d at index %d after %d", i, out[i].Index(), out[i-1].Index())
		}
	}
	var e raft.Log
	if err := s.logs.GetLog(out[n-1].Index(), &e); err != nil {
		t.Fatal(err)
	}
	entry, err := wire.DecodeEntry(e.Data)
	if err != nil || len(entry.Cmds) != 5 {
		t.Fatalf("last entry: %d commands (%v), want 5", len(entry.Cmds), err)
	}
	if xlenOf(t, s, "s") != n {
		t.Fatalf("xlen %d, want %d", xlenOf(t, s, "s"), n)
	}
}

// Snapshots of a local node: by entry count (in the background) and on
// Save, each with raft's metadata (the configuration and its index, the
// entry's term) and the log compacted behind it but for the trailing
// entries; a restart loads the snapshot and replays the rest.
func TestLocalSnapshots(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, SnapshotThreshold: 20, TrailingLogs: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		propose(t, s, xadd("s", "i", fmt.Sprint(i)))
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(); err != nil { // nothing new: still a success
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Saves < 2 || st.SnapshotIndex != st.AppliedIndex {
		t.Fatalf("saves %d, snapshot at %d, applied %d", st.Saves, st.SnapshotIndex, st.AppliedIndex)
	}
	metas, err := s.snaps.List()
	if err != nil || len(metas) != 1 {
		t.Fatalf("snapshots %v (%v), want exactly one", metas, err)
	}
	m := metas[0]
	if m.ConfigurationIndex == 0 || len(m.Configuration.Servers) != 1 || m.Term != s.local.term {
		t.Fatalf("snapshot metadata %+v", m)
	}
	firstIdx, _ := s.logs.FirstIndex()
	if lastIdx, _ := s.logs.LastIndex(); firstIdx == 0 || lastIdx-firstIdx+1 > 4+1 {
		t.Fatalf("log %d..%d after a snapshot at %d: not compacted to the 4 trailing entries", firstIdx, lastIdx, m.Index)
	}
	for i := range 7 {
		propose(t, s, xadd("s", "tail", fmt.Sprint(i)))
	}
	want := snapshotBytes(t, s)
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	r := mustOpen(t, Options{Dir: dir})
	if got := snapshotBytes(t, r); string(got) != string(want) {
		t.Fatal("snapshot + replay gives another state")
	}
}

// Many connections' goroutines writing at once each send the queue
// themselves when they wait first; every write is answered once, applied
// once, in one order.
func TestLocalConcurrentSenders(t *testing.T) {
	s := mustOpen(t, Options{Dir: t.TempDir()})
	const writers, each = 16, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i += 5 {
				cmds := make([]wire.Command, 5)
				for k := range cmds {
					cmds[k] = xadd(fmt.Sprint("k", w%4), "w", fmt.Sprint(w), "i", fmt.Sprint(i+k))
				}
				out := make([]*Pending, len(cmds))
				if i%10 == 0 {
					s.QueueMany(cmds, out)
				} else {
					s.ProposeAsyncMany(cmds, out)
				}
				for _, p := range out {
					if _, err := p.Wait(); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var total int64
	for k := range 4 {
		total += xlenOf(t, s, fmt.Sprint("k", k))
	}
	if total != writers*each {
		t.Fatalf("%d entries, want %d", total, writers*each)
	}
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Propose(xadd("s", "f", "v")); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("write after Close: %v", err)
	}
	if s.Ready() != "shard closed" || s.IsLeader() {
		t.Fatalf("closed local node: ready %q, leader %v", s.Ready(), s.IsLeader())
	}
}
