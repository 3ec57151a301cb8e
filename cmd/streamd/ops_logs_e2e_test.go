package main

// Issue 12, what operators see (multi-process, the real binary): a clean
// shutdown of a cluster logs no ERROR and ends each log with Redis's "bye
// bye" line; a fresh node logs no "replaying 0 of 1 entries"; a write that
// reaches a follower while the leader's process has just died waits for the
// new leader instead of answering TRYAGAIN; /readyz on a follower whose
// shard has no reachable leader answers 503.

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// byeLine is the last line of a clean exit (Redis's own last line says
// "Redis is now ready to exit, bye bye...").
const byeLine = "is now ready to exit, bye bye..."

// checkCleanLog fails the test if log has an ERROR-level line, a raft level
// tag inside a message, or does not end with the bye-bye line.
func checkCleanLog(t *testing.T, name, log string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	for _, l := range lines {
		if strings.Contains(l, "level=ERROR") {
			t.Errorf("%s: ERROR line on a clean shutdown: %s", name, l)
		}
		if strings.Contains(l, "[WARN]") || strings.Contains(l, "[ERROR]") {
			t.Errorf("%s: a level tag inside a message (the record's level says it): %s", name, l)
		}
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, byeLine) {
		t.Errorf("%s: the last line is %q, want the %q line", name, last, byeLine)
	}
}

// TestClusterCleanShutdownLogsE2E: a three-node cluster takes writes, then
// each node is stopped with SIGTERM in turn (a rolling stop: the last ones
// see their peers go); no node logs an ERROR, and each log ends with the
// bye-bye line.
func TestClusterCleanShutdownLogsE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	nodes := start3Nodes(t)
	leader := leaderOf(t, nodes, 0)
	for _, n := range nodes {
		c := newClient(t, n.port, 0)
		do(t, c, "XADD", "s", "*", "from", n.id)
	}
	// The leader last: its followers go first, so it sees them leave.
	var order []*clusterNode
	for _, n := range nodes {
		if n != leader {
			order = append(order, n)
		}
	}
	order = append(order, leader)
	for _, n := range order {
		n.p.terminate()
	}
	for _, n := range nodes {
		checkCleanLog(t, n.id, n.p.logs())
		if strings.Contains(n.p.logs(), "replaying") {
			t.Errorf("%s: a replay line on a fresh cluster:\n%s", n.id, n.p.logs())
		}
	}
}

// TestFreshNodeStartLogE2E: a node bootstrapping a new cluster with the
// default Raft timings (its first election takes over the replay report's
// one-second period) logs no "replaying 0 of 1 entries": the bootstrap
// configuration is no log to replay.
func TestFreshNodeStartLogE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	port, raftPort := pickPort(t), pickPort(t)
	p := startReady(t, port, filepath.Join(t.TempDir(), "n1"),
		"--node-id", "n1", "--raft-addr", "127.0.0.1:"+strconv.Itoa(raftPort), "--bootstrap")
	testutil.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		if !strings.Contains(p.logs(), "Cluster node ready") {
			return fmt.Errorf("not ready yet")
		}
		return nil
	})
	p.terminate()
	if strings.Contains(p.logs(), "replaying") || strings.Contains(p.logs(), "replayed") {
		t.Errorf("a replay line on a fresh bootstrap:\n%s", p.logs())
	}
	checkCleanLog(t, "n1", p.logs())
}

// TestFailoverWaitsForLeaderE2E: a client of a follower (which forwards to
// the leader, over an upstream it already has) sends XADD right after the
// leader's process was killed: the write waits for the new leader and
// succeeds — no TRYAGAIN. Then a second node is killed: the one left has no
// reachable leader (no majority) and its /readyz turns 503.
func TestFailoverWaitsForLeaderE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	nodes := start3NodesMetrics(t)
	leader := leaderOf(t, nodes, 0)
	var via, other *clusterNode
	for _, n := range nodes {
		switch {
		case n == leader:
		case via == nil:
			via = n
		default:
			other = n
		}
	}
	for _, n := range nodes {
		if code, body, err := httpGet(n.metricsURL() + "/readyz"); err != nil || code != 200 {
			t.Fatalf("%s /readyz before the failover: %d %q %v", n.id, code, body, err)
		}
	}
	c := newClient(t, via.port, 0)
	do(t, c, "XADD", "s", "*", "n", "0") // forwarded: the follower now has an upstream to the leader

	leader.p.kill()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"n", "1"}}).Result()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("XADD through the follower right after the leader died: %v (after %v)", err, took)
	}
	t.Logf("XADD %s answered %v after the leader was killed", id, took)
	if n := asInt(t, "XLEN", do(t, c, "XLEN", "s")); n != 2 {
		t.Fatalf("XLEN = %d, want 2", n)
	}

	other.p.kill()
	testutil.Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
		code, body, err := httpGet(via.metricsURL() + "/readyz")
		if err != nil {
			return err
		}
		if code != 503 || !strings.Contains(body, "shard 0") {
			return fmt.Errorf("/readyz = %d %q, want 503 naming shard 0", code, body)
		}
		return nil
	})
}

// start3NodesMetrics is start3Nodes with each node's metrics endpoint on
// a port of its own.
func start3NodesMetrics(t *testing.T) []*clusterNode {
	t.Helper()
	return start3NodesWith(t, func(int) []string {
		return []string{"--metrics-addr", "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))}
	})
}

// metricsURL is the node's metrics endpoint (start3NodesMetrics).
func (n *clusterNode) metricsURL() string {
	for i, a := range n.extra {
		if a == "--metrics-addr" && i+1 < len(n.extra) {
			return "http://" + n.extra[i+1]
		}
	}
	n.p.t.Fatalf("%s has no metrics address", n.id)
	return ""
}
