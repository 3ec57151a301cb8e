package main

// The raft port as an attacker on the network sees it (issue 11): three
// streamd processes protected by requirepass alone, by cluster-secret, and
// by tls-cluster. A client on a raft port with no or wrong credentials can
// neither run a command, nor read the password, nor change membership, nor
// use up client slots, and the cluster keeps working.

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/mux"
	"streamd/internal/testutil"
	"streamd/server/resp"
)

// attackMaxClients is the clusters' maxclients: the slot-exhaustion attack
// opens attackMaxClients+10 raft-port connections.
const attackMaxClients = 20

// authClient is a go-redis client for port that authenticates with pass.
func authClient(t *testing.T, port int, pass string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Password: pass, Protocol: 2,
		DisableIdentity: true, MaxRetries: -1, DialTimeout: 2 * time.Second, ReadTimeout: 20 * time.Second, PoolSize: 2})
	t.Cleanup(func() { c.Close() })
	return c
}

// respCmds is the RESP an attacker sends: read the password, write, lock
// the users out, stop the node.
func respCmds() []byte {
	var b []byte
	for _, cmd := range [][]string{
		{"CONFIG", "GET", "requirepass"}, {"XADD", "attack", "*", "f", "v"},
		{"CONFIG", "SET", "requirepass", "pwned"}, {"SHUTDOWN", "NOSAVE"},
	} {
		args := make([][]byte, len(cmd))
		for i, a := range cmd {
			args[i] = []byte(a)
		}
		b = resp.AppendCommand(b, args...)
	}
	return b
}

// addVoterJSON is the node RPC a member sends a shard's leader to add a
// voter (replication's rpcRequest for "add").
const addVoterJSON = `{"op":"add","shard":0,"id":"evil","addr":"127.0.0.1:1"}` + "\n"

// refused sends payload on a fresh connection to addr and requires the
// node to close it having sent at most allow bytes (a handshake's
// challenge), never a reply to what was sent.
func refused(t *testing.T, what, addr string, payload []byte, allow int) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer c.Close()
	c.Write(payload)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the node kept the connection open (read %q)", what, got)
	}
	if len(got) > allow || strings.Contains(string(got), "secret") {
		t.Fatalf("%s: the node answered %q", what, got)
	}
}

// attacker is a mux (never served) dialing with the attacker's guesses.
func attacker(t *testing.T, auth mux.Auth) *mux.Mux {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := mux.New(ln, ln.Addr().String(), 1, slog.New(slog.NewTextHandler(io.Discard, nil)), auth)
	t.Cleanup(func() { m.Close() })
	return m
}

// attackCluster runs every attack on every node's raft port, then checks
// that none had an effect and that the cluster still replicates. mode is
// the handshake mode byte the nodes expect (an attacker can learn it);
// guesses are credentials the attacker tries through a real handshake.
func attackCluster(t *testing.T, nodes []*clusterNode, pass string, mode mux.Mode, guesses map[string]mux.Auth) {
	t.Helper()
	hello := append([]byte(mux.Magic), mux.Version, byte(mode))
	hello = append(hello, make([]byte, 32)...)
	rand.Read(hello[len(hello)-32:])
	forgedProof := make([]byte, 32)
	rand.Read(forgedProof)
	challenge := 66 // status, mode, nonce, proof: all an attacker gets
	if mode&mux.ModeTLS != 0 {
		challenge = 0
	}
	for _, n := range nodes {
		raft := n.raftAddr()
		// RESP straight at the port, and the header streamd sent before
		// the handshake, with RESP and with the add-voter RPC behind it.
		refused(t, n.id+" raw RESP", raft, respCmds(), 0)
		refused(t, n.id+" old RESP header", raft, append([]byte(mux.Magic+"\x02\x00"), respCmds()...), 0)
		refused(t, n.id+" old RPC header", raft, []byte(mux.Magic+"\x03\x00"+addVoterJSON), 0)
		// A real hello, then a made-up proof with the add-voter RPC and
		// with RESP.
		rpc := append(append([]byte{byte(mux.KindRPC), 0, 0, 0, 0}, forgedProof...), addVoterJSON...)
		refused(t, n.id+" forged proof, RPC", raft, append(append([]byte{}, hello...), rpc...), challenge)
		rc := append(append([]byte{byte(mux.KindRESP), 0, 0, 0, 0}, forgedProof...), respCmds()...)
		refused(t, n.id+" forged proof, RESP", raft, append(append([]byte{}, hello...), rc...), challenge)
		// The real dialer with wrong credentials gets no connection.
		for name, auth := range guesses {
			for _, kind := range []mux.Kind{mux.KindRESP, mux.KindRPC, mux.KindRaft} {
				if c, err := attacker(t, auth).Dial(raft, kind, 0, 2*time.Second); err == nil {
					c.Close()
					t.Fatalf("%s: an attacker with %s got a connection of kind %d", n.id, name, kind)
				}
			}
		}
	}
	// Client slots: maxclients+10 silent connections on a raft port leave
	// the client port open to a real client.
	target := nodes[1]
	var flood []net.Conn
	for range attackMaxClients + 10 {
		c, err := net.DialTimeout("tcp", target.raftAddr(), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
	}
	cl := authClient(t, target.port, pass)
	if _, err := cl.XAdd(ctxT(t), &redis.XAddArgs{Stream: "during-flood", Values: []any{"f", "v"}}).Result(); err != nil {
		t.Fatalf("XADD through %s while its raft port is flooded: %v", target.id, err)
	}
	for _, c := range flood {
		c.Close()
	}

	// Nothing happened: every node runs, membership is the three, the
	// attacker's stream does not exist, the password is unchanged.
	for _, n := range nodes {
		if n.p.exited() {
			t.Fatalf("%s exited during the attacks:\n%s", n.id, n.p.logs())
		}
	}
	leader := leaderOf(t, nodes, 0)
	lc := authClient(t, leader.port, pass)
	ctx := ctxT(t)
	nodesReply := fmt.Sprint(lc.Do(ctx, "RAFT", "NODES").Val())
	if strings.Contains(nodesReply, "evil") || strings.Count(nodesReply, "raft-addr") != 3 {
		t.Fatalf("membership changed: %s", nodesReply)
	}
	if n, err := lc.XLen(ctx, "attack").Result(); err != nil || n != 0 {
		t.Fatalf("XLEN attack: %d, %v", n, err)
	}
	if v, err := lc.ConfigGet(ctx, "requirepass").Result(); err != nil || v["requirepass"] != pass {
		t.Fatalf("requirepass now %v, %v", v, err)
	}
	// The cluster still replicates: a write on the leader is read on
	// every node (a follower's read waits for its apply).
	id, err := lc.XAdd(ctx, &redis.XAddArgs{Stream: "after", Values: []any{"k", "v"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		c := authClient(t, n.port, pass)
		testutil.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
			msgs, err := c.XRange(ctx, "after", "-", "+").Result()
			if err != nil || len(msgs) != 1 || msgs[0].ID != id {
				return fmt.Errorf("%s: XRANGE after: %v, %v", n.id, msgs, err)
			}
			return nil
		})
	}
	// The refusals were logged with the attacker's address.
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if l := nodes[0].p.logs(); !strings.Contains(l, "raft port: ") || !strings.Contains(l, "remote=127.0.0.1:") {
			return errors.New("no raft port refusal in n1's log")
		}
		return nil
	})
}

// TestClusterAuthRequirepassE2E: the README's three nodes with
// --requirepass and no other flag: the raft port takes its key from the
// password; --join authenticates; RAFT ADD without AUTH gets NOAUTH.
func TestClusterAuthRequirepassE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	const pass = "secret"
	nodes := start3Nodes(t, "--requirepass", pass, "--maxclients", strconv.Itoa(attackMaxClients))
	if !strings.Contains(nodes[0].p.logs(), "auth=requirepass") {
		t.Fatalf("n1 does not say its raft port uses requirepass:\n%s", nodes[0].p.logs())
	}
	// The membership commands need AUTH on the client port, and are
	// @admin @dangerous.
	c, err := net.Dial("tcp", nodes[0].p.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("RAFT ADD evil 127.0.0.1:1\r\nRAFT REMOVE n2\r\nRAFT TRANSFER 0\r\n"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 0, 256)
	for strings.Count(string(buf), "\r\n") < 3 {
		chunk := make([]byte, 256)
		k, err := c.Read(chunk)
		if err != nil {
			t.Fatalf("RAFT without AUTH: %q, %v", buf, err)
		}
		buf = append(buf, chunk[:k]...)
	}
	if want := strings.Repeat("-NOAUTH Authentication required.\r\n", 3); string(buf) != want {
		t.Fatalf("RAFT without AUTH: %q", buf)
	}
	info := fmt.Sprint(authClient(t, nodes[0].port, pass).Do(ctxT(t), "COMMAND", "INFO", "RAFT").Val())
	for _, sub := range []string{"raft|add", "raft|remove", "raft|transfer"} {
		i := strings.Index(info, sub)
		if i < 0 || !strings.Contains(info[i:min(len(info), i+200)], "@admin @slow @dangerous") {
			t.Fatalf("COMMAND INFO RAFT: %s lacks @admin @dangerous:\n%s", sub, info)
		}
	}
	attackCluster(t, nodes, pass, mux.ModePassword, map[string]mux.Auth{
		"no credentials": {}, "a wrong password": {Password: "Secret"},
		"the password as cluster-secret": {Secret: pass},
	})
}

// TestClusterAuthSecretE2E: three nodes with --cluster-secret (one reads it
// from cluster-secret-file) and a password; a fourth node with another
// secret cannot join (the member refuses it, and it exits saying why).
func TestClusterAuthSecretE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	const pass, secret = "pw", "the cluster's secret"
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nodes := start3Nodes(t, "--requirepass", pass, "--maxclients", strconv.Itoa(attackMaxClients),
		"--cluster-secret-file", file)
	if !strings.Contains(nodes[0].p.logs(), "auth=cluster-secret") {
		t.Fatalf("n1 does not say its raft port uses cluster-secret:\n%s", nodes[0].p.logs())
	}
	attackCluster(t, nodes, pass, mux.ModeSecret, map[string]mux.Auth{
		"no credentials": {}, "a wrong secret": {Secret: "the cluster's secreT"},
		"the password": {Password: pass}, "the password as secret": {Secret: pass},
	})

	// A node with another secret asks to join: refused, it exits.
	port, raftPort := pickPort(t), pickPort(t)
	bad := &clusterNode{id: "n4", port: port, raftPort: raftPort, dir: filepath.Join(t.TempDir(), "n4")}
	bad.p = startServer(t, port, bad.dir, bad.args("--requirepass", pass, "--cluster-secret", "another",
		"--join", nodes[0].p.addr())...)
	if !bad.p.waitExit(60 * time.Second) {
		t.Fatalf("n4 with another secret still running:\n%s", bad.p.logs())
	}
	if l := bad.p.logs(); bad.p.exitCode() != 1 || !strings.Contains(l, "could not prove it holds the cluster key") {
		t.Fatalf("n4 exit %d:\n%s", bad.p.exitCode(), l)
	}
	waitVoters(t, nodes, 3)
}

// TestClusterAuthStartupRule: a cluster node on a non-loopback raft
// address without credentials refuses to start, saying what to set; on
// loopback it starts with a warning.
func TestClusterAuthStartupRule(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the binary")
	}
	ip := nonLoopbackIP(t)
	dir := t.TempDir()
	p := startServer(t, pickPort(t), filepath.Join(dir, "a"), "--node-id", "n1",
		"--raft-addr", net.JoinHostPort(ip, strconv.Itoa(pickPort(t))), "--bootstrap")
	if !p.waitExit(30 * time.Second) {
		t.Fatalf("started without credentials on %s:\n%s", ip, p.logs())
	}
	if l := p.logs(); p.exitCode() != 1 || !strings.Contains(l, "is not a loopback address") ||
		!strings.Contains(l, "set cluster-secret (or cluster-secret-file), tls-cluster yes") {
		t.Fatalf("exit %d:\n%s", p.exitCode(), l)
	}
	// With a secret it starts there.
	p = startReady(t, pickPort(t), filepath.Join(dir, "b"), "--node-id", "n1",
		"--raft-addr", net.JoinHostPort(ip, strconv.Itoa(pickPort(t))), "--bootstrap", "--cluster-secret", "x")
	p.terminate()
	// On loopback with nothing it starts, and warns.
	p = startReady(t, pickPort(t), filepath.Join(dir, "c"), "--node-id", "n1",
		"--raft-addr", "127.0.0.1:"+strconv.Itoa(pickPort(t)), "--bootstrap")
	if l := p.logs(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "raft-addr is a loopback address and the raft port has no credentials") {
		t.Fatalf("no warning on loopback without credentials:\n%s", l)
	}
	p.terminate()
}

// nonLoopbackIP returns an IPv4 address of this machine that is not
// loopback and can be bound, or skips the test.
func nonLoopbackIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skip(err)
	}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.To4() == nil || ipn.IP.IsLinkLocalUnicast() {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(ipn.IP.String(), "0"))
		if err != nil {
			continue
		}
		ln.Close()
		return ipn.IP.String()
	}
	t.Skip("no non-loopback IPv4 address (TestClusterCredentials checks the rule itself)")
	return ""
}

// TestClusterAuthTLSE2E: three nodes with tls-cluster (and a password,
// which then does not key the raft port): no TLS, a certificate from
// another CA, or TLS without a certificate gets nothing. A fourth node
// joins through a member's TLS client port (join-tls); one whose
// certificate another CA signed is refused.
func TestClusterAuthTLSE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	const pass = "pw"
	certs, other := genCerts(t, "cluster"), genCerts(t, "other")
	nodes := start3Nodes(t, append([]string{"--requirepass", pass, "--maxclients", strconv.Itoa(attackMaxClients)}, certs.flags()...)...)
	if !strings.Contains(nodes[0].p.logs(), "auth=tls-cluster") {
		t.Fatalf("n1 does not say its raft port uses tls-cluster:\n%s", nodes[0].p.logs())
	}
	ol := other.loader(t)
	attackCluster(t, nodes, pass, mux.ModeTLS, map[string]mux.Auth{
		"no credentials": {}, "the password": {Password: pass},
		"a certificate from another CA":             {ServerTLS: ol.ClusterServerConfig(), ClientTLS: ol.ClusterClientConfig()},
		"another CA's certificate and the password": {ServerTLS: ol.ClusterServerConfig(), ClientTLS: ol.ClusterClientConfig(), Password: pass},
		"TLS without a certificate":                 {ClientTLS: &tls.Config{InsecureSkipVerify: true}},
		"TLS without a certificate, with a secret":  {ClientTLS: &tls.Config{InsecureSkipVerify: true}, Secret: pass},
	})
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if l := nodes[0].p.logs(); !strings.Contains(l, "raft port: tls-cluster handshake failed") {
			return errors.New("no TLS refusal in n1's log")
		}
		return nil
	})
	// A node with the cluster's certificate joins through n1's TLS client
	// port (join-tls), opened at run time.
	tlsPort := pickPort(t)
	if err := authClient(t, nodes[0].port, pass).ConfigSet(ctxT(t), "tls-port", strconv.Itoa(tlsPort)).Err(); err != nil {
		t.Fatal(err)
	}
	n5 := &clusterNode{id: "n5", port: pickPort(t), raftPort: pickPort(t), dir: filepath.Join(t.TempDir(), "n5")}
	n5.p = startServer(t, n5.port, n5.dir, n5.args(append([]string{"--requirepass", pass,
		"--join", "127.0.0.1:" + strconv.Itoa(tlsPort), "--join-tls", "yes"}, certs.flags()...)...)...)
	n5.p.waitReady(60 * time.Second)
	waitVoters(t, append(nodes, n5), 4)

	// A node with the other CA's certificate cannot join.
	port, raftPort := pickPort(t), pickPort(t)
	bad := &clusterNode{id: "n4", port: port, raftPort: raftPort, dir: filepath.Join(t.TempDir(), "n4")}
	bad.p = startServer(t, port, bad.dir, bad.args(append([]string{"--requirepass", pass, "--join", nodes[0].p.addr()}, other.flags()...)...)...)
	if !bad.p.waitExit(60 * time.Second) {
		t.Fatalf("n4 with another CA still running:\n%s", bad.p.logs())
	}
	if l := bad.p.logs(); bad.p.exitCode() != 1 || !strings.Contains(l, "tls-cluster handshake") {
		t.Fatalf("n4 exit %d:\n%s", bad.p.exitCode(), l)
	}
	waitVoters(t, append(nodes, n5), 4)
}
