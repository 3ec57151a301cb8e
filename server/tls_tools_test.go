package server

// TLS against the tools: redis-cli --tls on streamd's TLS port, and
// redis-server (Debian's is built with TLS) for CONFIG GET tls-*'s defaults
// and CONFIG SET's error when new certificates do not load.

import (
	"crypto/x509"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/internal/tlsconf/tlstest"
)

// redisCLI runs redis-cli against addr over TLS with the CA and, when
// cert is set, a client certificate; it returns the output and the error.
func redisCLI(t *testing.T, addr string, p *tlstest.PKI, cert *tlstest.Cert, args ...string) (string, error) {
	t.Helper()
	bin := testutil.RequireTool(t, "redis-cli")
	host, port, _ := strings.Cut(addr, ":")
	full := []string{"-h", host, "-p", port, "--tls", "--cacert", p.CAFile}
	if cert != nil {
		full = append(full, "--cert", cert.CertFile, "--key", cert.KeyFile)
	}
	out, err := exec.Command(bin, append(full, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// TestTLSRedisCli: redis-cli --tls with a client certificate runs XADD
// and XRANGE on streamd's TLS port; without one (tls-auth-clients yes) it
// is refused.
func TestTLSRedisCli(t *testing.T) {
	ts := startTLSServer(t, nil)
	out, err := redisCLI(t, ts.tlsAddr, ts.pki, &ts.client, "XADD", "s", "5-1", "temp", "21.5")
	if err != nil || out != "5-1" {
		t.Fatalf("XADD: %q, %v", out, err)
	}
	out, err = redisCLI(t, ts.tlsAddr, ts.pki, &ts.client, "XRANGE", "s", "-", "+")
	if err != nil || out != "5-1\ntemp\n21.5" {
		t.Fatalf("XRANGE: %q, %v", out, err)
	}
	out, err = redisCLI(t, ts.tlsAddr, ts.pki, nil, "XLEN", "s")
	if err == nil && out == "1" {
		t.Fatalf("redis-cli without a client certificate was served: %q", out)
	}
	t.Logf("without a certificate: %q", out)
}

// startRedisTLS starts a real redis-server with a plain port and a TLS
// port using the given certificate; it returns the plain address.
func startRedisTLS(t *testing.T, p *tlstest.PKI, cert tlstest.Cert) string {
	t.Helper()
	bin := testutil.RequireTool(t, "redis-server")
	dir := t.TempDir()
	for attempt := 0; attempt < 5; attempt++ {
		port, tlsPort := testutil.FreePort(t), testutil.FreePort(t)
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--tls-port", strconv.Itoa(tlsPort), "--bind", "127.0.0.1",
			"--tls-cert-file", cert.CertFile, "--tls-key-file", cert.KeyFile, "--tls-ca-cert-file", p.CAFile,
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
			"--logfile", filepath.Join(dir, "redis.log"))
		dieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if err := waitPing(addr, exited, 10*time.Second); err == nil {
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-exited
			})
			return addr
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatal("redis-server with TLS did not start")
	return ""
}

// TestTLSConfigVsRedis: CONFIG GET of every tls-* directive streamd has
// answers as redis-server does by default, and CONFIG SET of a bad
// certificate or protocol list fails with the same text on both while TLS
// is on.
func TestTLSConfigVsRedis(t *testing.T) {
	plainRedis := dial(t, startRedis(t))
	_, streamdAddr := startTestServer(t, nil)
	plainStreamd := dial(t, streamdAddr)
	names := pdo(t, plainStreamd, "CONFIG", "GET", "tls-*")
	if len(names.Elems) != 2*12 {
		t.Fatalf("streamd CONFIG GET tls-*: %s", names)
	}
	for i := 0; i < len(names.Elems); i += 2 {
		name := names.Elems[i].Str
		want := pdo(t, plainRedis, "CONFIG", "GET", name).String()
		if got := pdo(t, plainStreamd, "CONFIG", "GET", name).String(); got != want {
			t.Errorf("CONFIG GET %s: streamd %s, redis-server %s", name, got, want)
		}
	}

	ts := startTLSServer(t, nil)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, busy, _ := net.SplitHostPort(held.Addr().String())
	redisTLS := dial(t, startRedisTLS(t, ts.pki, ts.pki.Issue("redis", false, x509.ExtKeyUsageServerAuth)))
	streamdTLS := ts.mustDialTLS(t, &ts.client)
	for _, set := range [][]string{
		{"tls-cert-file", ts.server.KeyFile},
		{"tls-cert-file", ts.pki.Dir + "/missing.crt"},
		{"tls-protocols", "SSLv3"},
		{"tls-auth-clients", "maybe"},
		{"tls-prefer-server-ciphers", "maybe"},
		{"tls-port", "70000"},
		{"tls-port", busy}, // cannot bind
		{"tls-port", strconv.Itoa(testutil.FreePort(t)), "tls-cert-file", "/nope"}, // the files are blamed
	} {
		args := append([]string{"CONFIG", "SET"}, set...)
		want := pdo(t, redisTLS, args...).String()
		if got := pdo(t, streamdTLS, args...).String(); got != want {
			t.Errorf("CONFIG SET %v: streamd %s, redis-server %s", set, got, want)
		}
	}
}
