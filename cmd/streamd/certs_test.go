package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"streamd/internal/tlsconf"
)

// testCerts are PEM files of a CA and a certificate it signed for
// 127.0.0.1 (server and client use: a node presents it both ways).
type testCerts struct {
	CA, Cert, Key string
}

// genCerts writes a fresh CA (named name) and a node certificate into a
// new directory.
func genCerts(t *testing.T, name string) testCerts {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name + " node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := testCerts{CA: filepath.Join(dir, "ca.crt"), Cert: filepath.Join(dir, "node.crt"), Key: filepath.Join(dir, "node.key")}
	for path, block := range map[string]*pem.Block{
		c.CA: {Type: "CERTIFICATE", Bytes: caDER}, c.Cert: {Type: "CERTIFICATE", Bytes: der},
		c.Key: {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// flags are the directives that make a node use these files with
// tls-cluster.
func (c testCerts) flags() []string {
	return []string{"--tls-cluster", "yes", "--tls-cert-file", c.Cert, "--tls-key-file", c.Key, "--tls-ca-cert-file", c.CA}
}

// loader loads the files as a node would.
func (c testCerts) loader(t *testing.T) *tlsconf.Loader {
	t.Helper()
	l, err := tlsconf.NewLoader(tlsconf.Files{CertFile: c.Cert, KeyFile: c.Key, CAFile: c.CA})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
