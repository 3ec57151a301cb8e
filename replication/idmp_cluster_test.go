package replication

import (
	"fmt"
	"strings"
	"testing"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

// TestClusterIDMP: idempotent production through a 3-node in-process
// cluster: iids recorded on one leader are honoured by the next after a
// kill, by a restarted node, and by a follower that catches up through a
// snapshot install; every replica ends with the same state (IDMP state is
// in the state hash, which is the snapshot's).
func TestClusterIDMP(t *testing.T) {
	c := newTestCluster(t, 3, func(o *Options) {
		o.LogStore = LogStoreBolt
		o.SnapshotThreshold = 32
		o.TrailingLogs = 4
	})
	b := wire.Base{Key: "s"}
	propose := func(cmd wire.Command) any {
		t.Helper()
		res, err := c.leader().shard.Propose(cmd)
		if err != nil {
			t.Fatalf("%#v: %v", cmd, err)
		}
		return res
	}
	add := func(pid, iid string) any {
		t.Helper()
		return propose(wire.XAdd{Base: b, ID: streams.IDSpec{Auto: true}, Trim: wire.Trim{Limit: -1},
			Fields: [][]byte{[]byte("v"), []byte(pid + "/" + iid)}, IDMP: wire.IDMP{PID: pid, IID: iid}})
	}
	ids := map[string]streams.ID{}
	// addAll adds iids from..to-1 of producers p0-p2 and checks each is new.
	addAll := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			for p := range 3 {
				pid, iid := fmt.Sprintf("p%d", p), fmt.Sprintf("i%d", i)
				id, ok := add(pid, iid).(streams.ID)
				if !ok {
					t.Fatalf("%s/%s: not added", pid, iid)
				}
				ids[pid+"/"+iid] = id
			}
		}
	}
	// checkDup re-sends every pair so far: each answers its first ID.
	checkDup := func(what string) {
		t.Helper()
		for k, id := range ids {
			pid, iid, _ := strings.Cut(k, "/")
			if res := add(pid, iid); res != (wire.IDMPDuplicate{ID: id}) {
				t.Fatalf("%s: %s answered %#v, want the duplicate of %s", what, k, res, id)
			}
		}
	}
	propose(wire.ConfigSet{Name: "stream-idmp-maxsize", Value: "1000"})
	addAll(0, 10)
	propose(wire.XCfgSet{Base: b, Duration: 86400})
	// XCFGSET with a new value dropped every iid: record them again.
	ids = map[string]streams.ID{}
	addAll(10, 20)
	checkDup("first leader")

	old := c.leader()
	c.kill(old)
	checkDup("after the leader's kill")
	addAll(20, 30)
	c.restart(old)
	c.converge()

	// A follower cut off while the others move on and compact their logs
	// catches up from a snapshot.
	f := c.followers()[0]
	c.partition([]*testNode{f})
	addAll(30, 60)
	for _, n := range without(c.nodes, f) {
		if n.alive {
			if err := n.shard.Save(); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.heal()
	c.converge()
	checkDup("after the snapshot install")
	propose(wire.XIDMPRecord{Base: b, PID: "p9", IID: "r", ID: ids["p0/i30"]})
	c.converge()

	// The follower that installed the snapshot now leads: same answers.
	for c.leader() != f {
		l := c.leader()
		c.kill(l)
		c.restart(l)
		c.converge()
	}
	checkDup("on the node restored from a snapshot")
	if res := add("p9", "r"); res != (wire.IDMPDuplicate{ID: ids["p0/i30"]}) {
		t.Fatalf("XIDMPRECORD pair: %#v", res)
	}
	res, err := c.leader().shard.Query(wire.XInfoStream{Base: b})
	if err != nil {
		t.Fatal(err)
	}
	info := res.(state.StreamInfo).IDMP
	if info.Duration != 86400 || info.MaxSize != 1000 || info.PidsTracked != 4 || info.IidsTracked != int64(len(ids))+1 {
		t.Fatalf("XINFO %+v (%d pairs)", info, len(ids))
	}
	c.converge()
}
