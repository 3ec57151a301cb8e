// Package tlstest makes throw-away certificate authorities and
// certificates for tests of TLS (the client port's, the raft port's): a CA
// and the certificates it signs, written as PEM files in a temporary
// directory, as tls-cert-file, tls-key-file and tls-ca-cert-file take them.
// It imports only the standard library.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a certificate authority whose files live in Dir.
type PKI struct {
	t testing.TB
	// Dir holds ca.crt and the files Issue writes.
	Dir string
	// CA is the authority's certificate; CAFile its PEM file.
	CA     *x509.Certificate
	CAFile string
	key    *ecdsa.PrivateKey
	serial int64
}

// Cert is an issued certificate's files and serial number.
type Cert struct {
	CertFile, KeyFile string
	Serial            int64
}

// New makes a CA named name (valid for a day) in a temporary directory of t.
func New(t testing.TB, name string) *PKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name + " CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &PKI{t: t, Dir: t.TempDir(), CA: ca, key: key, serial: 100}
	p.CAFile = p.Write("ca.crt", "CERTIFICATE", der)
	return p
}

// Write writes one PEM block to Dir/name and returns the path.
func (p *PKI) Write(name, typ string, der []byte) string {
	p.t.Helper()
	path := filepath.Join(p.Dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// Issue writes name.crt and name.key: an ECDSA P-256 certificate signed by
// the CA with the given extended key usages (none: any use), for
// 127.0.0.1 and localhost unless bare.
func (p *PKI) Issue(name string, bare bool, usages ...x509.ExtKeyUsage) Cert {
	p.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usages,
	}
	if !bare {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, &key.PublicKey, p.key)
	if err != nil {
		p.t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		p.t.Fatal(err)
	}
	return Cert{
		CertFile: p.Write(name+".crt", "CERTIFICATE", der),
		KeyFile:  p.Write(name+".key", "EC PRIVATE KEY", kder),
		Serial:   p.serial,
	}
}

// Pool is a pool holding the CA alone.
func (p *PKI) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.CA)
	return pool
}

// ClientConfig is a client configuration that trusts the CA for
// ServerName "localhost" and, with a certificate, always presents it (Go's
// client would otherwise send none to a server whose acceptable CAs do not
// include its issuer).
func (p *PKI) ClientConfig(c *Cert) *tls.Config {
	p.t.Helper()
	cfg := &tls.Config{RootCAs: p.Pool(), ServerName: "localhost"}
	if c != nil {
		pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			p.t.Fatal(err)
		}
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return cfg
}

// Sign signs tmpl for pub with the CA and returns the certificate's DER
// (for certificates Issue does not make: RSA keys, odd fields).
func (p *PKI) Sign(tmpl *x509.Certificate, pub any) []byte {
	p.t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, pub, p.key)
	if err != nil {
		p.t.Fatal(err)
	}
	return der
}
