package main

// TLS on the real binary: --port 0 with a tls-port serves TLS only, as
// Redis; SIGTERM and SHUTDOWN drain TLS connections and exit 0; a bad
// certificate stops the start-up with what is wrong.

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
	"streamd/internal/tlsconf/tlstest"
)

// tlsArgs are the flags of a TLS-only server on tlsPort with p's
// certificates.
func tlsArgs(p *tlstest.PKI, server tlstest.Cert, tlsPort int) []string {
	return []string{"--port", "0", "--tls-port", strconv.Itoa(tlsPort),
		"--tls-cert-file", server.CertFile, "--tls-key-file", server.KeyFile, "--tls-ca-cert-file", p.CAFile}
}

// tlsClient is a go-redis client of the TLS port presenting cert.
func tlsClient(t *testing.T, port int, p *tlstest.PKI, cert *tlstest.Cert) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		TLSConfig: p.ClientConfig(cert), DisableIdentity: true, MaxRetries: -1,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// startTLSOnly starts the binary with TLS only and waits for it to answer
// over TLS.
func startTLSOnly(t *testing.T, p *tlstest.PKI, server, client tlstest.Cert) (*proc, int) {
	t.Helper()
	tlsPort := pickPort(t)
	s := startServer(t, 0, t.TempDir(), tlsArgs(p, server, tlsPort)...)
	c := tlsClient(t, tlsPort, p, &client)
	testutil.Eventually(t, 60*time.Second, 10*time.Millisecond, func() error {
		if s.exited() {
			t.Fatalf("streamd exited: %v\n%s", s.err, s.logs())
		}
		return c.Ping(context.Background()).Err()
	})
	return s, tlsPort
}

// TestTLSOnlyAndSIGTERM: with --port 0 and a tls-port the binary listens
// on the TLS port alone (INFO's tcp_port is the TLS port); SIGTERM lets a
// TLS client's pipelined writes be answered and ends its connection with
// a clean TLS close, and the process exits 0.
func TestTLSOnlyAndSIGTERM(t *testing.T) {
	p := tlstest.New(t, "e2e")
	server := p.Issue("server", false, x509.ExtKeyUsageServerAuth)
	client := p.Issue("client", true, x509.ExtKeyUsageClientAuth)
	s, tlsPort := startTLSOnly(t, p, server, client)
	ctx := context.Background()
	c := tlsClient(t, tlsPort, p, &client)
	info, err := c.Info(ctx, "server").Result()
	if err != nil || !strings.Contains(info, "\r\ntcp_port:"+strconv.Itoa(tlsPort)+"\r\n") {
		t.Fatalf("INFO server: %q, %v", info, err)
	}
	if n := strings.Count(s.logs(), "Ready to accept connections"); n != 0 {
		t.Fatalf("a plain TCP port was opened with --port 0:\n%s", s.logs())
	}
	waitLog(t, s, "Ready to accept TLS connections", false)

	nc, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort)), p.ClientConfig(&client))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var b strings.Builder
	const n = 200
	for i := range n {
		v := strconv.Itoa(i)
		b.WriteString("*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\nn\r\n$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n")
	}
	if _, err := nc.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(nc)
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := r.ReadString('\n'); err != nil { // the first reply: writes are in flight
		t.Fatal(err)
	}
	s.terminate()
	replies := 1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("after %d replies: %v, want a clean TLS close", replies, err)
			}
			break
		}
		if line[0] == '$' {
			replies++
		}
	}
	t.Logf("%d of %d writes answered before the TLS connection closed", replies, n)
}

// TestTLSShutdownCommand: SHUTDOWN NOSAVE over TLS stops the server, which
// exits 0.
func TestTLSShutdownCommand(t *testing.T) {
	p := tlstest.New(t, "e2e")
	server := p.Issue("server", false, x509.ExtKeyUsageServerAuth)
	client := p.Issue("client", true, x509.ExtKeyUsageClientAuth)
	s, tlsPort := startTLSOnly(t, p, server, client)
	c := tlsClient(t, tlsPort, p, &client)
	if err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(context.Background(), "SHUTDOWN", "NOSAVE").Err(); err == nil {
		t.Fatal("SHUTDOWN NOSAVE answered")
	}
	if !s.waitExit(30 * time.Second) {
		t.Fatal("streamd did not exit after SHUTDOWN over TLS")
	}
	if code := s.exitCode(); code != 0 {
		t.Fatalf("exit code %d\n%s", code, s.logs())
	}
}

// TestTLSBadCertificateStops: a certificate that does not load stops the
// start-up with a message naming the file, before anything listens.
func TestTLSBadCertificateStops(t *testing.T) {
	p := tlstest.New(t, "e2e")
	server := p.Issue("server", false, x509.ExtKeyUsageServerAuth)
	other := p.Issue("other", false)
	err := run([]string{"--dir", t.TempDir(), "--metrics-addr", "", "--port", "0", "--tls-port", strconv.Itoa(pickPort(t)),
		"--tls-cert-file", server.CertFile, "--tls-key-file", other.KeyFile, "--tls-ca-cert-file", p.CAFile}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), server.CertFile) || !strings.Contains(err.Error(), "private key does not match") {
		t.Fatalf("run with a mismatched key: %v", err)
	}
	err = run([]string{"--dir", t.TempDir(), "--metrics-addr", "", "--tls-port", strconv.Itoa(pickPort(t)),
		"--tls-cert-file", server.CertFile, "--tls-key-file", server.KeyFile}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "tls-ca-cert-file or tls-ca-cert-dir") {
		t.Fatalf("run with tls-auth-clients yes and no CA: %v", err)
	}
}
