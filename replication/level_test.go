package replication

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

// shardLevel returns the shard's engine level and the node count of key s.
func shardLevel(s *Shard) (level, nodes int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	res, _ := s.ks.Query(wire.XInfoStream{Base: wire.Base{Key: "s"}}, 0)
	if info, ok := res.(state.StreamInfo); ok {
		nodes = info.RadixTreeKeys
	}
	return s.ks.Level(), nodes
}

// TestEngineLevelLogReplay: a log written by a release before engine levels
// (stream-node-max-bytes set but not applied), then continued by this one,
// which raises the level when it leads. Replayed from index 1, and restored
// from a snapshot plus the log after it, it gives the same state, node
// sizes included: before the switch nodes split by entry count only, after
// it also by bytes.
func TestEngineLevelLogReplay(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Dir: dir, TrailingLogs: 1000} // snapshots keep the whole log
	big := []byte(strings.Repeat("x", 300))
	add := func(s *Shard, n int) {
		for range n {
			propose(t, s, wire.XAdd{Base: wire.Base{Key: "s"}, ID: streams.IDSpec{Auto: true},
				Fields: [][]byte{[]byte("f"), big}, Trim: wire.Trim{Limit: -1}})
		}
	}
	old, err := open(opts, hooks{keepLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	propose(t, old, wire.ConfigSet{Name: "stream-node-max-bytes", Value: "1000"})
	add(old, 10)
	if err := old.Save(); err != nil { // a snapshot at level 0
		t.Fatal(err)
	}
	add(old, 5)
	if l, n := shardLevel(old); l != 0 || n != 1 {
		t.Fatalf("old release: level %d, %d nodes; want 0 and one node of 15 entries", l, n)
	}
	if err := old.Close(false); err != nil {
		t.Fatal(err)
	}

	s := mustOpen(t, opts)
	add(s, 9) // 300-byte values in 1000-byte nodes: 3 a node
	if l, n := shardLevel(s); l != state.CurrentLevel || n != 4 {
		t.Fatalf("after the switch: level %d, %d nodes; want %d and 1 + 3", l, n, state.CurrentLevel)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	add(s, 4)
	want := snapshotBytes(t, s)
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}

	fromSnap := copyDir(t, dir)
	fromLog := copyDir(t, dir)
	if err := os.RemoveAll(filepath.Join(fromLog, "snapshots")); err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]string{"snapshot + log": fromSnap, "log from index 1": fromLog} {
		o := opts
		o.Dir = d
		r := mustOpen(t, o)
		if got := snapshotBytes(t, r); !bytes.Equal(got, want) {
			t.Errorf("%s: state differs from the original", name)
		}
		// Both go on appending alike: the tail node (1 entry) takes 2
		// more, the third starts a node.
		add(r, 3)
		if l, n := shardLevel(r); l != state.CurrentLevel || n != 7 {
			t.Errorf("%s: level %d, %d nodes after 3 more; want 7", name, l, n)
		}
		r.Close(false)
	}
}

// TestClusterEngineLevel: the first leader of a new cluster raises the
// level; every replica, and one brought back by a snapshot install after
// byte-sized node splits, holds the same state and level; a new leader
// does not need to raise it again.
func TestClusterEngineLevel(t *testing.T) {
	c := newTestCluster(t, 3, func(o *Options) {
		o.TrailingLogs, o.SnapshotThreshold, o.LogStore = 4, 1<<20, LogStoreBolt
	})
	l := c.leader()
	propose(t, l.shard, wire.ConfigSet{Name: "stream-node-max-bytes", Value: "1000"})
	behind := c.followers()[0]
	c.kill(behind)
	big := []byte(strings.Repeat("y", 300))
	for range 12 {
		propose(t, l.shard, wire.XAdd{Base: wire.Base{Key: "s"}, ID: streams.IDSpec{Auto: true},
			Fields: [][]byte{[]byte("f"), big}, Trim: wire.Trim{Limit: -1}})
	}
	if err := l.shard.Save(); err != nil {
		t.Fatal(err)
	}
	c.restart(behind)
	c.converge()
	for _, nd := range c.alive() {
		if lv, n := shardLevel(nd.shard); lv != state.CurrentLevel || n != 4 {
			t.Fatalf("%s: level %d, %d nodes; want %d and 4", nd.id, lv, n, state.CurrentLevel)
		}
	}
	c.kill(l)
	nl := c.leader()
	_, before := nl.shard.StateHash()
	c.restart(l)
	c.converge()
	if _, after := c.leader().shard.StateHash(); after != before {
		t.Fatal("a new leader changed the state")
	}
}
