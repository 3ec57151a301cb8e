package main

// A node must never be left unable to start (issue 12): a failed or
// interrupted --join leaves a data directory that starts again with the
// same command line; a member restarted with its original --join while the
// seed is down starts as that member; a busy port stops the start-up
// naming the setting before anything is created on disk, except the
// default metrics address, which is a warning.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// newClusterNode is a member-to-be on fresh ports and directory base/id.
func newClusterNode(t *testing.T, base, id string) *clusterNode {
	return &clusterNode{id: id, port: pickPort(t), raftPort: pickPort(t), dir: filepath.Join(base, id)}
}

// waitLog polls until the process has logged text (failing if it exits
// first, unless mayExit).
func waitLog(t *testing.T, p *proc, text string, mayExit bool) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, 10*time.Millisecond, func() error {
		if strings.Contains(p.logs(), text) {
			return nil
		}
		if p.exited() && !mayExit {
			t.Fatalf("streamd exited before logging %q: %v\n%s", text, p.err, p.logs())
		}
		return fmt.Errorf("no %q in the log yet", text)
	})
}

// waitXLen polls XLEN key through port until it answers want.
func waitXLen(t *testing.T, port int, key string, want int64) {
	t.Helper()
	c := newClient(t, port, 0)
	testutil.Eventually(t, 60*time.Second, 20*time.Millisecond, func() error {
		got, err := c.XLen(ctxT(t), key).Result()
		if err != nil || got != want {
			return fmt.Errorf("XLEN %s = %d, %v; want %d", key, got, err, want)
		}
		return nil
	})
}

// doSettled runs a command through port, retrying while the cluster
// answers that it was not applied (TRYAGAIN, CLUSTERDOWN: leadership moving
// as members come and go, with balance-leaders on).
func doSettled(t *testing.T, port int, args ...any) {
	t.Helper()
	c := newClient(t, port, 0)
	testutil.Eventually(t, 60*time.Second, 20*time.Millisecond, func() error {
		err := c.Do(ctxT(t), args...).Err()
		if err != nil && !strings.HasPrefix(err.Error(), "TRYAGAIN") && !strings.HasPrefix(err.Error(), "CLUSTERDOWN") {
			t.Fatalf("%v: %v", args, err)
		}
		return err
	})
}

// TestJoinFailureRestarts: a node whose join failed — the seed was down
// and the process was SIGKILLed while retrying, or the seed refused it and
// the process exited — starts again with the same command line and joins;
// one SIGKILLed at several moments of a join that reached the seed comes
// back and ends as a member holding the data. Every attempt is logged;
// a refusal ends the join at once; "Ready to accept connections" is logged
// only by a node that serves as a member.
func TestJoinFailureRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	streamdBinary(t)
	base := t.TempDir()
	n1, n2, n3 := newClusterNode(t, base, "n1"), newClusterNode(t, base, "n2"), newClusterNode(t, base, "n3")
	seed := "127.0.0.1:" + strconv.Itoa(n1.port)

	// n2: the seed is not running; SIGKILL while it retries.
	n2.p = startServer(t, n2.port, n2.dir, n2.args("--join", seed)...)
	waitLog(t, n2.p, "connection refused", false)
	n2.p.kill()
	if strings.Contains(n2.p.logs(), "Ready to accept connections") {
		t.Fatalf("a node that never joined logged Ready to accept connections:\n%s", n2.p.logs())
	}
	if !strings.Contains(n2.p.logs(), `msg="RAFT ADD failed, retrying" attempt=1 via=`+seed) {
		t.Fatalf("the failed join attempt is not logged:\n%s", n2.p.logs())
	}
	// Same command line, seed still down: it starts and tries again.
	n2.p = startServer(t, n2.port, n2.dir, n2.args("--join", seed)...)
	waitLog(t, n2.p, "attempt=2", false)
	if _, err := os.Stat(filepath.Join(n2.dir, "JOINING")); err != nil {
		t.Fatalf("a node waiting to be added has no JOINING marker: %v", err)
	}

	// The seed comes up: n2 (still retrying) joins.
	n1.p = startReady(t, n1.port, n1.dir, n1.args("--bootstrap")...)
	waitLog(t, n2.p, "Added to the cluster", false)
	waitLog(t, n2.p, "Ready to accept connections", false)
	waitVoters(t, []*clusterNode{n1, n2}, 2)
	doSettled(t, n1.port, "XADD", "s", "*", "f", "before")
	waitXLen(t, n2.port, "s", 1)
	testutil.Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
		if _, err := os.Stat(filepath.Join(n2.dir, "JOINING")); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("JOINING still present after the join: %v", err)
		}
		return nil
	})

	// n3: its --join names a single (non-cluster) server, which refuses:
	// no retry, the process exits.
	single := startReady(t, pickPort(t), filepath.Join(base, "single"))
	start := time.Now()
	n3.p = startServer(t, n3.port, n3.dir, n3.args("--join", single.addr())...)
	if !n3.p.waitExit(25 * time.Second) {
		t.Fatalf("a refused join is still retrying after %v:\n%s", time.Since(start), n3.p.logs())
	}
	n3.p.requireLogs("RAFT ADD refused: not retrying", "this node is not part of a cluster")
	if strings.Count(n3.p.logs(), "attempt=") != 1 || strings.Contains(n3.p.logs(), "Ready to accept connections") {
		t.Fatalf("a refused join: want one attempt and no Ready line:\n%s", n3.p.logs())
	}
	// Restarted with the right seed it joins.
	n3.p = startServer(t, n3.port, n3.dir, n3.args("--join", seed)...)
	waitLog(t, n3.p, "Added to the cluster", false)
	waitVoters(t, []*clusterNode{n1, n2, n3}, 3)
	waitXLen(t, n3.port, "s", 1)

	// A join SIGKILLed at several moments after it began (before the
	// seed answered, while the log or snapshot was arriving, after):
	// the same command line brings the node back as a member.
	for i, delay := range []time.Duration{0, 15 * time.Millisecond, 80 * time.Millisecond} {
		n := newClusterNode(t, base, "k"+strconv.Itoa(i))
		n.p = startServer(t, n.port, n.dir, n.args("--join", seed)...)
		waitLog(t, n.p, "Joining the cluster", false)
		time.Sleep(delay) // where the SIGKILL lands, not a synchronisation
		n.p.kill()
		n.p = startServer(t, n.port, n.dir, n.args("--join", seed)...)
		waitLog(t, n.p, "Ready to accept connections", false)
		waitVoters(t, []*clusterNode{n1, n2, n3, n}, 4)
		doSettled(t, n1.port, "XADD", "s", "*", "f", "while-"+n.id)
		waitXLen(t, n.port, "s", int64(2+i))
		// Leave the cluster at three voters for the next round.
		n.p.terminate()
		doSettled(t, n1.port, "RAFT", "REMOVE", n.id)
		waitVoters(t, []*clusterNode{n1, n2, n3}, 3)
	}
}

// TestMemberRestartSeedDown: the seed (n1) is SIGKILLed and stays down; n2
// and n3 are SIGKILLed and restarted with their original --join n1: both
// start as the members they are (saying they ignore --join), elect a
// leader between them and serve what was written before, and new writes.
func TestMemberRestartSeedDown(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	nodes := start3Nodes(t)
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	c := newClient(t, n2.port, 0)
	id := asStr(t, "XADD", do(t, c, "XADD", "s", "*", "f", "before"))
	waitApplied(t, nodes)
	n1.p.kill()
	n2.p.kill()
	n3.p.kill()
	seed := "127.0.0.1:" + strconv.Itoa(n1.port)
	for _, n := range []*clusterNode{n2, n3} {
		n.p = startServer(t, n.port, n.dir, n.args("--join", seed)...)
	}
	for _, n := range []*clusterNode{n2, n3} {
		waitLog(t, n.p, "Ready to accept connections", false)
		n.p.requireLogs("This node is already a member of its cluster (its data directory says so): ignoring --join " + seed)
		if strings.Contains(n.p.logs(), "RAFT ADD") {
			t.Errorf("%s: a member tried to join again:\n%s", n.id, n.p.logs())
		}
	}
	leader := leaderOf(t, []*clusterNode{n2, n3}, 0)
	if leader != n2 && leader != n3 {
		t.Fatalf("leader %v", leader)
	}
	for _, n := range []*clusterNode{n2, n3} {
		c := newClient(t, n.port, 0)
		var v any
		testutil.Eventually(t, 60*time.Second, 20*time.Millisecond, func() (err error) {
			v, err = c.Do(ctxT(t), "XRANGE", "s", "-", "+").Result()
			return err // TRYAGAIN/CLUSTERDOWN while leadership settles
		})
		got := asList(t, "XRANGE", v)
		if len(got) != 1 || asStr(t, "id", asList(t, "entry", got[0])[0]) != id {
			t.Fatalf("%s: XRANGE after the restart: %v, want the entry %s", n.id, got, id)
		}
	}
	for _, n := range []*clusterNode{n2, n3} {
		doSettled(t, n.port, "XADD", "s", "*", "f", "after-"+n.id)
	}
	waitXLen(t, n3.port, "s", 3) // the entry from before and one write through each node
}

// TestBusyPortsBeforeDisk: a busy port, tls-port, raft-addr or explicit
// metrics-addr stops the start-up with an error naming the setting, and
// nothing is created on disk; the default metrics-addr busy is a warning
// and the node serves without metrics.
func TestBusyPortsBeforeDisk(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	bport := busy.Addr().(*net.TCPAddr).Port
	baddr := busy.Addr().String()
	certs := genCerts(t, "busy")
	for _, tc := range []struct {
		name string
		port int
		args []string
		want string
	}{
		{"port", bport, nil, fmt.Sprintf("port %d is in use", bport)},
		{"tls-port", 0, []string{"--tls-port", strconv.Itoa(bport), "--tls-cert-file", certs.Cert,
			"--tls-key-file", certs.Key, "--tls-ca-cert-file", certs.CA}, fmt.Sprintf("tls-port %d is in use", bport)},
		{"metrics-addr", 0, []string{"--metrics-addr", baddr}, "metrics-addr " + baddr + " is in use"},
		{"raft-addr", -1, []string{"--node-id", "n1", "--raft-addr", baddr, "--bootstrap"}, "raft-addr " + baddr + " is in use"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			port := tc.port
			if port < 0 {
				port = pickPort(t)
			}
			p := startServer(t, port, dir, tc.args...)
			if !p.waitExit(30 * time.Second) {
				t.Fatalf("still running with a busy %s", tc.name)
			}
			if p.exitCode() != 1 || !strings.Contains(p.logs(), tc.want) {
				t.Fatalf("exit %d, want 1 and %q in:\n%s", p.exitCode(), tc.want, p.logs())
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the data directory was created: %v", err)
			}
		})
	}

	t.Run("default-metrics-addr", func(t *testing.T) {
		// Hold the default address (if something else holds it, it is
		// busy all the same).
		if ln, err := net.Listen("tcp", "127.0.0.1:9121"); err == nil {
			defer ln.Close()
		}
		port := pickPort(t)
		dir := filepath.Join(t.TempDir(), "data")
		p := launch(t, streamdBinary(t), []string{"--port", strconv.Itoa(port), "--dir", dir}, port, dir)
		p.waitReady(60 * time.Second)
		waitLog(t, p, "Ready to accept connections", false)
		p.requireLogs("metrics-addr 127.0.0.1:9121 (the default) is in use")
		p.terminate()
	})
}

// TestREADMEClusterExample runs the README's three-node example as written
// (its ./streamd lines, with this test's ports and directories substituted
// and metrics-addr left at its default): the nodes start in any order on
// one host, n2 and n3 log Ready once joined, and the XADD and RAFT SHARDS
// lines work.
func TestREADMEClusterExample(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "./streamd --port 700") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 || !strings.Contains(string(b), "make build\n./streamd --port 7001") {
		t.Fatalf("README's cluster example: want make build and three ./streamd lines, got %q", lines)
	}
	bin := streamdBinary(t)
	base := t.TempDir()
	repl := []string{}
	ports := make([]int, 3)
	for i := range 3 {
		ports[i] = pickPort(t)
		n := strconv.Itoa(i + 1)
		repl = append(repl, "127.0.0.1:700"+n, "127.0.0.1:"+strconv.Itoa(ports[i]),
			"--port 700"+n, "--port "+strconv.Itoa(ports[i]),
			"127.0.0.1:1700"+n, "127.0.0.1:"+strconv.Itoa(pickPort(t)),
			"--dir d"+n, "--dir "+filepath.Join(base, "d"+n))
	}
	r := strings.NewReplacer(repl...)
	procs := make([]*proc, 3)
	for i, l := range lines {
		cmd, redirect, ok := strings.Cut(r.Replace(l), " > n")
		if !ok || !strings.HasSuffix(redirect, ".log 2>&1 &") {
			t.Fatalf("README line %q: want it in the background with its log in nX.log", l)
		}
		args := strings.Fields(cmd)[1:]
		if strings.Contains(cmd, "metrics-addr") {
			t.Fatalf("README line %q still needs a metrics-addr", l)
		}
		procs[i] = launch(t, bin, args, ports[i], filepath.Join(base, "d"+strconv.Itoa(i+1)))
	}
	for _, p := range procs[1:] {
		waitLog(t, p, "Ready to accept connections", false)
	}
	c := newClient(t, ports[1], 0)
	do(t, c, "XADD", "orders", "*", "item", "book")
	shards, err := raftShards(ports[0])
	if err != nil || len(shards) != 1 || shards[0]["voters"] != int64(3) {
		t.Fatalf("RAFT SHARDS on n1: %v, %v", shards, err)
	}
	for _, p := range procs {
		p.terminate()
	}
}
