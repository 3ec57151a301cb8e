package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/mux"
	"streamd/internal/testutil"
	"streamd/replication"
)

// TestClusterCommandsSingleNode: the embedded single node answers CLUSTER
// and READONLY as a standalone Redis, RAFT shows its one shard and refuses
// membership changes, INFO replication shows the shard.
func TestClusterCommandsSingleNode(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"CLUSTER", "INFO"}, "(error) ERR This instance has cluster support disabled"},
		{[]string{"CLUSTER", "KEYSLOT", "foo"}, "(error) ERR This instance has cluster support disabled"},
		{[]string{"CLUSTER", "SLOTS"}, "(error) ERR This instance has cluster support disabled"},
		{[]string{"CLUSTER"}, "(error) ERR wrong number of arguments for 'cluster' command"},
		{[]string{"READONLY"}, "(error) ERR This instance has cluster support disabled"},
		{[]string{"READWRITE"}, "(error) ERR This instance has cluster support disabled"},
		{[]string{"RAFT", "ADD", "n2", "127.0.0.1:1"}, "(error) " + string(errNotClustered)},
		{[]string{"RAFT", "REMOVE", "n2"}, "(error) " + string(errNotClustered)},
		{[]string{"RAFT", "TRANSFER", "0"}, "(error) " + string(errNotClustered)},
		{[]string{"RAFT", "TRANSFER", "0", "a", "b"}, "(error) ERR wrong number of arguments for 'raft|transfer' command"},
		{[]string{"RAFT", "ADD", "n2"}, "(error) ERR wrong number of arguments for 'raft|add' command"},
		{[]string{"RAFT", "NOPE"}, "(error) ERR unknown subcommand 'NOPE'. Try RAFT HELP."},
		{[]string{"RAFT", "NODES"}, `[["id", "streamd", "raft-addr", "streamd", "client-addr", "` + addr + `", "voter", (integer) 1, "myself", (integer) 1, "leads", [(integer) 0]]]`},
	})
	v, err := c.Do("RAFT", "SHARDS")
	if err != nil || !strings.HasPrefix(v.String(), `[["shard", (integer) 0, "slots", [(integer) 0, (integer) 16383], "leader", "streamd", "leader-addr", `) ||
		!strings.HasSuffix(v.String(), `"voters", (integer) 1, "role", "leader"]]`) {
		t.Fatalf("RAFT SHARDS = %s, %v", v, err)
	}
	v, _ = c.Do("RAFT", "HELP")
	if len(v.Elems) < 10 || !strings.Contains(v.String(), "TRANSFER <shard> [<node-id>]") {
		t.Fatalf("RAFT HELP = %s", v)
	}
	info := infoFields(t, c, "RAFT", "INFO")
	if info["node_id"] != "streamd" || info["clustered"] != "0" || info["ready"] != "1" || info["shards"] != "1" ||
		!strings.HasPrefix(info["shard0"], "role=leader,term=") {
		t.Fatalf("RAFT INFO = %v", info)
	}
	info = infoFields(t, c, "INFO", "replication")
	if info["role"] != "master" || info["connected_slaves"] != "0" || info["shards"] != "1" ||
		!strings.Contains(info["shard0"], ",slots=0-16383,") {
		t.Fatalf("INFO replication = %v", info)
	}
	info = infoFields(t, c, "INFO", "cluster")
	if info["cluster_enabled"] != "0" {
		t.Fatalf("INFO cluster = %v", info)
	}
	// WAIT on a single node: no replicas.
	runSteps(t, c, []step{
		{[]string{"XADD", "s", "1-1", "f", "v"}, `"1-1"`},
		{[]string{"WAIT", "0", "0"}, "(integer) 0"},
		{[]string{"WAIT", "1", "10"}, "(integer) 0"},
	})
}

// TestClusterCommandsClusterModeSingleNode: cluster-enabled yes on the
// embedded single node: one slot range led by itself, Redis's shapes (as a
// real one-node Redis Cluster answers them).
func TestClusterCommandsClusterModeSingleNode(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.ClusterEnabled = true })
	host, port, _ := net.SplitHostPort(addr)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"CLUSTER", "KEYSLOT", "foo"}, "(integer) 12182"},
		{[]string{"CLUSTER", "KEYSLOT", "somekey"}, "(integer) 11058"},
		{[]string{"CLUSTER", "KEYSLOT", "foo{hash_tag}"}, "(integer) 2515"},
		{[]string{"CLUSTER", "MYID"}, `"streamd"`},
		{[]string{"CLUSTER", "SLOTS"}, `[[(integer) 0, (integer) 16383, ["` + host + `", (integer) ` + port + `, "streamd", []]]]`},
	})
	v, err := c.Do("CLUSTER", "SHARDS")
	want := `[["slots", [(integer) 0, (integer) 16383], "nodes", [["id", "streamd", "port", (integer) ` + port +
		`, "ip", "` + host + `", "endpoint", "` + host + `", "role", "master", "replication-offset", (integer) `
	if err != nil || !strings.HasPrefix(v.String(), want) || !strings.HasSuffix(v.String(), `"health", "online"]]]]`) {
		t.Fatalf("CLUSTER SHARDS = %s, %v", v, err)
	}
	runSteps(t, c, []step{
		{[]string{"CLUSTER", "NOPE"}, "(error) ERR unknown subcommand 'NOPE'. Try CLUSTER HELP."},
		{[]string{"READONLY"}, "+OK"},
		{[]string{"READWRITE"}, "+OK"},
	})
	v, err = c.Do("CLUSTER", "NODES")
	if err != nil || v.Str != "streamd "+host+":"+port+"@0 myself,master - 0 0 "+termOf(t, c)+" connected 0-16383\n" {
		t.Fatalf("CLUSTER NODES = %q, %v", v.Str, err)
	}
	info := infoFields(t, c, "CLUSTER", "INFO")
	for k, want := range map[string]string{"cluster_state": "ok", "cluster_slots_assigned": "16384", "cluster_slots_ok": "16384",
		"cluster_slots_fail": "0", "cluster_known_nodes": "1", "cluster_size": "1", "cluster_shards": "1"} {
		if info[k] != want {
			t.Errorf("CLUSTER INFO %s = %q, want %q", k, info[k], want)
		}
	}
	if info["cluster_current_epoch"] == "0" || info["cluster_current_epoch"] != info["cluster_my_epoch"] {
		t.Errorf("CLUSTER INFO epochs %v", info)
	}
	if f := infoFields(t, c, "INFO", "cluster"); f["cluster_enabled"] != "1" {
		t.Errorf("INFO cluster = %v", f)
	}
	if f := infoFields(t, c, "INFO", "server"); f["redis_mode"] != "cluster" {
		t.Errorf("INFO server redis_mode = %q", f["redis_mode"])
	}
	v, _ = c.Do("CLUSTER", "HELP")
	if !strings.Contains(v.String(), "KEYSLOT <key>") {
		t.Errorf("CLUSTER HELP = %s", v)
	}
}

// termOf is shard 0's term from RAFT SHARDS.
func termOf(t *testing.T, c *respConn) string {
	t.Helper()
	v, err := c.Do("RAFT", "SHARDS")
	if err != nil || len(v.Elems) == 0 {
		t.Fatalf("RAFT SHARDS = %s, %v", v, err)
	}
	m := v.Elems[0].Elems
	for i := 0; i+1 < len(m); i += 2 {
		if m[i].Str == "term" {
			return strconv.FormatInt(m[i+1].Int, 10)
		}
	}
	t.Fatalf("no term in %s", v)
	return ""
}

// infoFields runs an INFO-style command and splits its "k:v" lines.
func infoFields(t *testing.T, c *respConn, args ...string) map[string]string {
	t.Helper()
	v, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if v.Kind == '-' {
		t.Fatalf("%v: %s", args, v)
	}
	out := map[string]string{}
	for _, line := range strings.Split(v.Str, "\r\n") {
		if k, val, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			out[k] = val
		}
	}
	return out
}

// admNode is an in-process cluster member with its server.
type admNode struct {
	id   string
	node *replication.Node
	srv  *Server
	addr string // client address
}

// startAdmCluster starts n in-process nodes on loopback with shards
// shards (n1 bootstraps, the others are added through n1), each with a
// server; cfg adjusts every server's configuration.
func startAdmCluster(t *testing.T, n, shards int, mod func(*config.Config)) []*admNode {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var nodes []*admNode
	for i := range n {
		id := "n" + strconv.Itoa(i+1)
		cln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		node, err := replication.OpenNode(replication.NodeOptions{
			Dir: t.TempDir(), Shards: shards, NodeID: id, RaftListener: rln, ClientAddr: cln.Addr().String(),
			Bootstrap: i == 0, Logger: log, QuorumTimeout: 2 * time.Second,
			Timing: replication.Timing{Heartbeat: 100 * time.Millisecond, Election: 100 * time.Millisecond, LeaderLease: 100 * time.Millisecond},
		})
		if err != nil {
			cln.Close()
			t.Fatal(err)
		}
		cfg := config.Default()
		cfg.Dir = t.TempDir()
		cfg.NodeID = id
		cfg.RaftAddr = node.RaftAddr()
		if mod != nil {
			mod(&cfg)
		}
		srv := NewNode(cfg, node, log)
		node.Mux().HandleDetached(mux.KindRESP, srv.ServeInternal)
		done := make(chan error, 1)
		go func() { done <- srv.Serve(cln) }()
		t.Cleanup(func() {
			srv.Close()
			<-done
			node.Close(false)
		})
		nodes = append(nodes, &admNode{id: id, node: node, srv: srv, addr: cln.Addr().String()})
	}
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if r := nodes[0].node.Ready(); r != "" {
			return errors.New(r)
		}
		return nil
	})
	for _, an := range nodes[1:] {
		c := dial(t, nodes[0].addr)
		if v, err := c.Do("RAFT", "ADD", an.id, an.node.RaftAddr()); err != nil || v.String() != "+OK" {
			t.Fatalf("RAFT ADD %s = %s, %v", an.id, v, err)
		}
	}
	testutil.Eventually(t, 20*time.Second, 10*time.Millisecond, func() error {
		for _, an := range nodes {
			if r := an.node.Ready(); r != "" {
				return fmt.Errorf("%s: %s", an.id, r)
			}
			for i := range shards {
				if v := an.node.Shard(i).Info().Voters; v != n {
					return fmt.Errorf("%s shard %d: %d voters", an.id, i, v)
				}
			}
		}
		return nil
	})
	return nodes
}

// leaderIndex returns the index in nodes of shard i's leader.
func leaderIndex(t *testing.T, nodes []*admNode, i int) int {
	t.Helper()
	k := -1
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		for j, an := range nodes {
			if an.node.Shard(i).IsLeader() {
				k = j
				return nil
			}
		}
		return fmt.Errorf("shard %d has no leader", i)
	})
	return k
}

// TestClusterAdminInProcess: three in-process nodes, two shards, cluster
// mode. CLUSTER SLOTS/SHARDS/NODES/INFO describe the same topology from
// every node, RAFT NODES/SHARDS list members and leaders, RAFT TRANSFER
// moves a leader, INFO replication reports master/slave, WAIT counts the
// replicas holding the client's last write, RAFT REMOVE shrinks every shard.
func TestClusterAdminInProcess(t *testing.T) {
	nodes := startAdmCluster(t, 3, 2, func(c *config.Config) { c.ClusterEnabled = true })
	l0 := leaderIndex(t, nodes, 0)
	c0 := dial(t, nodes[l0].addr)

	for _, an := range nodes {
		c := dial(t, an.addr)
		v, err := c.Do("CLUSTER", "SLOTS")
		if err != nil || len(v.Elems) != 2 {
			t.Fatalf("%s CLUSTER SLOTS = %s, %v", an.id, v, err)
		}
		for i, r := range v.Elems {
			first, last := replication.SlotRange(i, 2)
			if len(r.Elems) != 5 || r.Elems[0].Int != int64(first) || r.Elems[1].Int != int64(last) {
				t.Fatalf("%s CLUSTER SLOTS range %d = %s", an.id, i, r)
			}
			lid, _ := an.node.Leader(i)
			if r.Elems[2].Elems[2].Str != lid {
				t.Errorf("%s CLUSTER SLOTS range %d leader %s, want %s", an.id, i, r.Elems[2], lid)
			}
			ids := map[string]bool{}
			for _, nd := range r.Elems[2:] {
				ids[nd.Elems[2].Str] = true
				want := ""
				for _, o := range nodes {
					if o.id == nd.Elems[2].Str {
						want = o.addr
					}
				}
				if got := net.JoinHostPort(nd.Elems[0].Str, strconv.FormatInt(nd.Elems[1].Int, 10)); got != want {
					t.Errorf("%s CLUSTER SLOTS: %s at %s, want %s", an.id, nd.Elems[2].Str, got, want)
				}
			}
			if len(ids) != 3 {
				t.Errorf("%s CLUSTER SLOTS range %d nodes %s", an.id, i, r)
			}
		}
		text, err := c.Do("CLUSTER", "NODES")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(text.Str, "\n"), "\n")
		if len(lines) != 3 || strings.Count(text.Str, "myself") != 1 || !strings.Contains(text.Str, an.id+" "+an.addr+"@") {
			t.Errorf("%s CLUSTER NODES:\n%s", an.id, text.Str)
		}
		info := infoFields(t, c, "CLUSTER", "INFO")
		if info["cluster_state"] != "ok" || info["cluster_known_nodes"] != "3" || info["cluster_size"] != "2" || info["cluster_slots_ok"] != "16384" {
			t.Errorf("%s CLUSTER INFO %v", an.id, info)
		}
		v, err = c.Do("CLUSTER", "SHARDS")
		if err != nil || len(v.Elems) != 2 || len(v.Elems[0].Elems) != 4 || len(v.Elems[0].Elems[3].Elems) != 3 {
			t.Errorf("%s CLUSTER SHARDS = %s, %v", an.id, v, err)
		}
		v, err = c.Do("RAFT", "NODES")
		if err != nil || len(v.Elems) != 3 {
			t.Fatalf("%s RAFT NODES = %s, %v", an.id, v, err)
		}
		for j, m := range v.Elems {
			if m.Elems[1].Str != nodes[j].id || m.Elems[5].Str != nodes[j].addr || m.Elems[7].Int != 1 {
				t.Errorf("%s RAFT NODES[%d] = %s", an.id, j, m)
			}
		}
	}

	// INFO replication: with two shards and Balance off, n1 leads both.
	for j, an := range nodes {
		c := dial(t, an.addr)
		info := infoFields(t, c, "INFO", "replication")
		leadsAll := an.node.Shard(0).IsLeader() && an.node.Shard(1).IsLeader()
		if leadsAll {
			if info["role"] != "master" || info["connected_slaves"] != "2" || !strings.Contains(info["slave0"], ",state=online,") {
				t.Errorf("%s INFO replication %v", an.id, info)
			}
		} else {
			h, p, _ := net.SplitHostPort(nodes[l0].addr)
			if j != l0 && (info["role"] != "slave" || info["master_host"] != h || info["master_port"] != p || info["master_link_status"] != "up") {
				t.Errorf("%s INFO replication %v", an.id, info)
			}
		}
		if info["shards"] != "2" || !strings.Contains(info["shard1"], ",voters=3") {
			t.Errorf("%s INFO replication shard lines %v", an.id, info)
		}
		// ROLE agrees with INFO replication.
		role, err := c.Do("ROLE")
		if err != nil || len(role.Elems) < 3 {
			t.Fatalf("%s ROLE = %s, %v", an.id, role, err)
		}
		if leadsAll {
			if role.Elems[0].Str != "master" || role.Elems[1].Kind != ':' || len(role.Elems[2].Elems) != 2 ||
				len(role.Elems[2].Elems[0].Elems) != 3 {
				t.Errorf("%s ROLE = %s", an.id, role)
			}
		} else if j != l0 {
			h, p, _ := net.SplitHostPort(nodes[l0].addr)
			if role.Elems[0].Str != "slave" || role.Elems[1].Str != h || strconv.FormatInt(role.Elems[2].Int, 10) != p ||
				len(role.Elems) != 5 || role.Elems[3].Str != "connected" {
				t.Errorf("%s ROLE = %s", an.id, role)
			}
		}
	}

	// WAIT: both followers apply the write.
	key := keyInShard(0, 2)
	runSteps(t, c0, []step{
		{[]string{"XADD", key, "1-1", "f", "v"}, `"1-1"`},
		{[]string{"WAIT", "2", "5000"}, "(integer) 2"},
	})

	// RAFT TRANSFER shard 0 to another node, sent to a third one.
	to := nodes[(l0+1)%3]
	via := dial(t, nodes[(l0+2)%3].addr)
	if v, err := via.Do("RAFT", "TRANSFER", "0", to.id); err != nil || v.String() != "+OK" {
		t.Fatalf("RAFT TRANSFER = %s, %v", v, err)
	}
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if id, _ := nodes[l0].node.Leader(0); id != to.id {
			return fmt.Errorf("shard 0 leader %q, want %s", id, to.id)
		}
		return nil
	})
	runSteps(t, via, []step{
		{[]string{"RAFT", "TRANSFER", "7"}, "(error) ERR shard 7 does not exist (shards 0-1)"},
		{[]string{"RAFT", "TRANSFER", "x"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"RAFT", "ADD", "bad id", "127.0.0.1:1"}, "(error) ERR invalid node id 'bad id'"},
		{[]string{"RAFT", "ADD", "n9", "nowhere"}, "(error) ERR invalid raft address 'nowhere': want host:port"},
	})

	// RAFT REMOVE the node that leads nothing now (or n3), through n1.
	victim := nodes[2]
	if v, err := dial(t, nodes[0].addr).Do("RAFT", "REMOVE", victim.id); err != nil || v.String() != "+OK" {
		t.Fatalf("RAFT REMOVE = %s, %v", v, err)
	}
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		for i := range 2 {
			if v := nodes[0].node.Shard(i).Info().Voters; v != 2 {
				return fmt.Errorf("shard %d has %d voters", i, v)
			}
		}
		return nil
	})
}

// keyInShard returns a key whose slot belongs to shard i of n.
func keyInShard(i, n int) string {
	for k := 0; ; k++ {
		key := "k" + strconv.Itoa(k)
		if replication.ShardOfSlot(replication.KeySlot(key), n) == i {
			return key
		}
	}
}
