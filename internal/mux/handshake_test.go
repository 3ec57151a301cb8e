package mux

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/internal/tlsconf"
	"streamd/internal/tlsconf/tlstest"
)

// logBuf collects a mux's log lines.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testMux is a serving mux whose KindRPC handler echoes one line and
// counts the connections it was handed.
type testMux struct {
	m       *Mux
	addr    string
	log     *logBuf
	handled atomic.Int32
}

// startMux serves a mux with auth on 127.0.0.1 until the test ends.
func startMux(t *testing.T, auth Auth) *testMux {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tm := &testMux{addr: ln.Addr().String(), log: &logBuf{}}
	tm.m = New(ln, tm.addr, 1, slog.New(slog.NewTextHandler(tm.log, &slog.HandlerOptions{Level: slog.LevelDebug})), auth)
	tm.m.Handle(KindRPC, func(c net.Conn, shard int) {
		tm.handled.Add(1)
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil {
			fmt.Fprintf(c, "echo %d %s", shard, line)
		}
	})
	tm.m.Serve()
	t.Cleanup(func() { tm.m.Close() })
	return tm
}

// dialer is a mux that only dials (its listener is never served).
func dialer(t *testing.T, auth Auth) *Mux {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := New(ln, ln.Addr().String(), 1, slog.New(slog.NewTextHandler(io.Discard, nil)), auth)
	t.Cleanup(func() { m.Close() })
	return m
}

// roundTrip sends a line on an RPC connection and expects the echo.
func roundTrip(t *testing.T, c net.Conn, shard int) {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "hi\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if want := fmt.Sprintf("echo %d hi\n", shard); err != nil || line != want {
		t.Fatalf("round trip: %q, %v; want %q", line, err, want)
	}
}

// closedByPeer reads c until the acceptor closes it (EOF or reset), failing
// the test if it answers with data or stays open past 5s.
func closedByPeer(t *testing.T, what string, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 256))
	var ne net.Error
	if n > 0 || err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: read %d bytes, %v; want the connection closed", what, n, err)
	}
}

// waitPending waits until n accepted connections are in their handshake.
func (tm *testMux) waitPending(t *testing.T, n int32) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if got := tm.m.pending.Load(); got != n {
			return fmt.Errorf("%d pending, want %d", got, n)
		}
		return nil
	})
}

// waitLog waits for text in the mux's log.
func waitLog(t *testing.T, tm *testMux, text string) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if !strings.Contains(tm.log.String(), text) {
			return fmt.Errorf("log lacks %q:\n%s", text, tm.log.String())
		}
		return nil
	})
}

// TestHandshakeSecret: the right cluster-secret connects (any shard), a
// wrong one, none, or requirepass instead is refused on both sides before
// any handler runs, with the reason logged.
func TestHandshakeSecret(t *testing.T) {
	logEveryRefusal(t)
	tm := startMux(t, Auth{Secret: "s3cret", MaxPending: 8})
	good := dialer(t, Auth{Secret: "s3cret"})
	for _, shard := range []int{0, 300, MaxShard - 1} {
		c, err := good.Dial(tm.addr, KindRPC, shard, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, c, shard)
		c.Close()
	}
	if _, err := good.Dial(tm.addr, KindRPC, MaxShard, time.Second); err == nil {
		t.Fatal("dial for an out-of-range shard")
	}

	_, err := dialer(t, Auth{Secret: "wrong"}).Dial(tm.addr, KindRPC, 0, time.Second)
	if !errors.Is(err, errBadProof) {
		t.Fatalf("wrong secret: %v", err)
	}
	waitLog(t, tm, "the peer did not prove it holds the cluster key")

	for _, tc := range []struct {
		auth Auth
		peer string
	}{{Auth{}, "none"}, {Auth{Password: "s3cret"}, "requirepass"}} {
		_, err = dialer(t, tc.auth).Dial(tm.addr, KindRPC, 0, time.Second)
		var mm *ModeMismatchError
		if !errors.As(err, &mm) || mm.Peer != ModeSecret || !strings.Contains(err.Error(), "the peer's mode differs (it uses cluster-secret, this node "+tc.peer+")") {
			t.Fatalf("dialer with mode %s: %v", tc.peer, err)
		}
		waitLog(t, tm, "peer_mode="+tc.peer)
	}
	if n := tm.handled.Load(); n != 3 {
		t.Fatalf("handler ran %d times, want 3 (the good dials only)", n)
	}
}

// TestHandshakeForgedProof: a client that knows the protocol but not the
// key sends a well-formed hello and a made-up proof: closed, logged, no
// handler.
func TestHandshakeForgedProof(t *testing.T) {
	tm := startMux(t, Auth{Password: "pw"})
	c, err := net.Dial("tcp", tm.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hello := append([]byte(Magic), Version, byte(ModePassword))
	hello = append(hello, nonce()...)
	c.Write(hello)
	reply := make([]byte, replyHead+macLen)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, reply); err != nil || reply[0] != statusOK {
		t.Fatalf("reply %x, %v", reply, err)
	}
	finish := append([]byte{byte(KindRPC), 0, 0, 0, 0}, nonce()...)
	c.Write(append(finish, "hi\n"...))
	closedByPeer(t, "forged proof", c)
	waitLog(t, tm, "wrong proof")
	if tm.handled.Load() != 0 {
		t.Fatal("a forged proof reached the handler")
	}
}

// TestHandshakeReplay records a good session's bytes from the dialer and
// replays them: the acceptor's fresh nonce makes the recorded proof wrong.
func TestHandshakeReplay(t *testing.T) {
	tm := startMux(t, Auth{Secret: "k"})
	// A recording proxy between a member and the acceptor.
	pln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pln.Close()
	var rec logBuf
	go func() {
		in, err := pln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", tm.addr)
		if err != nil {
			in.Close()
			return
		}
		go func() { io.Copy(in, out); in.Close() }()
		io.Copy(io.MultiWriter(out, &rec), in)
		out.Close()
	}()
	c, err := dialer(t, Auth{Secret: "k"}).Dial(pln.Addr().String(), KindRPC, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c, 0)
	c.Close()
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := len(rec.String()); n < helloLen+finishLen+3 {
			return fmt.Errorf("recorded %d bytes", n)
		}
		return nil
	})
	r, err := net.Dial("tcp", tm.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Write([]byte(rec.String()))
	r.SetReadDeadline(time.Now().Add(5 * time.Second))
	// The acceptor answers the replayed hello with a fresh challenge, then
	// closes on the stale proof.
	reply := make([]byte, replyHead+macLen)
	if _, err := io.ReadFull(r, reply); err != nil {
		t.Fatal(err)
	}
	closedByPeer(t, "replayed session", r)
	waitLog(t, tm, "wrong proof")
	if n := tm.handled.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want 1", n)
	}
}

// TestHandshakeFakeAcceptor: a node impersonating a member (it does not
// hold the key) cannot produce the acceptor's proof, and the dialer tells
// it nothing more: no kind, no shard, no proof of its own.
func TestHandshakeFakeAcceptor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		hello := make([]byte, helloLen)
		io.ReadFull(c, hello)
		reply := append([]byte{statusOK, hello[len(Magic)+1]}, nonce()...)
		c.Write(append(reply, nonce()...))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		rest, _ := io.ReadAll(c)
		got <- rest
	}()
	_, err = dialer(t, Auth{Secret: "k"}).Dial(ln.Addr().String(), KindRPC, 0, time.Second)
	if !errors.Is(err, errBadProof) {
		t.Fatalf("dial to a fake node: %v", err)
	}
	if rest := <-got; len(rest) != 0 {
		t.Fatalf("the dialer sent the fake node %d more bytes", len(rest))
	}
}

// TestHandshakeDeadlineAndCap: a silent or half-sent handshake is cut at
// the deadline; beyond MaxPending handshakes a new connection is closed at
// once; once they are gone a member connects again.
func TestHandshakeDeadlineAndCap(t *testing.T) {
	const max = 4
	tm := startMux(t, Auth{Secret: "k", HandshakeTimeout: 300 * time.Millisecond, MaxPending: max})
	half, err := net.Dial("tcp", tm.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer half.Close()
	half.Write([]byte(Magic + "\x10"))
	start := time.Now()
	closedByPeer(t, "half a hello", half)
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("half a hello held for %v", d)
	}
	waitLog(t, tm, "raft port: handshake failed")

	// Now a longer deadline, and max silent connections fill the cap.
	tm = startMux(t, Auth{Secret: "k", HandshakeTimeout: time.Minute, MaxPending: max})
	var silent []net.Conn
	for range max {
		c, err := net.Dial("tcp", tm.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent = append(silent, c)
	}
	tm.waitPending(t, max)
	extra, err := net.Dial("tcp", tm.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	closedByPeer(t, "connection over the cap", extra)
	waitLog(t, tm, "too many connections in their handshake")
	for _, c := range silent {
		c.Close()
	}
	tm.waitPending(t, 0)
	c, err := dialer(t, Auth{Secret: "k"}).Dial(tm.addr, KindRPC, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrip(t, c, 1)
	// Close cuts a connection still in its handshake.
	pend, err := net.Dial("tcp", tm.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer pend.Close()
	tm.waitPending(t, 1)
	tm.m.Close()
	closedByPeer(t, "pending at Close", pend)
}

// TestHandshakeOldPeer: a streamd from before the handshake (Magic, kind,
// shard) is refused with a line saying so.
func TestHandshakeOldPeer(t *testing.T) {
	tm := startMux(t, Auth{})
	c, err := net.Dial("tcp", tm.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(Magic + "\x03\x00" + strings.Repeat("x", helloLen)))
	closedByPeer(t, "old peer", c)
	waitLog(t, tm, "older streamd")
	// No credentials on either side still runs the handshake, and works.
	rc, err := dialer(t, Auth{}).Dial(tm.addr, KindRPC, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	roundTrip(t, rc, 0)
}

// clusterAuth is tls-cluster's pair of configurations, as a node builds
// them (tlsconf), for a fresh certificate the CA p signs.
func clusterAuth(t testing.TB, p *tlstest.PKI) Auth {
	t.Helper()
	c := p.Issue("node", false, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	l, err := tlsconf.NewLoader(tlsconf.Files{CertFile: c.CertFile, KeyFile: c.KeyFile, CAFile: p.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	return Auth{ServerTLS: l.ClusterServerConfig(), ClientTLS: l.ClusterClientConfig()}
}

// TestHandshakeTLS: tls-cluster alone and with a secret; a certificate from
// another CA is refused during the TLS handshake (either way round), a
// node without TLS is told the modes differ.
func TestHandshakeTLS(t *testing.T) {
	logEveryRefusal(t)
	ca, other := tlstest.New(t, "cluster"), tlstest.New(t, "other")
	tm := startMux(t, clusterAuth(t, ca))
	c, err := dialer(t, clusterAuth(t, ca)).Dial(tm.addr, KindRPC, 2, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(interface{ ConnectionState() tls.ConnectionState }); !ok {
		if bc, ok := c.(*bufferedConn); !ok || bc.Conn.(*tls.Conn) == nil {
			t.Fatalf("dialed connection %T is not TLS", c)
		}
	}
	roundTrip(t, c, 2)
	c.Close()

	// A dialer whose certificate another CA signed: refused by the
	// acceptor (TLS 1.3 reports it on the dialer's first read).
	_, err = dialer(t, clusterAuth(t, other)).Dial(tm.addr, KindRPC, 0, time.Second)
	if err == nil {
		t.Fatal("a certificate from another CA was accepted")
	}
	waitLog(t, tm, "tls-cluster handshake failed")
	// An acceptor whose certificate another CA signed: refused by the
	// dialer.
	tmOther := startMux(t, clusterAuth(t, other))
	if _, err := dialer(t, clusterAuth(t, ca)).Dial(tmOther.addr, KindRPC, 0, time.Second); err == nil || !strings.Contains(err.Error(), "tls-cluster handshake") {
		t.Fatalf("dial to a node of another CA: %v", err)
	}
	// Plain dialer to a TLS acceptor and the other way round.
	if _, err := dialer(t, Auth{}).Dial(tm.addr, KindRPC, 0, time.Second); err == nil {
		t.Fatal("a dialer without TLS was accepted")
	}
	waitLog(t, tm, "it does not use tls-cluster, this node does")
	plain := startMux(t, Auth{})
	if _, err := dialer(t, clusterAuth(t, ca)).Dial(plain.addr, KindRPC, 0, time.Second); err == nil {
		t.Fatal("a TLS dialer was accepted by a node without TLS")
	}
	waitLog(t, plain, "it uses tls-cluster, this node does not")

	// TLS and a secret: both apply.
	both := clusterAuth(t, ca)
	both.Secret = "k"
	tb := startMux(t, both)
	c, err = dialer(t, both).Dial(tb.addr, KindRPC, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c, 0)
	c.Close()
	wrong := clusterAuth(t, ca)
	wrong.Secret = "x"
	if _, err := dialer(t, wrong).Dial(tb.addr, KindRPC, 0, time.Second); !errors.Is(err, errBadProof) {
		t.Fatalf("TLS with a wrong secret: %v", err)
	}
	var mm *ModeMismatchError
	if _, err := dialer(t, clusterAuth(t, ca)).Dial(tb.addr, KindRPC, 0, time.Second); !errors.As(err, &mm) ||
		mm.Peer.String() != "tls-cluster+cluster-secret" || mm.Mine.String() != "tls-cluster" {
		t.Fatalf("TLS without the secret: %v", err)
	}
	if n := tm.handled.Load() + tb.handled.Load() + plain.handled.Load() + tmOther.handled.Load(); n != 2 {
		t.Fatalf("handlers ran %d times, want 2", n)
	}
}

// logEveryRefusal turns the rate limit off until the test's muxes (started
// after it, so closed before its cleanup runs) are closed.
func logEveryRefusal(t *testing.T) {
	old := rateLogEvery
	rateLogEvery = 0
	t.Cleanup(func() { rateLogEvery = old })
}

// TestRateLog: one line per interval, the rest counted.
func TestRateLog(t *testing.T) {
	var b logBuf
	log := slog.New(slog.NewTextHandler(&b, nil))
	var r rateLog
	for range 5 {
		r.warn(log, "x", "remote", "a")
	}
	if n := strings.Count(b.String(), "msg=x"); n != 1 {
		t.Fatalf("%d lines:\n%s", n, b.String())
	}
	r.warn(log, "y")
	r.msgs["x"].last = time.Now().Add(-2 * rateLogEvery)
	r.warn(log, "x")
	if !strings.Contains(b.String(), "suppressed=4") || !strings.Contains(b.String(), "msg=y") {
		t.Fatalf("no suppressed count:\n%s", b.String())
	}
}

// TestHandshakeUnknownKindOrShard: a member naming a kind nobody handles
// or a shard the node does not have is closed after the handshake.
func TestHandshakeUnknownKindOrShard(t *testing.T) {
	logEveryRefusal(t)
	tm := startMux(t, Auth{Secret: "k"})
	d := dialer(t, Auth{Secret: "k"})
	for what, kind := range map[string]Kind{"unknown kind": 99, "unhandled RESP": KindRESP} {
		c, err := d.Dial(tm.addr, kind, 0, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		closedByPeer(t, what, c)
	}
	waitLog(t, tm, "unknown connection kind")
	c, err := d.Dial(tm.addr, KindRaft, 5, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	closedByPeer(t, "unknown shard", c)
	waitLog(t, tm, "connection for an unknown shard")
}

// BenchmarkHandshake is one Dial (connect and handshake) to a local mux
// with a secret, and with tls-cluster.
func BenchmarkHandshake(b *testing.B) {
	for name, auth := range map[string]Auth{"secret": {Secret: "k"}, "tls": clusterAuth(b, tlstest.New(b, "bench"))} {
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			m := New(ln, ln.Addr().String(), 1, slog.New(slog.NewTextHandler(io.Discard, nil)), auth)
			m.Handle(KindRPC, func(c net.Conn, _ int) { c.Close() })
			m.Serve()
			defer m.Close()
			d := New(ln, "", 1, slog.New(slog.NewTextHandler(io.Discard, nil)), auth)
			for b.Loop() {
				c, err := d.Dial(ln.Addr().String(), KindRPC, 0, time.Second)
				if err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}
