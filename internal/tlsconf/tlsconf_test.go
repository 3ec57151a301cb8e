package tlsconf

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamd/internal/tlsconf/tlstest"
)

// issue is tlstest's Issue as (certificate file, key file, serial).
func issue(p *tlstest.PKI, name string, bare bool, usages ...x509.ExtKeyUsage) (string, string, int64) {
	c := p.Issue(name, bare, usages...)
	return c.CertFile, c.KeyFile, c.Serial
}

// handshake runs a TLS handshake between the two configurations over a
// loopback TCP connection (buffered, so that both sides may write at
// once, as net.Pipe would not allow) and returns the client's view and
// both sides' errors.
func handshake(t *testing.T, server, client *tls.Config) (tls.ConnectionState, error, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	deadline := time.Now().Add(10 * time.Second)
	a.SetDeadline(deadline)
	b.SetDeadline(deadline)
	srv := tls.Server(a, server)
	done := make(chan error, 1)
	go func() {
		err := srv.Handshake()
		if err == nil {
			// TLS 1.3 client certificate failures reach the client on
			// its first read.
			_, err = srv.Write([]byte("x"))
		}
		done <- err
		if err != nil {
			a.Close()
		}
	}()
	cl := tls.Client(b, client)
	cerr := cl.Handshake()
	if cerr == nil {
		buf := make([]byte, 1)
		_, cerr = cl.Read(buf)
	}
	if cerr != nil {
		b.Close() // the server may be waiting for the client's next flight
	}
	serr := <-done
	return cl.ConnectionState(), serr, cerr
}

func clientWith(t *testing.T, p *tlstest.PKI, certFile, keyFile string) *tls.Config {
	t.Helper()
	if certFile == "" {
		return p.ClientConfig(nil)
	}
	return p.ClientConfig(&tlstest.Cert{CertFile: certFile, KeyFile: keyFile})
}

// TestAuthClients: tls-auth-clients yes refuses a client without a
// certificate or with one of another CA; optional accepts none but
// verifies one given; no does not ask for one.
func TestAuthClients(t *testing.T) {
	p := tlstest.New(t, "main")
	other := tlstest.New(t, "other")
	sc, sk, _ := issue(p, "server", false, x509.ExtKeyUsageServerAuth)
	cc, ck, _ := issue(p, "client", true, x509.ExtKeyUsageClientAuth)
	oc, ok, _ := issue(other, "intruder", true, x509.ExtKeyUsageClientAuth)
	for _, tc := range []struct {
		auth                       string
		none, good, foreign, asked bool
	}{
		{"yes", false, true, false, true},
		{"", false, true, false, true},
		{"optional", true, true, false, true},
		{"no", true, true, true, false},
	} {
		l, err := NewLoader(Files{CertFile: sc, KeyFile: sk, CAFile: p.CAFile, AuthClients: tc.auth})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = handshake(t, l.ServerConfig(), clientWith(t, p, "", ""))
		if (err == nil) != tc.none {
			t.Errorf("auth %q, no certificate: %v", tc.auth, err)
		}
		_, _, err = handshake(t, l.ServerConfig(), clientWith(t, p, cc, ck))
		if (err == nil) != tc.good {
			t.Errorf("auth %q, good certificate: %v", tc.auth, err)
		}
		_, _, err = handshake(t, l.ServerConfig(), clientWith(t, p, oc, ok))
		if (err == nil) != tc.foreign {
			t.Errorf("auth %q, certificate of another CA: %v", tc.auth, err)
		}
		asked := false
		cl := clientWith(t, p, "", "")
		cl.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			asked = true
			return &tls.Certificate{}, nil
		}
		handshake(t, l.ServerConfig(), cl)
		if asked != tc.asked {
			t.Errorf("auth %q: certificate asked for = %v", tc.auth, asked)
		}
	}
}

// TestReload: a reload swaps the certificate for the next handshake; a
// failed one keeps the old certificate and names the problem.
func TestReload(t *testing.T) {
	p := tlstest.New(t, "main")
	s1, k1, serial1 := issue(p, "server1", false, x509.ExtKeyUsageServerAuth)
	s2, k2, serial2 := issue(p, "server2", false, x509.ExtKeyUsageServerAuth)
	f := Files{CertFile: s1, KeyFile: k1, CAFile: p.CAFile, AuthClients: "no"}
	l, err := NewLoader(f)
	if err != nil {
		t.Fatal(err)
	}
	srv := l.ServerConfig()
	serialOf := func() int64 {
		cs, serr, cerr := handshake(t, srv, clientWith(t, p, "", ""))
		if serr != nil || cerr != nil {
			t.Fatalf("handshake: %v / %v", serr, cerr)
		}
		return cs.PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serialOf(); got != serial1 {
		t.Fatalf("serial %d, want %d", got, serial1)
	}
	f.CertFile, f.KeyFile = s2, k2
	if err := l.Reload(f); err != nil {
		t.Fatal(err)
	}
	if got := serialOf(); got != serial2 || l.Certificate().SerialNumber.Int64() != serial2 {
		t.Fatalf("after reload: serial %d, want %d", got, serial2)
	}
	// A key that does not match, a missing file, a file with no
	// certificate: each error names the file; the old certificate stays.
	for _, bad := range []struct {
		f    Files
		want string
	}{
		{Files{CertFile: s1, KeyFile: k2, AuthClients: "no"}, "private key does not match"},
		{Files{CertFile: filepath.Join(p.Dir, "nope.crt"), KeyFile: k2, AuthClients: "no"}, "nope.crt"},
		{Files{CertFile: k1, KeyFile: k1, AuthClients: "no"}, "tls-cert-file " + k1 + ": no PEM certificate"},
		{Files{CertFile: s2, KeyFile: k2}, "either tls-ca-cert-file or tls-ca-cert-dir must be specified"},
		{Files{CertFile: s2, KeyFile: k2, AuthClients: "no", Protocols: "SSLv3"}, "Invalid tls-protocols specified"},
		{Files{CertFile: s2, KeyFile: k2, AuthClients: "maybe"}, "must be yes, no or optional"},
		{Files{KeyFile: k2, AuthClients: "no"}, "tls-cert-file and tls-key-file are both required"},
	} {
		err := l.Reload(bad.f)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Reload(%+v) = %v, want %q", bad.f, err, bad.want)
		}
	}
	if got := serialOf(); got != serial2 {
		t.Fatalf("after failed reloads: serial %d, want %d", got, serial2)
	}
}

// TestEncryptedKey: a legacy encrypted PEM key opens with
// tls-key-file-pass; a wrong or missing passphrase, and a PKCS#8
// encrypted key, are clear errors.
func TestEncryptedKey(t *testing.T) {
	p := tlstest.New(t, "main")
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "rsa"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der := p.Sign(tmpl, &key.PublicKey)
	certFile := p.Write("rsa.crt", "CERTIFICATE", der)
	//lint:ignore SA1019 the legacy format is what is being tested.
	blk, err := x509.EncryptPEMBlock(rand.Reader, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key), []byte("secret"), x509.PEMCipherAES256) //nolint:staticcheck
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(p.Dir, "rsa.key")
	os.WriteFile(keyFile, pem.EncodeToMemory(blk), 0o600)
	if _, err := NewLoader(Files{CertFile: certFile, KeyFile: keyFile, KeyFilePass: "secret", AuthClients: "no"}); err != nil {
		t.Fatalf("with the passphrase: %v", err)
	}
	if _, err := NewLoader(Files{CertFile: certFile, KeyFile: keyFile, KeyFilePass: "wrong", AuthClients: "no"}); err == nil ||
		!strings.Contains(err.Error(), "wrong tls-key-file-pass") {
		t.Fatalf("wrong passphrase: %v", err)
	}
	// The legacy format checks only the CBC padding, which about one
	// wrong passphrase in 256 passes: every one must still be named.
	keyPEM, _ := os.ReadFile(keyFile)
	for i := 0; i < 2000; i++ {
		if _, err := decryptKey(keyFile, keyPEM, fmt.Sprintf("wrong%d", i)); err == nil ||
			!strings.Contains(err.Error(), "wrong tls-key-file-pass") {
			t.Fatalf("wrong passphrase %d: %v", i, err)
		}
	}
	if _, err := NewLoader(Files{CertFile: certFile, KeyFile: keyFile, AuthClients: "no"}); err == nil ||
		!strings.Contains(err.Error(), "tls-key-file-pass is not set") {
		t.Fatalf("no passphrase: %v", err)
	}
	pk8 := p.Write("pk8.key", "ENCRYPTED PRIVATE KEY", []byte{0x30, 0x00})
	if _, err := NewLoader(Files{CertFile: certFile, KeyFile: pk8, KeyFilePass: "secret", AuthClients: "no"}); err == nil ||
		!strings.Contains(err.Error(), "not a PKCS#8 encrypted key") || !strings.Contains(err.Error(), "convert it with") {
		t.Fatalf("damaged PKCS#8: %v", err)
	}
}

// TestPKCS8Encrypted: the PKCS#8 encrypted keys OpenSSL writes (PBES2 with
// PBKDF2-HMAC-SHA256/SHA1 and AES-256/128-CBC or 3DES; OpenSSL 3's genrsa
// default) open with the passphrase; a wrong one is named; PBES1 is
// refused with how to convert.
func TestPKCS8Encrypted(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not on PATH")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(openssl, args...).CombinedOutput(); err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out)
		}
	}
	plainFile := filepath.Join(dir, "plain.key")
	run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", plainFile)
	plainPEM, _ := os.ReadFile(plainFile)
	blk, _ := pem.Decode(plainPEM)
	for _, v := range [][]string{
		{"-v2", "aes-256-cbc"},
		{"-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA1"},
		{"-v2", "aes-192-cbc", "-v2prf", "hmacWithSHA512"},
		{"-v2", "des3"},
	} {
		enc := filepath.Join(dir, "enc.key")
		run(append([]string{"pkcs8", "-topk8", "-in", plainFile, "-out", enc, "-passout", "pass:secret"}, v...)...)
		data, _ := os.ReadFile(enc)
		eb, _ := pem.Decode(data)
		if eb == nil || eb.Type != "ENCRYPTED PRIVATE KEY" {
			t.Fatalf("%v: not an encrypted PKCS#8 file", v)
		}
		der, err := decryptPKCS8(eb.Bytes, "secret")
		if err != nil || string(der) != string(blk.Bytes) {
			t.Fatalf("%v: decrypt = %v (same key: %v)", v, err, string(der) == string(blk.Bytes))
		}
		if _, err := decryptKey(enc, data, "wrong"); err == nil || !strings.Contains(err.Error(), "wrong tls-key-file-pass") {
			t.Fatalf("%v, wrong passphrase: %v", v, err)
		}
	}
	// OpenSSL 3's genrsa -aes256 output loads with its certificate.
	key := filepath.Join(dir, "rsa.key")
	crt := filepath.Join(dir, "rsa.crt")
	run("genrsa", "-aes256", "-passout", "pass:secret", "-out", key, "2048")
	run("req", "-x509", "-new", "-key", key, "-passin", "pass:secret", "-subj", "/CN=rsa", "-days", "1", "-out", crt)
	if _, err := NewLoader(Files{CertFile: crt, KeyFile: key, KeyFilePass: "secret", AuthClients: "no"}); err != nil {
		t.Fatalf("genrsa -aes256 key: %v", err)
	}
	v1 := filepath.Join(dir, "v1.key")
	run("pkcs8", "-topk8", "-in", plainFile, "-out", v1, "-passout", "pass:secret", "-v1", "PBE-SHA1-3DES")
	data, _ := os.ReadFile(v1)
	if _, err := decryptKey(v1, data, "secret"); err == nil || !strings.Contains(err.Error(), "only PBES2") || !strings.Contains(err.Error(), "convert it with") {
		t.Fatalf("PBES1: %v", err)
	}
}

// TestCluster: both sides of the raft port present their certificate and
// accept a peer chaining to the CA whatever its names and key usages;
// a peer of another CA is refused on either side; no certificate is
// refused by the listener.
func TestCluster(t *testing.T) {
	p := tlstest.New(t, "main")
	other := tlstest.New(t, "other")
	ac, ak, _ := issue(p, "node-a", true) // no names, no EKU
	bc, bk, _ := issue(p, "node-b", true, x509.ExtKeyUsageServerAuth)
	xc, xk, _ := issue(other, "intruder", true)
	la, err := NewLoader(Files{CertFile: ac, KeyFile: ak, CAFile: p.CAFile, AuthClients: "no"})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := NewLoader(Files{CertFile: bc, KeyFile: bk, CAFile: p.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	lx, err := NewLoader(Files{CertFile: xc, KeyFile: xk, CAFile: p.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, serr, cerr := handshake(t, la.ClusterServerConfig(), lb.ClusterClientConfig()); serr != nil || cerr != nil {
		t.Fatalf("a accepts b: %v / %v", serr, cerr)
	}
	if _, serr, cerr := handshake(t, lb.ClusterServerConfig(), la.ClusterClientConfig()); serr != nil || cerr != nil {
		t.Fatalf("b accepts a: %v / %v", serr, cerr)
	}
	if _, serr, _ := handshake(t, la.ClusterServerConfig(), lx.ClusterClientConfig()); serr == nil {
		t.Fatal("listener accepted a peer of another CA")
	}
	if _, _, cerr := handshake(t, lx.ClusterServerConfig(), la.ClusterClientConfig()); cerr == nil {
		t.Fatal("dialer accepted a listener of another CA")
	}
	if _, serr, _ := handshake(t, la.ClusterServerConfig(), clientWith(t, p, "", "")); serr == nil {
		t.Fatal("listener accepted a peer with no certificate")
	}
	// Without a CA nothing verifies (never the system's roots).
	ln, err := NewLoader(Files{CertFile: ac, KeyFile: ak, AuthClients: "no"})
	if err != nil {
		t.Fatal(err)
	}
	if _, serr, _ := handshake(t, ln.ClusterServerConfig(), lb.ClusterClientConfig()); serr == nil {
		t.Fatal("listener without a CA accepted a peer")
	}
	if ln.HasCA() || !la.HasCA() {
		t.Fatalf("HasCA: %v without, %v with", ln.HasCA(), la.HasCA())
	}
}

// TestClientConfig: a tool dialing the client port verifies the server
// against the CA, host name included, and presents its certificate.
func TestClientConfig(t *testing.T) {
	p := tlstest.New(t, "main")
	sc, sk, _ := issue(p, "server", false, x509.ExtKeyUsageServerAuth)
	cc, ck, _ := issue(p, "client", true, x509.ExtKeyUsageClientAuth)
	srv, err := NewLoader(Files{CertFile: sc, KeyFile: sk, CAFile: p.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewLoader(Files{CertFile: cc, KeyFile: ck, CAFile: p.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	cfg := cl.ClientConfig()
	cfg.ServerName = "127.0.0.1"
	if _, serr, cerr := handshake(t, srv.ServerConfig(), cfg); serr != nil || cerr != nil {
		t.Fatalf("handshake: %v / %v", serr, cerr)
	}
	cfg = cl.ClientConfig()
	cfg.ServerName = "db.example.com"
	if _, _, cerr := handshake(t, srv.ServerConfig(), cfg); cerr == nil {
		t.Fatal("a server name the certificate does not carry was accepted")
	}
}

// TestCADir: tls-ca-cert-dir reads every file holding certificates.
func TestCADir(t *testing.T) {
	p := tlstest.New(t, "main")
	sc, sk, _ := issue(p, "server", false, x509.ExtKeyUsageServerAuth)
	cc, ck, _ := issue(p, "client", true, x509.ExtKeyUsageClientAuth)
	dir := t.TempDir()
	data, _ := os.ReadFile(p.CAFile)
	os.WriteFile(filepath.Join(dir, "0a1b2c3d.0"), data, 0o600)
	os.WriteFile(filepath.Join(dir, "README"), []byte("not a certificate"), 0o600)
	l, err := NewLoader(Files{CertFile: sc, KeyFile: sk, CADir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, serr, cerr := handshake(t, l.ServerConfig(), clientWith(t, p, cc, ck)); serr != nil || cerr != nil {
		t.Fatalf("handshake: %v / %v", serr, cerr)
	}
	if _, err := NewLoader(Files{CertFile: sc, KeyFile: sk, CADir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("empty dir: %v", err)
	}
}

// TestProtocolsAndCiphers: tls-protocols, tls-ciphersuites and
// tls-ciphers parse as Redis's names and are enforced.
func TestProtocolsAndCiphers(t *testing.T) {
	for _, tc := range []struct {
		in       string
		min, max uint16
		bad      string
	}{
		{"", tls.VersionTLS12, tls.VersionTLS13, ""},
		{"TLSv1.2", tls.VersionTLS12, tls.VersionTLS12, ""},
		{"tlsv1.3 TLSv1.2", tls.VersionTLS12, tls.VersionTLS13, ""},
		{"TLSv1 TLSv1.1", tls.VersionTLS10, tls.VersionTLS11, ""},
		{"TLSv1 TLSv1.3", 0, 0, "leaves a gap"},
		{"SSLv3", 0, 0, "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'."},
	} {
		min, max, err := ParseProtocols(tc.in)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%q: %v, want %q", tc.in, err, tc.bad)
			}
		} else if err != nil || min != tc.min || max != tc.max {
			t.Errorf("%q = %x..%x, %v", tc.in, min, max, err)
		}
	}
	p := tlstest.New(t, "main")
	sc, sk, _ := issue(p, "server", false, x509.ExtKeyUsageServerAuth)
	base := Files{CertFile: sc, KeyFile: sk, AuthClients: "no"}

	// TLS 1.2 only: a TLS 1.3-only client is refused.
	f := base
	f.Protocols = "TLSv1.2"
	l, err := NewLoader(f)
	if err != nil {
		t.Fatal(err)
	}
	cl := clientWith(t, p, "", "")
	cl.MinVersion = tls.VersionTLS13
	if _, _, cerr := handshake(t, l.ServerConfig(), cl); cerr == nil {
		t.Fatal("a TLS 1.3 client was accepted with tls-protocols TLSv1.2")
	}

	// tls-ciphers with tls-prefer-server-ciphers: the server's order, or
	// the client's.
	const aes256 = "ECDHE-ECDSA-AES256-GCM-SHA384"
	for _, prefer := range []bool{true, false} {
		f := base
		f.Protocols = "TLSv1.2"
		f.Ciphers = aes256 + ":TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
		f.PreferServerCiphers = prefer
		l, err := NewLoader(f)
		if err != nil {
			t.Fatal(err)
		}
		cl := clientWith(t, p, "", "")
		cl.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}
		cs, serr, cerr := handshake(t, l.ServerConfig(), cl)
		if serr != nil || cerr != nil {
			t.Fatalf("prefer %v: %v / %v", prefer, serr, cerr)
		}
		want := tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
		if prefer {
			want = tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
		}
		if cs.CipherSuite != want {
			t.Errorf("prefer %v: suite %s, want %s", prefer, tls.CipherSuiteName(cs.CipherSuite), tls.CipherSuiteName(want))
		}
		// A client offering none of the list is refused.
		cl.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}
		if _, _, cerr := handshake(t, l.ServerConfig(), cl); cerr == nil {
			t.Errorf("prefer %v: a client with no allowed cipher was accepted", prefer)
		}
	}

	// tls-ciphersuites: a TLS 1.3 connection on a suite not listed is
	// refused; on a listed one it goes through.
	f = base
	f.Ciphersuites = "TLS_CHACHA20_POLY1305_SHA256"
	l, err = NewLoader(f)
	if err != nil {
		t.Fatal(err)
	}
	cs, serr, cerr := handshake(t, l.ServerConfig(), clientWith(t, p, "", ""))
	if serr == nil && cerr == nil && cs.CipherSuite != tls.TLS_CHACHA20_POLY1305_SHA256 {
		t.Fatalf("TLS 1.3 on %s with tls-ciphersuites %s", tls.CipherSuiteName(cs.CipherSuite), f.Ciphersuites)
	}
	if serr != nil && !strings.Contains(serr.Error(), "not in tls-ciphersuites") {
		t.Fatalf("refusal: %v", serr)
	}

	for _, bad := range []Files{
		{CertFile: sc, KeyFile: sk, AuthClients: "no", Ciphers: "HIGH:!aNULL"},
		{CertFile: sc, KeyFile: sk, AuthClients: "no", Ciphersuites: "TLS_AES_128_CCM_SHA256"},
	} {
		if _, err := NewLoader(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := parseCiphers("aes128-gcm-sha256, ECDHE-RSA-CHACHA20-POLY1305"); err != nil {
		t.Fatal(err)
	}
}

// TestGenCertsScript: the certificates `make certs` (scripts/gen-certs.sh)
// writes load, and serve: the server one to a client presenting the client
// one; the generic one both ways on the cluster port, as two nodes would.
func TestGenCertsScript(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not on PATH")
	}
	dir := t.TempDir()
	cmd := exec.Command("../../scripts/gen-certs.sh", dir)
	cmd.Env = append(os.Environ(), "CA_KEY_BITS=2048") // faster than Redis's 4096
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-certs.sh: %v\n%s", err, out)
	}
	f := func(name string) string { return filepath.Join(dir, name) }
	srv, err := NewLoader(Files{CertFile: f("server.crt"), KeyFile: f("server.key"), CAFile: f("ca.crt")})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := NewLoader(Files{CertFile: f("client.crt"), KeyFile: f("client.key"), CAFile: f("ca.crt")})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "localhost"} {
		cfg := cli.ClientConfig()
		cfg.ServerName = name
		if _, serr, cerr := handshake(t, srv.ServerConfig(), cfg); serr != nil || cerr != nil {
			t.Fatalf("%s: %v / %v", name, serr, cerr)
		}
	}
	node, err := NewLoader(Files{CertFile: f("streamd.crt"), KeyFile: f("streamd.key"), CAFile: f("ca.crt")})
	if err != nil {
		t.Fatal(err)
	}
	if _, serr, cerr := handshake(t, node.ClusterServerConfig(), node.ClusterClientConfig()); serr != nil || cerr != nil {
		t.Fatalf("cluster: %v / %v", serr, cerr)
	}
}

// TestReloadDuringHandshakes: handshakes and reloads at once (run with
// -race): every handshake gets one of the two certificates, whole.
func TestReloadDuringHandshakes(t *testing.T) {
	p := tlstest.New(t, "main")
	a := p.Issue("a", false, x509.ExtKeyUsageServerAuth)
	b := p.Issue("b", false, x509.ExtKeyUsageServerAuth)
	fa := Files{CertFile: a.CertFile, KeyFile: a.KeyFile, AuthClients: "no"}
	fb := Files{CertFile: b.CertFile, KeyFile: b.KeyFile, AuthClients: "no"}
	l, err := NewLoader(fa)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			f := fa
			if i%2 == 1 {
				f = fb
			}
			if err := l.Reload(f); err != nil {
				done <- err
				return
			}
		}
	}()
	srv := l.ServerConfig()
	for range 20 {
		cs, serr, cerr := handshake(t, srv, clientWith(t, p, "", ""))
		if serr != nil || cerr != nil {
			t.Fatalf("handshake: %v / %v", serr, cerr)
		}
		if s := cs.PeerCertificates[0].SerialNumber.Int64(); s != a.Serial && s != b.Serial {
			t.Fatalf("serial %d", s)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
