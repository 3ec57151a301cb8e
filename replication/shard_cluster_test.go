package replication

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/replication/wire"
	"streamd/streams"
)

// xlenOf returns the stream's length on shard s (local state).
func xlenOf(t *testing.T, s *Shard, key string) int64 {
	t.Helper()
	res, err := s.Query(wire.XLen{Base: wire.Base{Key: key}})
	if err != nil {
		t.Fatalf("xlen %s: %v", key, err)
	}
	return res.(int64)
}

func TestClusterWritesReplicate(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.leader()
	var last uint64
	pend := make([]*Pending, 50)
	for i := range pend {
		pend[i] = l.shard.ProposeAsync(xadd("s", "i", fmt.Sprint(i)))
	}
	for i, p := range pend {
		if _, err := p.Wait(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if p.Index() == 0 || p.Index() < last {
			t.Fatalf("write %d: index %d after %d", i, p.Index(), last)
		}
		last = p.Index()
	}
	c.converge()
	for _, nd := range c.alive() {
		if n := xlenOf(t, nd.shard, "s"); n != 50 {
			t.Fatalf("%s: xlen %d, want 50", nd.id, n)
		}
		if idx, _ := nd.shard.StateHash(); idx < last {
			t.Fatalf("%s: state at index %d, last write at %d", nd.id, idx, last)
		}
	}
}

func TestClusterFollowerRefuses(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.leader()
	propose(t, l.shard, xadd("s", "f", "v"))
	f := c.followers()[0]
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if id, _ := f.shard.Leader(); id != l.id {
			return fmt.Errorf("follower knows leader %q, want %q", id, l.id)
		}
		return nil
	})
	_, err := f.shard.Propose(xadd("s", "f", "v"))
	var nl *NotLeaderError
	if !errors.As(err, &nl) || nl.LeaderID != l.id || nl.LeaderAddr != string(l.addr) {
		t.Fatalf("proposal on follower: %v, want NotLeaderError naming %s", err, l.id)
	}
	want := "TRYAGAIN this node does not lead the shard (leader " + l.id + " at " + string(l.addr) + "); the write was not applied"
	if err.Error() != want {
		t.Fatalf("error text %q, want %q", err, want)
	}
	if got := (&NotLeaderError{}).Error(); got != "CLUSTERDOWN The cluster is down: the shard has no leader" {
		t.Fatalf("no-leader text %q", got)
	}
	// Reads: the follower cannot serve a linearizable read, the leader can.
	if err := f.shard.VerifyRead(); !errors.As(err, &nl) {
		t.Fatalf("VerifyRead on follower: %v", err)
	}
	if _, err := f.shard.ReadIndex(); !errors.As(err, &nl) {
		t.Fatalf("ReadIndex on follower: %v", err)
	}
	if err := l.shard.VerifyRead(); err != nil {
		t.Fatalf("VerifyRead on leader: %v", err)
	}
	// A follower serves a read at the leader's read index once it has
	// applied that far.
	p := l.shard.ProposeAsync(xadd("s", "f", "w"))
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	idx, err := l.shard.ReadIndex()
	if err != nil || idx < p.Index() {
		t.Fatalf("ReadIndex %d, %v; last write at %d", idx, err, p.Index())
	}
	if err := f.shard.WaitApplied(idx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := xlenOf(t, f.shard, "s"); n != 2 {
		t.Fatalf("follower xlen %d after WaitApplied, want 2", n)
	}
	if err := f.shard.WaitApplied(idx+1000, 50*time.Millisecond); err == nil || !strings.HasPrefix(err.Error(), "TRYAGAIN") {
		t.Fatalf("WaitApplied beyond the log: %v", err)
	}
}

func TestClusterVerifyReadConcurrent(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.leader()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%4 == 0 {
				if _, err := l.shard.Propose(xadd("s", "i", fmt.Sprint(i))); err != nil {
					errs <- err
				}
				return
			}
			if err := l.shard.VerifyRead(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c.converge()
}

// A leader cut off from its followers keeps leading until its lease runs
// out; writes meanwhile must come back "outcome unknown" within the quorum
// timeout, one batch after another, and never hang.
func TestClusterNoQuorumOutcomeUnknown(t *testing.T) {
	const bound = 300 * time.Millisecond
	c := newTestCluster(t, 3, func(o *Options) {
		o.QuorumTimeout = bound
		// A long lease keeps the isolated leader leading past the bound.
		o.Timing = Timing{Heartbeat: 2 * time.Second, Election: 2 * time.Second, LeaderLease: 2 * time.Second}
	})
	l := c.leader()
	propose(t, l.shard, xadd("s", "f", "before"))
	c.partition([]*testNode{l})
	start := time.Now()
	pend := []*Pending{l.shard.ProposeAsync(xadd("s", "f", "a"))}
	// Queued behind the first: sent once it has timed out.
	pend = append(pend, l.shard.ProposeAsync(xadd("s", "f", "b")), l.shard.ProposeAsync(xadd("s", "f", "c")))
	for i, p := range pend {
		waited := make(chan struct{})
		go func() { p.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(10 * bound):
			t.Fatalf("write %d unresolved after %v", i, time.Since(start))
		}
		_, err := p.Wait()
		var ou *OutcomeUnknownError
		if !errors.As(err, &ou) {
			t.Fatalf("write %d: %v, want OutcomeUnknownError", i, err)
		}
		if p.Index() != 0 {
			t.Fatalf("write %d: index %d on an unknown outcome", i, p.Index())
		}
		if i == 0 {
			want := "ERR outcome unknown: no quorum within 300ms; the write may or may not have been applied"
			if err.Error() != want {
				t.Fatalf("error %q, want %q", err, want)
			}
			if el := time.Since(start); el < bound || el > 3*bound {
				t.Fatalf("first write resolved after %v, bound %v", el, bound)
			}
		}
	}
	t.Logf("3 writes resolved in %v", time.Since(start))
	// VerifyRead cannot confirm leadership either, and says so in time.
	start = time.Now()
	var nl *NotLeaderError
	if err := l.shard.VerifyRead(); !errors.As(err, &nl) {
		t.Fatalf("VerifyRead cut off: %v", err)
	}
	if el := time.Since(start); el > 3*bound {
		t.Fatalf("VerifyRead took %v", el)
	}
	c.heal()
	c.proposeHealed(xadd("s", "f", "after"))
	c.converge()
}

// With a short lease the cut-off leader steps down: its in-flight write
// resolves (outcome unknown), later ones fail fast as not-leader, and the
// majority elects a new leader that takes writes.
func TestClusterLeaderStepsDownWhenCutOff(t *testing.T) {
	c := newTestCluster(t, 3, func(o *Options) { o.QuorumTimeout = time.Second })
	old := c.leader()
	c.partition([]*testNode{old})
	_, err := old.shard.Propose(xadd("s", "f", "a"))
	var ou *OutcomeUnknownError
	var nl *NotLeaderError
	if !errors.As(err, &ou) && !errors.As(err, &nl) {
		t.Fatalf("write on cut-off leader: %v", err)
	}
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if old.shard.IsLeader() {
			return errors.New("cut-off leader still leads")
		}
		return nil
	})
	if _, err := old.shard.Propose(xadd("s", "f", "b")); !errors.As(err, &nl) {
		t.Fatalf("write on deposed leader: %v, want NotLeaderError", err)
	}
	var nw *testNode
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		for _, nd := range c.alive() {
			if nd != old && nd.shard.IsLeader() {
				nw = nd
				return nil
			}
		}
		return errors.New("no leader on the majority side")
	})
	propose(t, nw.shard, xadd("s", "f", "c"))
	c.heal()
	c.converge()
	if n := xlenOf(t, old.shard, "s"); n < 1 || n > 2 {
		t.Fatalf("xlen %d after heal, want 1 or 2", n)
	}
}

func TestClusterOnLeaderTransfer(t *testing.T) {
	var mu sync.Mutex
	calls := map[string][]bool{}
	c := newTestCluster(t, 3, func(o *Options) {
		id := o.NodeID
		o.OnLeader = func(v bool) {
			mu.Lock()
			calls[id] = append(calls[id], v)
			mu.Unlock()
		}
	})
	seq := func(id string) []bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(calls[id])
	}
	l := c.leader()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if s := seq(l.id); !slices.Equal(s, []bool{true}) {
			return fmt.Errorf("leader %s OnLeader calls %v", l.id, s)
		}
		return nil
	})
	propose(t, l.shard, xadd("s", "f", "v"))
	f := c.followers()[0]
	if err := l.shard.TransferLeadership(f.id); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if !f.shard.IsLeader() {
			return fmt.Errorf("%s does not lead after the transfer", f.id)
		}
		if s := seq(l.id); !slices.Equal(s, []bool{true, false}) {
			return fmt.Errorf("old leader calls %v", s)
		}
		if s := seq(f.id); !slices.Equal(s, []bool{true}) {
			return fmt.Errorf("new leader calls %v", s)
		}
		return nil
	})
	// The new leader has applied everything before it reported the gain.
	if n := xlenOf(t, f.shard, "s"); n != 1 {
		t.Fatalf("new leader xlen %d", n)
	}
	for _, nd := range c.nodes {
		if nd != l && nd != f && len(seq(nd.id)) != 0 {
			t.Fatalf("%s never led but got %v", nd.id, seq(nd.id))
		}
	}
	// Close reports the loss of a leadership it had reported.
	c.kill(f)
	if s := seq(f.id); !slices.Equal(s, []bool{true, false}) {
		t.Fatalf("closed leader calls %v", s)
	}
}

func TestClusterMembership(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.leader()
	for i := range 20 {
		propose(t, l.shard, xadd("s", "i", fmt.Sprint(i)))
	}
	info := l.shard.Info()
	if info.Role != "leader" || info.LeaderID != l.id || info.LeaderAddr != string(l.addr) || info.Voters != 3 ||
		info.Term == 0 || info.CommitIndex == 0 || info.LastLogIndex < info.CommitIndex {
		t.Fatalf("leader info %+v", info)
	}
	f := c.followers()[0]
	if fi := f.shard.Info(); fi.Role != "follower" || fi.Voters != 3 {
		t.Fatalf("follower info %+v", fi)
	}
	var nl *NotLeaderError
	if err := f.shard.AddVoter("x", "x"); !errors.As(err, &nl) {
		t.Fatalf("AddVoter on follower: %v", err)
	}
	if err := f.shard.RemoveServer(l.id); !errors.As(err, &nl) {
		t.Fatalf("RemoveServer on follower: %v", err)
	}
	if err := f.shard.TransferLeadership(""); !errors.As(err, &nl) {
		t.Fatalf("TransferLeadership on follower: %v", err)
	}

	// Add a fourth node: it catches up and counts.
	n4 := c.addNode()
	if n4.shard.IsLeader() || n4.shard.Info().Voters != 0 {
		t.Fatalf("new node %+v before being added", n4.shard.Info())
	}
	if err := l.shard.AddVoter(n4.id, string(n4.addr)); err != nil {
		t.Fatal(err)
	}
	ms, err := l.shard.Members()
	if err != nil {
		t.Fatal(err)
	}
	want := []Member{{"n1", "n1", true}, {"n2", "n2", true}, {"n3", "n3", true}, {"n4", "n4", true}}
	if !slices.Equal(ms, want) {
		t.Fatalf("members %v, want %v", ms, want)
	}
	c.converge()
	if n := xlenOf(t, n4.shard, "s"); n != 20 {
		t.Fatalf("added node xlen %d", n)
	}

	// Remove a follower (not n4): the rest go on.
	var gone *testNode
	for _, nd := range c.followers() {
		if nd != n4 {
			gone = nd
			break
		}
	}
	if err := l.shard.RemoveServer(gone.id); err != nil {
		t.Fatal(err)
	}
	c.kill(gone)
	ms, _ = l.shard.Members()
	if len(ms) != 3 || slices.ContainsFunc(ms, func(m Member) bool { return m.ID == gone.id }) {
		t.Fatalf("members after removing %s: %v", gone.id, ms)
	}
	propose(t, l.shard, xadd("s", "i", "after-remove"))

	// Transfer: to an unknown member fails, "" lets raft pick.
	if err := l.shard.TransferLeadership("nope"); err == nil || !strings.HasPrefix(err.Error(), "ERR no member") {
		t.Fatalf("transfer to unknown: %v", err)
	}
	if err := l.shard.TransferLeadership(""); err != nil {
		t.Fatal(err)
	}
	nl2 := c.leader()
	if nl2 == l {
		t.Fatal("leadership did not move")
	}
	propose(t, nl2.shard, xadd("s", "i", "after-transfer"))
	c.converge()
	if n := xlenOf(t, n4.shard, "s"); n != 22 {
		t.Fatalf("xlen %d, want 22", n)
	}
}

func TestClusterLeaderKillRestart(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	old := c.leader()
	var ids []streams.ID
	for i := range 30 {
		ids = append(ids, propose(t, old.shard, xadd("s", "i", fmt.Sprint(i))).(streams.ID))
	}
	c.kill(old)
	nw := c.leader()
	for i := range 10 {
		ids = append(ids, propose(t, nw.shard, xadd("s", "i", fmt.Sprint(30+i))).(streams.ID))
	}
	c.restart(old)
	c.converge()
	for _, nd := range c.alive() {
		checkEntries(t, nd, ids)
	}
}

// A follower that missed more than the leader keeps in its log installs a
// snapshot; its state (and applied index) then match the others'.
func TestClusterSnapshotInstall(t *testing.T) {
	// bolt deletes compacted entries at once (raft-wal keeps serving them
	// until their whole segment goes), so the leader must send a snapshot.
	c := newTestCluster(t, 3, func(o *Options) {
		o.TrailingLogs, o.SnapshotThreshold, o.LogStore = 4, 1<<20, LogStoreBolt
	})
	l := c.leader()
	propose(t, l.shard, xadd("s", "i", "0"))
	behind := c.followers()[0]
	c.kill(behind)
	for i := range 40 {
		propose(t, l.shard, xadd("s", "i", fmt.Sprint(i+1)))
	}
	if err := l.shard.Save(); err != nil {
		t.Fatal(err)
	}
	if si := l.shard.Info(); si.LastSnapshotIndex == 0 {
		t.Fatalf("no snapshot on the leader: %+v", si)
	}

	c.restart(behind)
	c.converge()
	if n := xlenOf(t, behind.shard, "s"); n != 41 {
		t.Fatalf("xlen %d after install, want 41", n)
	}
	// Raft records the installed snapshot's index a moment after the
	// state it restored is visible.
	testutil.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if si := behind.shard.Info(); si.LastSnapshotIndex == 0 {
			return fmt.Errorf("follower did not install a snapshot: %+v", si)
		}
		return nil
	})
	// Reads at the leader's read index work on the restored follower.
	idx, err := c.leader().shard.ReadIndex()
	if err != nil {
		t.Fatal(err)
	}
	if err := behind.shard.WaitApplied(idx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// The embedded single node keeps its behaviour and answers the cluster API.
func TestSingleNodeClusterAPI(t *testing.T) {
	var mu sync.Mutex
	var calls []bool
	s, err := Open(Options{OnLeader: func(v bool) { mu.Lock(); calls = append(calls, v); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if !s.IsLeader() || s.Clustered() {
		t.Fatal("single node not leading after Open")
	}
	if err := s.VerifyRead(); err != nil {
		t.Fatal(err)
	}
	p := s.ProposeAsync(xadd("s", "f", "v"))
	if _, err := p.Wait(); err != nil || p.Index() == 0 {
		t.Fatalf("write: %v index %d", err, p.Index())
	}
	if idx, err := s.ReadIndex(); err != nil || idx < p.Index() {
		t.Fatalf("ReadIndex %d %v", idx, err)
	}
	if err := s.WaitApplied(p.Index(), time.Second); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Members()
	if err != nil || len(ms) != 1 || ms[0].ID != "streamd" || !ms[0].Voter {
		t.Fatalf("members %v %v", ms, err)
	}
	if id, _ := s.Leader(); id != "streamd" {
		t.Fatalf("leader %q", id)
	}
	if info := s.Info(); info.Role != "leader" || info.Voters != 1 || info.AppliedIndex < p.Index() {
		t.Fatalf("info %+v", info)
	}
	if idx, _ := s.StateHash(); idx != p.Index() {
		t.Fatalf("StateHash index %d, want %d", idx, p.Index())
	}
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(calls, []bool{true, false}) {
		t.Fatalf("OnLeader calls %v", calls)
	}
	if err := s.VerifyRead(); err != ErrShuttingDown {
		t.Fatalf("VerifyRead after Close: %v", err)
	}
}

// TestNudgeReplicasTellsCommitIndex: a leader with nothing more to send
// tells its followers the commit index only every Timing.Commit (here an
// hour), so they do not apply its last write; NudgeReplicas makes them
// apply it at once (WAIT and a follower's read index rely on it).
func TestNudgeReplicasTellsCommitIndex(t *testing.T) {
	c := newTestCluster(t, 3, func(o *Options) { o.Timing.Commit = time.Hour })
	l := c.leader()
	p := l.shard.ProposeAsync(xadd("s", "f", "v"))
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, f := range c.followers() {
		f.shard.NudgeReplicas() // off the leader: nothing happens
	}
	l.shard.NudgeReplicas()
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		for _, f := range c.followers() {
			if !f.shard.appliedCovers(p.Index()) {
				return fmt.Errorf("%s has not applied index %d", f.id, p.Index())
			}
		}
		return nil
	})
	for _, f := range c.followers() {
		if n := xlenOf(t, f.shard, "s"); n != 1 {
			t.Fatalf("%s: xlen %d, want 1", f.id, n)
		}
	}
}
