package dapr

// Dapr's pubsub.redis against a 3-node streamd cluster (the real binary,
// README "Cluster"), with the shard's leader SIGKILLed while messages flow:
// every publish Dapr saw acknowledged is delivered at least once.

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dapr/components-contrib/pubsub"
	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// clusterNode is one streamd process of the test cluster.
type clusterNode struct {
	id       string
	port     int
	raftPort int
	cmd      *exec.Cmd
	out      syncBuffer
	done     chan struct{}
}

// addr is the node's client address.
func (n *clusterNode) addr() string { return "127.0.0.1:" + strconv.Itoa(n.port) }

// startNode starts the binary for n with the extra cluster flags.
func startNode(t *testing.T, bin, dir string, n *clusterNode, extra ...string) {
	t.Helper()
	args := []string{"--port", strconv.Itoa(n.port), "--dir", filepath.Join(dir, n.id), "--metrics-addr", "",
		"--node-id", n.id, "--raft-addr", "127.0.0.1:" + strconv.Itoa(n.raftPort),
		"--raft-heartbeat-timeout", "300ms", "--raft-election-timeout", "300ms", "--raft-lease-timeout", "150ms",
		"--quorum-timeout", "3s"}
	n.cmd = exec.Command(bin, append(args, extra...)...)
	n.cmd.Stdout, n.cmd.Stderr = &n.out, &n.out
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.done = make(chan struct{})
	go func() { n.cmd.Wait(); close(n.done) }()
	t.Cleanup(func() {
		n.cmd.Process.Kill()
		<-n.done
		if t.Failed() {
			t.Logf("%s output:\n%s", n.id, n.out.String())
		}
	})
}

// shardLeader asks addr for shard 0's leader (RAFT SHARDS) and the number
// of voters.
func shardLeader(ctx context.Context, addr string) (string, int64, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: 3 * time.Second})
	defer c.Close()
	v, err := c.Do(ctx, "RAFT", "SHARDS").Slice()
	if err != nil {
		return "", 0, err
	}
	if len(v) == 0 {
		return "", 0, fmt.Errorf("RAFT SHARDS: %v", v)
	}
	kv, _ := v[0].([]any)
	var leader string
	var voters int64
	for i := 0; i+1 < len(kv); i += 2 {
		switch fmt.Sprint(kv[i]) {
		case "leader":
			leader = fmt.Sprint(kv[i+1])
		case "voters":
			voters, _ = kv[i+1].(int64)
		}
	}
	return leader, voters, nil
}

// TestDaprClusterLeaderKill: Dapr publishes through one follower and
// subscribes through the other (plain go-redis clients: the followers
// forward to the leader, blocking XREADGROUP included); the leader is
// SIGKILLed mid-stream; publishing goes on (a failed publish is retried as
// a Dapr app would, so it may be stored twice); every acknowledged message is
// delivered, and streamd's group ends with nothing pending.
func TestDaprClusterLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	bin := buildStreamd(t)
	dir := t.TempDir()
	nodes := make([]*clusterNode, 3)
	for i := range nodes {
		nodes[i] = &clusterNode{id: "n" + strconv.Itoa(i+1), port: testutil.FreePort(t), raftPort: testutil.FreePort(t)}
	}
	startNode(t, bin, dir, nodes[0], "--bootstrap")
	for _, n := range nodes[1:] {
		startNode(t, bin, dir, n, "--join", nodes[0].addr())
	}
	ctx := context.Background()
	var leader *clusterNode
	testutil.Eventually(t, 60*time.Second, 50*time.Millisecond, func() error {
		for _, n := range nodes {
			l, voters, err := shardLeader(ctx, n.addr())
			if err != nil || l == "" || voters != 3 {
				return fmt.Errorf("%s: leader %q voters %d err %v", n.id, l, voters, err)
			}
			for _, m := range nodes {
				if m.id == l {
					leader = m
				}
			}
		}
		return nil
	})
	var followers []*clusterNode
	for _, n := range nodes {
		if n != leader {
			followers = append(followers, n)
		}
	}

	pub := newComponent(t, map[string]string{"redisHost": followers[0].addr(), "consumerID": "pub",
		"redisMaxRetries": "0", "writeTimeout": "5s"})
	sub := newComponent(t, map[string]string{"redisHost": followers[1].addr(), "consumerID": "workers",
		"processingTimeout": "1000", "redeliverInterval": "300"})
	r := &receiver{}
	subscribe(t, sub, "events", r)

	const total = 200
	var acked []string
	failures := 0
	for i := range total {
		if i == total/4 {
			// Mid-stream: the subscriber is parked on or reading from the
			// leader (through its follower) when it dies.
			if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		m := "event-" + strconv.Itoa(i)
		deadline := time.Now().Add(30 * time.Second)
		for {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := pub.Publish(pctx, &pubsub.PublishRequest{PubsubName: "streamd", Topic: "events", Data: []byte(m)})
			cancel()
			if err == nil {
				break
			}
			failures++
			if time.Now().After(deadline) {
				t.Fatalf("publishing %s failed for 30s: %v", m, err)
			}
			time.Sleep(50 * time.Millisecond) // a publisher's retry back-off, not a wait for state
		}
		acked = append(acked, m)
	}
	<-leader.done
	r.waitAll(t, 60*time.Second, acked)
	t.Logf("%d acknowledged publishes, %d failed attempts retried, %d deliveries", len(acked), failures, len(r.messages()))

	// streamd's side, through a survivor: the group read the whole stream
	// and acked it (a delivery lost with the leader is reclaimed by Dapr).
	check := newClient(t, followers[0].addr(), "")
	testutil.Eventually(t, 60*time.Second, 50*time.Millisecond, func() error {
		n, err := check.XLen(ctx, "events").Result()
		if err != nil {
			return err
		}
		if n < total {
			return fmt.Errorf("XLEN events %d < %d acknowledged", n, total)
		}
		gs, err := check.XInfoGroups(ctx, "events").Result()
		if err != nil {
			return err
		}
		if len(gs) != 1 || gs[0].Name != "workers" || gs[0].Pending != 0 || gs[0].Lag != 0 {
			return fmt.Errorf("XINFO GROUPS events %+v", gs)
		}
		pe, err := check.XPending(ctx, "events", "workers").Result()
		if err != nil || pe.Count != 0 {
			return fmt.Errorf("XPENDING events workers %+v, %v", pe, err)
		}
		return nil
	})
}
