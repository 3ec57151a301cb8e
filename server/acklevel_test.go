package server

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/metricstest"
	"streamd/internal/testutil"
	"streamd/streams"
)

// xinfoAckLevel returns XINFO STREAM's acklevel field of key.
func xinfoAckLevel(t *testing.T, c *respConn, key string) string {
	t.Helper()
	v := do(t, c, "XINFO", "STREAM", key)
	for i := 0; i+1 < len(v.Elems); i += 2 {
		if v.Elems[i].Str == "acklevel" {
			return v.Elems[i+1].Str
		}
	}
	t.Fatalf("XINFO STREAM %s has no acklevel: %s", key, v)
	return ""
}

// TestXCFGSETAckLevel: ACKLEVEL's errors, alone and with the IDMP options,
// shown by XINFO STREAM (and FULL); a stream without it shows
// stream-default-acklevel, which CONFIG SET changes, unless that is QUORUM.
// A one-node cluster: a single node's log write is its commit, so nothing
// is answered early there (TestAckLevelSingleNodeAtCommit).
func TestXCFGSETAckLevel(t *testing.T) {
	cn := startCluster(t, 1, 1, false)[0]
	srv, addr := cn.srv, cn.addr
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"XCFGSET", "s", "ACKLEVEL", "LEADER"}, "(error) ERR no such key"},
		{[]string{"XADD", "s", "1-1", "f", "v"}, `"1-1"`},
		{[]string{"XCFGSET", "s", "ACKLEVEL", "sometimes"}, "(error) ERR ACKLEVEL must be QUORUM or LEADER"},
		{[]string{"XCFGSET", "s", "ACKLEVEL", "LEADER", "ACKLEVEL", "QUORUM"}, "(error) ERR ACKLEVEL specified multiple times"},
		{[]string{"XCFGSET", "s", "ACKLEVEL"}, "(error) ERR syntax error"},
		{[]string{"CONFIG", "GET", "stream-default-acklevel"}, `["stream-default-acklevel", "quorum"]`},
		{[]string{"CONFIG", "SET", "stream-default-acklevel", "often"}, "(error) ERR CONFIG SET failed (possibly related to argument 'stream-default-acklevel') - argument(s) must be one of the following: quorum, leader"},
	})
	// A stream that never set ACKLEVEL, on a node whose default is
	// QUORUM, answers Redis's XINFO STREAM (no acklevel field).
	if v := fmt.Sprint(mustDo(t, c, "XINFO", "STREAM", "s")); strings.Contains(v, "acklevel") {
		t.Fatalf("XINFO STREAM of a stream with the default QUORUM shows acklevel: %s", v)
	}
	runSteps(t, c, []step{{[]string{"CONFIG", "SET", "stream-default-acklevel", "LEADER"}, "+OK"}})
	if got := xinfoAckLevel(t, c, "s"); got != "leader" {
		t.Fatalf("acklevel %q after CONFIG SET stream-default-acklevel leader", got)
	}
	// The shard follows CONFIG SET: XADDs to s are now answered early.
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		mustDo(t, c, "XADD", "s", "*", "f", "v")
		if n, _, _ := srv.node.Shard(0).AckStats(); n == 0 {
			return errors.New("no XADD answered at LEADER level after CONFIG SET")
		}
		return nil
	})
	runSteps(t, c, []step{
		{[]string{"XCFGSET", "s", "ACKLEVEL", "quorum", "IDMP-DURATION", "60"}, "+OK"},
	})
	if got := xinfoAckLevel(t, c, "s"); got != "quorum" {
		t.Fatalf("acklevel %q after XCFGSET ACKLEVEL quorum", got)
	}
	if got := xinfoIDMP(t, c, "s"); got != "idmp-duration=60 idmp-maxsize=100 pids-tracked=0 iids-tracked=0 iids-added=0 iids-duplicates=0" {
		t.Fatalf("IDMP with ACKLEVEL: %s", got)
	}
	runSteps(t, c, []step{{[]string{"XCFGSET", "s", "ACKLEVEL", "LEADER"}, "+OK"}})
	v := do(t, c, "XINFO", "STREAM", "s", "FULL")
	for i := 0; i+1 < len(v.Elems); i += 2 {
		if v.Elems[i].Str == "acklevel" && v.Elems[i+1].Str != "leader" {
			t.Fatalf("XINFO STREAM FULL acklevel %s", v.Elems[i+1])
		}
	}
}

// TestAckLevelLeaderServer: XADDs to a LEADER stream are answered at the
// leader's log write (a one-node cluster), in order, pipelined too; a
// reader blocked on the stream is woken once the entry is applied, as for
// any XADD.
func TestAckLevelLeaderServer(t *testing.T) {
	cn := startClusterWith(t, 1, 1, false, func(_ int, c *config.Config) { c.StreamDefaultAckLevel = "leader" })[0]
	s, addr := cn.srv, cn.addr
	w, r := dial(t, addr), dial(t, addr)
	sh := s.node.Shard(0)
	// The first XADDs of a term wait for the tracker's barrier.
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		mustDo(t, w, "XADD", "warm", "*", "f", "v")
		if n, _, _ := sh.AckStats(); n == 0 {
			return errors.New("no XADD answered at LEADER level yet")
		}
		return nil
	})
	if err := r.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, w, 1)
	before, _, _ := sh.AckStats()
	mustDo(t, w, "XADD", "s", "5-1", "f", "v")
	if got := receive(t, r); got != `[["s", [["5-1", ["f", "v"]]]]]` {
		t.Fatalf("blocked reader got %s", got)
	}
	pipelineOrderedXAdds(t, w, 20, streams.ID{Ms: 5, Seq: 1})
	if n, _, bad := sh.AckStats(); n <= before || bad != 0 {
		t.Fatalf("%d early answers (%d before), %d mismatches", n, before, bad)
	}
	runSteps(t, w, []step{{[]string{"XLEN", "s"}, "(integer) 21"}})
	// The per-level answer latency histograms (a LEADER stream made QUORUM
	// answers at commit again).
	runSteps(t, w, []step{{[]string{"XCFGSET", "s", "ACKLEVEL", "QUORUM"}, "+OK"}})
	mustDo(t, w, "XADD", "s", "*", "f", "quorum")
	fams := metricstest.Scrape(t, s.MetricsHandler())
	leader := histogram(t, fams, "streamd_xadd_ack_duration_seconds", "shard", "0", "acklevel", "leader")
	quorum := histogram(t, fams, "streamd_xadd_ack_duration_seconds", "shard", "0", "acklevel", "quorum")
	checkHistogram(t, "leader acks", leader)
	checkHistogram(t, "quorum acks", quorum)
	if n, _, _ := sh.AckStats(); leader.GetSampleCount() != uint64(n) || quorum.GetSampleCount() < 1 {
		t.Fatalf("leader acks %d (shard: %d), quorum acks %d", leader.GetSampleCount(), n, quorum.GetSampleCount())
	}
}

// TestAckLevelSingleNodeAtCommit: on a single node the log write is the
// commit (it writes its log itself, replication/local.go): LEADER XADDs are
// answered when applied, in order, and counted as quorum answers.
func TestAckLevelSingleNodeAtCommit(t *testing.T) {
	s, addr := startTestServer(t, func(c *config.Config) { c.StreamDefaultAckLevel = "leader" })
	w := dial(t, addr)
	pipelineOrderedXAdds(t, w, 20, streams.ID{})
	runSteps(t, w, []step{{[]string{"XLEN", "s"}, "(integer) 20"}})
	if n, _, bad := s.node.Shard(0).AckStats(); n != 0 || bad != 0 {
		t.Fatalf("%d early answers, %d mismatches on a single node", n, bad)
	}
	fams := metricstest.Scrape(t, s.MetricsHandler())
	if quorum := histogram(t, fams, "streamd_xadd_ack_duration_seconds", "shard", "0", "acklevel", "quorum"); quorum.GetSampleCount() < 20 {
		t.Fatalf("quorum acks %d, want the 20 XADDs", quorum.GetSampleCount())
	}
}

// pipelineOrderedXAdds sends n XADD s * … on w before reading any reply, then
// checks that the replies are IDs, each above the last (after: above it).
func pipelineOrderedXAdds(t *testing.T, w *respConn, n int, after streams.ID) {
	t.Helper()
	for i := range n {
		if err := w.Send("XADD", "s", "*", "i", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	last := after
	for i := range n {
		got := receive(t, w)
		id, err := streams.ParseID([]byte(strings.Trim(got, `"`)), 0)
		if err != nil || !last.Less(id) {
			t.Fatalf("reply %d: %s after %s (%v)", i, got, last, err)
		}
		last = id
	}
}
