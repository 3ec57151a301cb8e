package server

// TLS on the client port (tls-port): client certificates required,
// optional or not asked for, certificates reloaded by CONFIG SET,
// handshakes that never hold up the accept loop, keepalive, idle timeout,
// maxclients and the graceful drain on TLS connections.

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/config"
	"streamd/internal/testutil"
	"streamd/internal/tlsconf"
	"streamd/internal/tlsconf/tlstest"
	"streamd/replication"
)

// tlsServer is an in-process server with a plain and a TLS listener.
type tlsServer struct {
	srv            *Server
	plain, tlsAddr string
	pki            *tlstest.PKI
	server, client tlstest.Cert
}

// startTLSServer serves an in-memory shard on a plain and a TLS loopback
// port, with a fresh CA, a server certificate and a client certificate;
// mod may change the configuration (tls-auth-clients...) before the TLS
// certificates are loaded.
func startTLSServer(t *testing.T, mod func(*config.Config)) *tlsServer {
	t.Helper()
	ts := &tlsServer{pki: tlstest.New(t, "streamd test")}
	ts.server = ts.pki.Issue("server", false, x509.ExtKeyUsageServerAuth)
	ts.client = ts.pki.Issue("client", true, x509.ExtKeyUsageClientAuth)
	cfg := config.Default()
	cfg.Dir = t.TempDir()
	cfg.TLSCertFile, cfg.TLSKeyFile, cfg.TLSCACertFile = ts.server.CertFile, ts.server.KeyFile, ts.pki.CAFile
	if mod != nil {
		mod(&cfg)
	}
	l, err := tlsconf.NewLoader(cfg.TLSFiles())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLSPort = tln.Addr().(*net.TCPAddr).Port
	shard := replication.NewShard()
	ts.srv = New(cfg, shard, pquietLog())
	ts.srv.SetTLS(l)
	ts.srv.SetListen(func(port int) ([]net.Listener, error) {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return nil, err
		}
		return []net.Listener{ln}, nil
	})
	ts.plain, ts.tlsAddr = ln.Addr().String(), tln.Addr().String()
	done := make(chan error, 2)
	go func() { done <- ts.srv.Serve(ln) }()
	go func() { done <- ts.srv.ServeTLS(tln) }()
	t.Cleanup(func() {
		ts.srv.Close()
		for range 2 {
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Serve did not return after Close")
			}
		}
		shard.Close(false)
	})
	return ts
}

// dialTLS opens a RESP connection to the TLS port with cfg; the handshake
// is done (and its error returned) before it returns.
func dialTLS(addr string, cfg *tls.Config) (*respConn, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	tc, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	return &respConn{nc: tc, r: bufio.NewReader(tc)}, nil
}

// mustDialTLS is dialTLS failing the test; the connection closes with it.
func (ts *tlsServer) mustDialTLS(t *testing.T, cert *tlstest.Cert) *respConn {
	t.Helper()
	c, err := dialTLS(ts.tlsAddr, ts.pki.ClientConfig(cert))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// goRedisTLS is a go-redis client of the TLS port with cfg.
func goRedisTLS(t *testing.T, addr string, cfg *tls.Config) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: cfg, DisableIdentity: true,
		MaxRetries: -1, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTLSAuthClientsGoRedis: go-redis with a tls.Config against each
// tls-auth-clients policy: yes refuses a client without a certificate and
// one whose certificate another CA signed; optional accepts none and
// verifies one given; no asks for none. Stream commands work over TLS.
func TestTLSAuthClientsGoRedis(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		auth                string
		noCert, foreignCert bool // accepted?
	}{
		{"yes", false, false},
		{"optional", true, false},
		{"no", true, true},
	} {
		t.Run(tc.auth, func(t *testing.T) {
			ts := startTLSServer(t, func(c *config.Config) { c.TLSAuthClients = tc.auth })
			other := tlstest.New(t, "intruder")
			foreign := other.Issue("intruder", true, x509.ExtKeyUsageClientAuth)
			good := goRedisTLS(t, ts.tlsAddr, ts.pki.ClientConfig(&ts.client))
			id, err := good.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []string{"f", "v"}}).Result()
			must(t, "XADD over TLS", err)
			wantEq(t, "XADD id", id, "1-1")
			got, err := good.XRange(ctx, "s", "-", "+").Result()
			must(t, "XRANGE over TLS", err)
			wantEq(t, "XRANGE", msgs(got), []string{"1-1:f=v"})

			err = goRedisTLS(t, ts.tlsAddr, ts.pki.ClientConfig(nil)).Ping(ctx).Err()
			if (err == nil) != tc.noCert {
				t.Errorf("no client certificate: %v (accepted should be %v)", err, tc.noCert)
			}
			err = goRedisTLS(t, ts.tlsAddr, ts.pki.ClientConfig(&foreign)).Ping(ctx).Err()
			if (err == nil) != tc.foreignCert {
				t.Errorf("certificate of another CA: %v (accepted should be %v)", err, tc.foreignCert)
			}
			// The plain port is unaffected, and the refusals were counted.
			must(t, "plain PING", newGoRedis(t, ts.plain, 3).Ping(ctx).Err())
			refused := 0
			if !tc.noCert {
				refused++
			}
			if !tc.foreignCert {
				refused++
			}
			testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
				if got := ts.srv.stats.TLSHandshakeFailures.Load(); got != int64(refused) {
					return fmt.Errorf("TLS handshake failures = %d, want %d", got, refused)
				}
				return nil
			})
		})
	}
}

// TestTLSCertReload: CONFIG SET tls-cert-file/tls-key-file swaps the
// certificate for new connections without a restart (compared by serial);
// an open connection goes on; a bad file fails with Redis's text and
// keeps the certificate in use.
func TestTLSCertReload(t *testing.T) {
	ts := startTLSServer(t, nil)
	second := ts.pki.Issue("server2", false, x509.ExtKeyUsageServerAuth)
	serial := func() int64 {
		t.Helper()
		c := ts.mustDialTLS(t, &ts.client)
		defer c.Close()
		pexpect(t, c, "+PONG", "PING")
		return c.nc.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serial(); got != ts.server.Serial {
		t.Fatalf("serial %d, want %d", got, ts.server.Serial)
	}
	admin := ts.mustDialTLS(t, &ts.client)
	pexpect(t, admin, "+OK", "CONFIG", "SET", "tls-cert-file", second.CertFile, "tls-key-file", second.KeyFile)
	if got := serial(); got != second.Serial {
		t.Fatalf("after CONFIG SET: serial %d, want %d", got, second.Serial)
	}
	pexpect(t, admin, "+PONG", "PING") // the connection made before goes on
	pexpect(t, admin, `["tls-cert-file", "`+second.CertFile+`"]`, "CONFIG", "GET", "tls-cert-file")

	const unable = "(error) ERR CONFIG SET failed (possibly related to argument '%s') - Unable to update TLS configuration. Check server logs."
	for _, bad := range [][]string{
		{"tls-cert-file", ts.server.KeyFile},       // no certificate in it
		{"tls-cert-file", ts.pki.Dir + "/missing"}, // no such file
		{"tls-key-file", ts.client.KeyFile},        // not the certificate's key
		{"tls-protocols", "SSLv3"},
		{"tls-ca-cert-file", ts.pki.Dir + "/missing"},
	} {
		pexpect(t, admin, fmt.Sprintf(unable, bad[0]), "CONFIG", "SET", bad[0], bad[1])
	}
	pexpect(t, admin, "(error) ERR CONFIG SET failed (possibly related to argument 'tls-auth-clients') - argument(s) must be one of the following: no, yes, optional",
		"CONFIG", "SET", "tls-auth-clients", "maybe")
	if got := serial(); got != second.Serial {
		t.Fatalf("after failed CONFIG SETs: serial %d, want %d", got, second.Serial)
	}
	pexpect(t, admin, `["tls-cert-file", "`+second.CertFile+`"]`, "CONFIG", "GET", "tls-cert-file")
	pexpect(t, admin, `["tls-protocols", ""]`, "CONFIG", "GET", "tls-protocols")

	// tls-auth-clients and tls-protocols apply to the next connection.
	pexpect(t, admin, "+OK", "CONFIG", "SET", "tls-auth-clients", "no")
	noCert, err := dialTLS(ts.tlsAddr, ts.pki.ClientConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	pexpect(t, noCert, "+PONG", "PING")
	noCert.Close()
	pexpect(t, admin, "+OK", "CONFIG", "SET", "tls-protocols", "TLSv1.2")
	cfg := ts.pki.ClientConfig(nil)
	cfg.MinVersion = tls.VersionTLS13
	if c, err := dialTLS(ts.tlsAddr, cfg); err == nil {
		if _, err := c.Do("PING"); err == nil {
			t.Fatal("a TLS 1.3-only client was served with tls-protocols TLSv1.2")
		}
		c.Close()
	}
}

// TestTLSHandshakeNeverBlocksAccept: a peer that connects to the TLS port
// and sends nothing, and one that speaks plain RESP to it, hold up
// nobody: a TLS client is served meanwhile; the silent one is dropped
// after the handshake deadline, the plain one at once, and both are
// counted as failed handshakes.
func TestTLSHandshakeNeverBlocksAccept(t *testing.T) {
	defer func(d time.Duration) { tlsHandshakeTimeout = d }(tlsHandshakeTimeout)
	tlsHandshakeTimeout = 500 * time.Millisecond
	ts := startTLSServer(t, nil)
	silent, err := net.Dial("tcp", ts.tlsAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	plain, err := dialRESP(ts.tlsAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if v, err := plain.Do("PING"); err == nil {
		t.Fatalf("plain RESP on the TLS port answered %s", v)
	}
	c := ts.mustDialTLS(t, &ts.client)
	pexpect(t, c, "+PONG", "PING")
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if got := ts.srv.stats.TLSHandshakeFailures.Load(); got < 1 {
			return fmt.Errorf("handshake failures %d, want the plain client's", got)
		}
		return nil
	})
	if got := ts.srv.stats.TLSConnectionsReceived.Load(); got != 3 {
		t.Fatalf("TLS connections received %d, want 3", got)
	}
	// The silent peer is closed at the handshake deadline.
	silent.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("silent peer: %v, want the server to close it", err)
	}
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if got := ts.srv.stats.TLSHandshakeFailures.Load(); got != 2 {
			return fmt.Errorf("handshake failures %d, want 2", got)
		}
		return nil
	})
	pexpect(t, c, "+PONG", "PING")
}

// TestTLSClientListAndInfo: CLIENT LIST shows a TLS client's local
// address (the TLS port) and file descriptor; the TLS connection has TCP
// keepalive on; INFO's tcp_port is port, or tls-port when port is 0.
func TestTLSClientListAndInfo(t *testing.T) {
	ts := startTLSServer(t, nil)
	c := ts.mustDialTLS(t, &ts.client)
	line := pdo(t, c, "CLIENT", "INFO").Str
	if !strings.Contains(line, " laddr="+ts.tlsAddr+" ") || strings.Contains(line, " fd=-1 ") {
		t.Fatalf("CLIENT INFO over TLS: %s", line)
	}
	list := ts.srv.clientList()
	if len(list) != 1 {
		t.Fatalf("%d clients", len(list))
	}
	raw, ok := rawConn(list[0].nc).(*net.TCPConn)
	if !ok {
		t.Fatalf("client conn %T", list[0].nc)
	}
	sc, err := raw.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	keepalive := 0
	sc.Control(func(fd uintptr) {
		keepalive, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
	})
	if err != nil || keepalive == 0 {
		t.Fatalf("SO_KEEPALIVE = %d, %v", keepalive, err)
	}
	// startTLSServer keeps the default port 6379 in its configuration
	// (it listens on free ports): INFO reports the configured one.
	if info := pdo(t, c, "INFO", "server").Str; !strings.Contains(info, "\r\ntcp_port:6379\r\n") {
		t.Fatalf("INFO server: %q", info)
	}
	if got := tcpPort(config.Config{Port: 0, TLSPort: 7443}); got != 7443 {
		t.Fatalf("tcp_port with port 0 = %d, want the tls-port", got)
	}
}

// TestTLSIdleTimeout: "timeout" closes an idle TLS client as a plain one.
func TestTLSIdleTimeout(t *testing.T) {
	ts := startTLSServer(t, func(c *config.Config) { c.Timeout = 1 })
	c := ts.mustDialTLS(t, &ts.client)
	pexpect(t, c, "+PONG", "PING")
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := len(ts.srv.clientList()); n != 0 {
			return fmt.Errorf("%d clients", n)
		}
		return nil
	})
	if _, err := c.Do("PING"); err == nil {
		t.Fatal("idle TLS client still served after the timeout")
	}
}

// TestTLSMaxClients: a TLS client over maxclients reads Redis's error
// (after its handshake) and is closed.
func TestTLSMaxClients(t *testing.T) {
	ts := startTLSServer(t, func(c *config.Config) { c.MaxClients = 1 })
	c := ts.mustDialTLS(t, &ts.client)
	pexpect(t, c, "+PONG", "PING")
	over := ts.mustDialTLS(t, &ts.client)
	v, err := over.Receive(10 * time.Second)
	if err != nil || v.String() != "(error) ERR max number of clients reached" {
		t.Fatalf("over maxclients: %s, %v", v, err)
	}
	if _, err := over.Receive(10 * time.Second); !errors.Is(err, io.EOF) {
		t.Fatalf("after the error: %v, want the connection closed", err)
	}
}

// TestTLSGracefulClose: Close (SIGTERM, SHUTDOWN) drains TLS connections
// as plain ones: the server stops reading, answers what it already read,
// then ends each connection with a TLS close_notify (the client sees a
// clean end of stream, not a reset or a truncated record).
func TestTLSGracefulClose(t *testing.T) {
	ts := startTLSServer(t, nil)
	c := ts.mustDialTLS(t, &ts.client)
	const n = 300
	pipelineXAdds(t, c, n)
	acked := 1
	closed := make(chan struct{})
	go func() { ts.srv.Close(); close(closed) }()
	var err error
	for {
		var v Value
		if v, err = c.Receive(10 * time.Second); err != nil {
			break
		}
		if v.Kind != '$' {
			t.Fatalf("reply %d: %s", acked, v)
		}
		acked++
	}
	<-closed
	if !errors.Is(err, io.EOF) {
		t.Fatalf("after %d replies: %v, want a clean end of stream (close_notify)", acked, err)
	}
	t.Logf("%d of %d answered before the close", acked, n)
}

// TestTLSPortConfigSet: CONFIG SET tls-port moves the TLS port at run time
// (connections on the old one go on), refuses a port it cannot bind with
// Redis's text, and 0 closes it; on a server started without TLS it loads
// the certificates set before and opens the port.
func TestTLSPortConfigSet(t *testing.T) {
	ts := startTLSServer(t, nil)
	old := ts.mustDialTLS(t, &ts.client)
	port := testutil.FreePort(t)
	pexpect(t, old, "+OK", "CONFIG", "SET", "tls-port", strconv.Itoa(port))
	newAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	c, err := dialTLS(newAddr, ts.pki.ClientConfig(&ts.client))
	if err != nil {
		t.Fatal(err)
	}
	pexpect(t, c, "+PONG", "PING")
	c.Close()
	if _, err := net.Dial("tcp", ts.tlsAddr); err == nil {
		t.Fatal("the old TLS port still accepts")
	}
	pexpect(t, old, "+PONG", "PING")
	pexpect(t, old, `["tls-port", "`+strconv.Itoa(port)+`"]`, "CONFIG", "GET", "tls-port")
	_, plainPort, _ := net.SplitHostPort(ts.plain)
	pexpect(t, old, "(error) ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to listen on this port. Check server logs.",
		"CONFIG", "SET", "tls-port", plainPort)
	pexpect(t, old, `["tls-port", "`+strconv.Itoa(port)+`"]`, "CONFIG", "GET", "tls-port")
	pexpect(t, old, "+OK", "CONFIG", "SET", "tls-port", "0")
	if _, err := net.Dial("tcp", newAddr); err == nil {
		t.Fatal("tls-port 0 left the TLS port open")
	}

	// A server started without TLS.
	srv, addr := startTestServer(t, nil)
	srv.SetListen(func(port int) ([]net.Listener, error) {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		return []net.Listener{ln}, err
	})
	admin := dial(t, addr)
	port = testutil.FreePort(t)
	pexpect(t, admin, "+OK", "CONFIG", "SET", "tls-cert-file", ts.server.CertFile, "tls-key-file", ts.server.KeyFile)
	pexpect(t, admin, "(error) ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to update TLS configuration. Check server logs.",
		"CONFIG", "SET", "tls-port", strconv.Itoa(port)) // tls-auth-clients yes and no CA
	pexpect(t, admin, "+OK", "CONFIG", "SET", "tls-ca-cert-file", ts.pki.CAFile, "tls-port", strconv.Itoa(port))
	c, err = dialTLS(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), ts.pki.ClientConfig(&ts.client))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pexpect(t, c, "+PONG", "PING")
}
