package replication

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"streamd/internal/testutil"
	"streamd/replication/wire"
	"streamd/streams"
)

// Issue 9: a member whose log suffix raft truncated (a deposed leader whose
// uncommitted tail the new leader overwrote) must restart and rejoin. With
// raft-wal v0.4.0 the truncation sealed the tail segment without its index
// block, and every later start refused the directory.

// TestSuffixTruncationRestart cuts the leader off, has it append writes it
// can never commit, lets the majority elect a leader and go on, heals (the
// old leader truncates its uncommitted tail), then kills and restarts the
// old leader: it must open, rejoin and hold every acknowledged write, for
// both log stores.
func TestSuffixTruncationRestart(t *testing.T) {
	for _, store := range []string{LogStoreWAL, LogStoreBolt} {
		t.Run(store, func(t *testing.T) {
			if store == LogStoreWAL {
				smallSegments(t) // the truncation then also crosses segments
			}
			suffixTruncationRestart(t, store)
		})
	}
}

func suffixTruncationRestart(t *testing.T, store string) {
	c := newTestCluster(t, 3, func(o *Options) {
		o.LogStore = store
		o.QuorumTimeout = faultQuorumTimeout
	})
	old := c.leader()
	var acked []streams.ID
	write := func(s *Shard, n int) {
		t.Helper()
		for range n {
			acked = append(acked, propose(t, s, xadd("s", "v", fmt.Sprint(len(acked)))).(streams.ID))
		}
	}
	write(old.shard, 40)

	// Cut the leader off: what it is given now reaches its log only.
	c.partition([]*testNode{old})
	committed := old.shard.Info().CommitIndex
	var pend []*Pending
	for i := range 5 {
		pend = append(pend, old.shard.ProposeAsync(xadd("s", "lost", fmt.Sprint(i))))
	}
	var uncommitted uint64
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if uncommitted = old.shard.Info().LastLogIndex; uncommitted <= committed {
			return fmt.Errorf("old leader's last log index %d, commit index %d", uncommitted, committed)
		}
		return nil
	})
	var before raft.Log
	if err := old.shard.logs.GetLog(uncommitted, &before); err != nil {
		t.Fatal(err)
	}
	nl := leaderAmong(t, without(c.nodes, old))
	write(nl.shard, 40)
	for i, p := range pend {
		if _, err := p.Wait(); err == nil {
			t.Fatalf("write %d at the cut-off leader was acknowledged", i)
		}
	}

	// Heal: the old leader follows and raft truncates its tail.
	c.heal()
	write(nl.shard, 10)
	c.converge()
	var after raft.Log
	if err := old.shard.logs.GetLog(uncommitted, &after); err != nil {
		t.Fatal(err)
	}
	if after.Term == before.Term {
		t.Fatalf("entry %d still has term %d: the old leader's log suffix was not truncated", uncommitted, before.Term)
	}

	// The restart that used to be refused, twice (the second finds the
	// first one's files).
	for i := range 2 {
		c.kill(old)
		if store == LogStoreWAL && i == 0 {
			checkSealedIndexed(t, old.dir)
		}
		write(c.leader().shard, 5)
		c.restart(old)
		write(c.leader().shard, 5)
		c.converge()
	}
	for _, nd := range c.alive() {
		checkEntries(t, nd, acked)
	}
}

// checkSealedIndexed fails unless the wal log in dataDir has a sealed
// segment and every sealed segment records its index block.
func checkSealedIndexed(t *testing.T, dataDir string) {
	t.Helper()
	st, err := readWALMeta(filepath.Join(walDir(dataDir), "wal-meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	sealed := 0
	for _, si := range st.Segments {
		if !si.SealTime.IsZero() {
			sealed++
			if si.IndexStart == 0 {
				t.Fatalf("sealed segment %d (entries %d..%d) has no index block", si.ID, si.MinIndex, si.MaxIndex)
			}
		}
	}
	if sealed == 0 {
		t.Fatal("no sealed segment: the truncation did not seal the tail")
	}
}

// checkEntries fails unless stream s on nd holds exactly the IDs want.
func checkEntries(t *testing.T, nd *testNode, want []streams.ID) {
	t.Helper()
	res, err := nd.shard.Query(wire.XRange{Base: wire.Base{Key: "s"}, Start: streams.MinID, End: streams.MaxID, Count: -1})
	if err != nil {
		t.Fatal(err)
	}
	got := res.([]streams.Entry)
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", nd.id, len(got), len(want))
	}
	for i, e := range got {
		if e.ID != want[i] {
			t.Fatalf("%s: entry %d is %v, want %v", nd.id, i, e.ID, want[i])
		}
	}
}

// TestWALFixtureSuffixTruncation opens the data directory captured from
// outside (node n1 of a 3-node cluster after a log-suffix truncation under
// raft-wal v0.4.0 and a SIGKILL): the sealed segment without an index block
// is repaired, logged once, every log entry reads, and the node leads two
// new empty members (at its cluster's addresses) to the same state as its
// own. A second start needs no repair.
func TestWALFixtureSuffixTruncation(t *testing.T) {
	dir := testutil.Untar(t, filepath.Join("..", "testdata", "fixtures", "wal-after-suffix-truncation.tar.gz"))
	var logs lockedBuffer
	c := &testCluster{t: t}
	t.Cleanup(c.closeAll)
	for _, id := range []string{"n1", "n2", "n3"} {
		// The fixture's configuration: n1, n2, n3 at these raft addresses.
		addr := map[string]string{"n1": "127.0.0.1:7663", "n2": "127.0.0.1:7665", "n3": "127.0.0.1:7667"}[id]
		a, trans := raft.NewInmemTransport(raft.ServerAddress(addr))
		nd := &testNode{id: id, addr: a, dir: t.TempDir(), trans: trans}
		if id == "n1" {
			nd.dir = dir
		}
		c.nodes = append(c.nodes, nd)
	}
	c.connectAll()
	c.opts = func(o *Options) {
		// Slower than testTiming: under -race on a busy machine the new
		// members' snapshot install and replay can cost the leader its
		// lease.
		o.Timing = Timing{Heartbeat: 500 * time.Millisecond, Election: time.Second, LeaderLease: 500 * time.Millisecond}
		if o.NodeID == "n1" {
			o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		}
	}
	n1 := c.nodes[0]
	c.open(n1, nil)
	if got := strings.Count(logs.String(), "repaired the log"); got != 1 ||
		!strings.Contains(logs.String(), "wrote the missing index block of sealed segment 00000000000000000001-0000000000000000.wal (entries 1..3046") {
		t.Fatalf("want one repair line for segment 1, got %d in:\n%s", got, logs.String())
	}
	// Every entry of the repaired segment and the tail reads back.
	first, _ := n1.shard.logs.FirstIndex()
	last, _ := n1.shard.logs.LastIndex()
	if first != 1 || last < 5327 {
		t.Fatalf("log holds %d..%d, want 1..(at least the snapshot's 5327)", first, last)
	}
	for i := first; i <= last; i++ {
		var l raft.Log
		if err := n1.shard.logs.GetLog(i, &l); err != nil || l.Index != i {
			t.Fatalf("entry %d: %v (read as %d)", i, err, l.Index)
		}
	}
	// n2 and n3 start empty: n1 is elected (they have no configuration to
	// refuse its votes with) and brings them to its state. On a loaded
	// machine n1 may lose its lease while it installs their snapshots, and
	// one of them, by then up to date, may win the next election: any
	// leader will do, the state it serves is n1's (checked below).
	c.open(c.nodes[1], nil)
	c.open(c.nodes[2], nil)
	if l := c.leader(); l != n1 {
		t.Logf("leader %s (n1 lost its lease while bringing the others up)", l.id)
	}
	acked := []string{proposeAcked(t, c, "after")}
	c.converge()

	c.kill(n1)
	c.restart(n1)
	if got := strings.Count(logs.String(), "repaired the log"); got != 1 {
		t.Fatalf("second start repaired again:\n%s", logs.String())
	}
	acked = append(acked, proposeAcked(t, c, "after"))
	c.converge()
	res, err := n1.shard.Query(wire.XRange{Base: wire.Base{Key: "after"}, Start: streams.MinID, End: streams.MaxID, Count: -1})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range res.([]streams.Entry) {
		have[string(e.Fields[1])] = true
	}
	for _, v := range acked {
		if !have[v] {
			t.Fatalf("acknowledged write %s missing from n1", v)
		}
	}
}

// proposeAcked adds an entry with a new value to stream key at the current
// leader until one is acknowledged (an election under load may refuse or
// lose a write; a lost one is never sent again) and returns its value.
func proposeAcked(t *testing.T, c *testCluster, key string) string {
	t.Helper()
	var v string
	i := 0
	testutil.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		i++
		v = fmt.Sprintf("%s-%d", key, i)
		_, err := c.leader().shard.Propose(xadd(key, "v", v))
		return err
	})
	return v
}
