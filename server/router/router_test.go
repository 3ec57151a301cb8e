package router

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"streamd/replication"
	"streamd/replication/wire"
	"streamd/server/resp"
)

// fourShards opens an embedded node whose keyspace is split into 4 shards.
func fourShards(t *testing.T) *replication.Node {
	t.Helper()
	node, err := replication.OpenNode(replication.NodeOptions{Shards: 4,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close(false) })
	return node
}

// keysOfShards returns one key per shard of n.
func keysOfShards(n int) [][]byte {
	out := make([][]byte, n)
	for k, found := 0, 0; found < n; k++ {
		key := "key" + string(rune('a'+k%26)) + string(rune('a'+k/26))
		if i := replication.ShardOfSlot(replication.KeySlot(key), n); out[i] == nil {
			out[i] = []byte(key)
			found++
		}
	}
	return out
}

// TestSingleRunsHere: the single node's router runs everything here.
func TestSingleRunsHere(t *testing.T) {
	var r Router = Single{}
	if rt := r.Route(nil, false); rt.Kind != Local || rt.Shard != -1 {
		t.Fatalf("keyless: %+v", rt)
	}
	if rt := r.Route([][]byte{[]byte("a"), []byte("b")}, true); rt.Kind != Local || rt.Shard != 0 {
		t.Fatalf("keys: %+v", rt)
	}
	if r.ShardOf(wire.XLen{Base: wire.Base{Key: "zz"}}) != 0 || r.Spread() || r.ClusterMode() || !r.Leads(0) || r.ReadBarrier(0) != nil {
		t.Fatal("single router is not a no-op")
	}
}

// TestClusterRoutesShards: on an embedded 4-shard node, keys of one shard
// run here, keys of two answer CROSSSLOT, and cluster mode also refuses
// two slots of one shard.
func TestClusterRoutesShards(t *testing.T) {
	node := fourShards(t)
	timings := func() Timings { return Timings{Election: time.Second, Lease: time.Second / 2, Quorum: 5 * time.Second} }
	r := NewCluster(node, false, timings, nil)
	keys := keysOfShards(4)
	for i, k := range keys {
		if rt := r.Route([][]byte{k}, false); rt.Kind != Local || rt.Shard != i || rt.Slot != KeySlot(k) {
			t.Fatalf("key %s: %+v", k, rt)
		}
		if got := r.ShardOf(wire.XLen{Base: wire.Base{Key: string(k)}}); got != i {
			t.Fatalf("ShardOf(%s) = %d", k, got)
		}
	}
	if rt := r.Route(keys[:2], false); rt.Kind != Refuse || rt.Reply != ErrCrossSlot {
		t.Fatalf("two shards: %+v", rt)
	}
	sameShard := [][]byte{keys[0], nil}
	for k := 0; sameShard[1] == nil; k++ {
		key := []byte("other" + string(rune('a'+k%26)) + string(rune('a'+k/26%26)))
		if replication.ShardOfSlot(KeySlot(key), 4) == 0 && KeySlot(key) != KeySlot(keys[0]) {
			sameShard[1] = key
		}
	}
	if rt := r.Route(sameShard, false); rt.Kind != Local {
		t.Fatalf("one shard, two slots: %+v", rt)
	}
	if rt := NewCluster(node, true, timings, nil).Route(sameShard, false); rt.Reply != ErrCrossSlot {
		t.Fatalf("cluster mode, two slots: %+v", rt)
	}
	if r.ForwardsNow(keys[:1]) || r.ForwardsNow(nil) {
		t.Fatal("ForwardsNow on an embedded node, whose shards all run here")
	}
	if !r.Spread() || r.LeaderWait() != 2500*time.Millisecond || r.ForwardTimeout() != 11*time.Second {
		t.Fatal("spread or timings")
	}
}

// TestViewsOfEmbeddedNode: the views of an embedded node name it
// "streamd", list every shard and count every slot.
func TestViewsOfEmbeddedNode(t *testing.T) {
	v := NewView(fourShards(t))
	if v.NodeID() != "streamd" {
		t.Fatalf("NodeID = %q", v.NodeID())
	}
	if rs, ok := v.RaftShards().(resp.Array); !ok || len(rs) != 4 {
		t.Fatalf("RaftShards = %#v", v.RaftShards())
	}
	lines := v.ShardLines()
	if len(lines) != 5 || lines[0] != (Field{"shards", "4"}) || lines[4].Name != "shard3" {
		t.Fatalf("ShardLines = %v", lines)
	}
	info := v.ClusterInfo()
	if info[1] != (Field{"cluster_slots_assigned", "16384"}) || info[len(info)-1] != (Field{"cluster_shards", "4"}) {
		t.Fatalf("ClusterInfo = %v", info)
	}
	if m := v.Member("streamd", "", "127.0.0.1:6379"); !m.Myself || !m.OK || m.Host != "127.0.0.1" || m.Port != 6379 {
		t.Fatalf("Member = %+v", m)
	}
}
