package main

import (
	"crypto/x509"
	"testing"

	"streamd/internal/tlsconf"
	"streamd/internal/tlsconf/tlstest"
)

// testCerts are PEM files of a CA and a certificate it signed for
// 127.0.0.1 (server and client use: a node presents it both ways).
type testCerts struct {
	CA, Cert, Key string
}

// genCerts makes a fresh CA (named name) and a node certificate.
func genCerts(t *testing.T, name string) testCerts {
	t.Helper()
	p := tlstest.New(t, name)
	c := p.Issue("node", false, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	return testCerts{CA: p.CAFile, Cert: c.CertFile, Key: c.KeyFile}
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
