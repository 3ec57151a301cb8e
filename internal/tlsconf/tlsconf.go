// Package tlsconf turns Redis's tls-* directives into crypto/tls
// configurations: it loads and checks the certificate, key (with an
// optional passphrase) and CA files, parses tls-protocols, tls-ciphers and
// tls-ciphersuites, and holds the result in a Loader that a CONFIG SET may
// swap atomically. The tls.Configs it hands out read the Loader's current
// state at every handshake, so a reload applies to new connections without
// re-listening; connections already open keep the certificates they
// negotiated with.
//
// It is a leaf: it imports only the standard library.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync/atomic"
)

// Files is what the tls-* directives name, as the configuration holds
// them (text, unparsed).
type Files struct {
	// CertFile is "tls-cert-file": the PEM certificate (chain) the server
	// presents, and the cluster port's client certificate.
	CertFile string
	// KeyFile is "tls-key-file": the PEM private key of CertFile.
	KeyFile string
	// KeyFilePass is "tls-key-file-pass": the passphrase of an encrypted
	// KeyFile: PKCS#8 "ENCRYPTED PRIVATE KEY" with PBES2 (what OpenSSL 3's
	// `openssl genrsa -aes256` writes) or legacy "Proc-Type: 4,ENCRYPTED"
	// PEM (`-traditional`).
	KeyFilePass string
	// CAFile is "tls-ca-cert-file": PEM CA certificates that client and
	// peer certificates must chain to.
	CAFile string
	// CADir is "tls-ca-cert-dir": a directory of PEM CA certificates
	// (every regular file in it holding PEM certificates is read).
	CADir string
	// AuthClients is "tls-auth-clients": "yes" (a client must present a
	// certificate chaining to the CA), "optional" (one given is verified)
	// or "no" (none is asked for). "" is "yes", Redis's default.
	AuthClients string
	// Protocols is "tls-protocols": space-separated TLSv1, TLSv1.1,
	// TLSv1.2, TLSv1.3 ("" = "TLSv1.2 TLSv1.3", Redis's default).
	Protocols string
	// Ciphersuites is "tls-ciphersuites": colon-separated TLS 1.3 suite
	// names ("" = all).
	Ciphersuites string
	// Ciphers is "tls-ciphers": colon-separated TLS 1.2 (and below)
	// cipher names, OpenSSL's (ECDHE-RSA-AES128-GCM-SHA256) or IANA's
	// (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) ("" = Go's defaults).
	Ciphers string
	// PreferServerCiphers is "tls-prefer-server-ciphers": with Ciphers set,
	// pick the first suite of Ciphers the client offers (yes) or the
	// client's first suite that Ciphers allows (no).
	PreferServerCiphers bool
}

// state is one parsed, checked set of Files.
type state struct {
	files      Files
	cert       tls.Certificate
	pool       *x509.CertPool // never nil: empty when no CA is configured
	haveCA     bool
	minVersion uint16
	maxVersion uint16
	suites12   []uint16 // nil = Go's defaults
	suites13   map[uint16]bool
	clientAuth tls.ClientAuthType
	preferOwn  bool
}

// Loader holds the current certificates and settings. It is safe for
// concurrent use: handshakes read it while Reload swaps it.
type Loader struct {
	cur atomic.Pointer[state]
}

// NewLoader loads and checks f now. Its errors name the file or
// directive and the problem.
func NewLoader(f Files) (*Loader, error) {
	st, err := load(f)
	if err != nil {
		return nil, err
	}
	l := &Loader{}
	l.cur.Store(st)
	return l, nil
}

// Reload loads and checks f and, if all is well, makes it the current
// state at once (new handshakes use it). On error the old state stays.
func (l *Loader) Reload(f Files) error {
	st, err := load(f)
	if err != nil {
		return err
	}
	l.cur.Store(st)
	return nil
}

// Files returns the settings currently in use.
func (l *Loader) Files() Files { return l.cur.Load().files }

// HasCA reports whether a CA is configured (tls-ca-cert-file or
// tls-ca-cert-dir). Without one, ClusterServerConfig and
// ClusterClientConfig refuse every peer (they never fall back to the
// system's roots): tls-cluster needs one.
func (l *Loader) HasCA() bool { return l.cur.Load().haveCA }

// Certificate returns the parsed leaf certificate currently presented.
func (l *Loader) Certificate() *x509.Certificate { return l.cur.Load().cert.Leaf }

// load reads and checks every part of f.
func load(f Files) (*state, error) {
	st := &state{files: f, preferOwn: f.PreferServerCiphers}
	if f.CertFile == "" || f.KeyFile == "" {
		return nil, errors.New("tls-cert-file and tls-key-file are both required")
	}
	cert, err := loadKeyPair(f.CertFile, f.KeyFile, f.KeyFilePass)
	if err != nil {
		return nil, err
	}
	st.cert = cert
	if st.pool, st.haveCA, err = loadCAs(f.CAFile, f.CADir); err != nil {
		return nil, err
	}
	switch a := f.AuthClients; a {
	case "", "yes":
		st.clientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		st.clientAuth = tls.VerifyClientCertIfGiven
	case "no":
		st.clientAuth = tls.NoClientCert
	default:
		return nil, fmt.Errorf("tls-auth-clients %q: must be yes, no or optional", a)
	}
	if st.clientAuth != tls.NoClientCert && !st.haveCA {
		return nil, errors.New("either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-auth-clients is yes or optional")
	}
	if st.minVersion, st.maxVersion, err = ParseProtocols(f.Protocols); err != nil {
		return nil, err
	}
	if st.suites13, err = parseCiphersuites(f.Ciphersuites); err != nil {
		return nil, err
	}
	if st.suites12, err = parseCiphers(f.Ciphers); err != nil {
		return nil, err
	}
	return st, nil
}

// base is the part every configuration shares: versions and TLS 1.2
// suites.
//
// Session resumption is off: a resumed session would skip verifying the
// client's certificate against the CA in use now (after a reload), and
// Redis clients keep their connections long enough not to need it.
func (st *state) base() *tls.Config {
	return &tls.Config{
		MinVersion:             st.minVersion,
		MaxVersion:             st.maxVersion,
		CipherSuites:           st.suites12,
		SessionTicketsDisabled: true,
	}
}

// ServerConfig is the client port's configuration: the current
// certificate, and a client certificate required, verified if given, or
// not asked for, as tls-auth-clients says. Every handshake reads the
// Loader's current state.
func (l *Loader) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS10,
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			st := l.cur.Load()
			c := st.serverBase(hello)
			c.ClientAuth = st.clientAuth
			c.ClientCAs = st.pool
			c.VerifyConnection = st.checkSuite13
			return c, nil
		},
	}
}

// serverBase is a listener's configuration for one handshake: st's
// settings, its certificate and the cipher suites for hello.
func (st *state) serverBase(hello *tls.ClientHelloInfo) *tls.Config {
	c := st.base()
	c.Certificates = []tls.Certificate{st.cert}
	c.CipherSuites = st.pickSuite(hello)
	return c
}

// ClusterServerConfig is the raft port's listener configuration: the
// current certificate, and a client certificate always required, which
// must chain to the CA (tls-auth-clients does not apply). A peer's
// certificate may carry either extended key usage: a node presents the
// same tls-cert-file when it accepts and when it dials.
func (l *Loader) ClusterServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS10,
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			st := l.cur.Load()
			c := st.serverBase(hello)
			c.ClientAuth = tls.RequireAnyClientCert
			c.VerifyConnection = func(cs tls.ConnectionState) error {
				if err := st.checkSuite13(cs); err != nil {
					return err
				}
				return st.verifyPeer(cs)
			}
			return c, nil
		},
	}
}

// ClusterClientConfig is the raft port dialer's configuration: it
// presents the current certificate and verifies that the peer's chains to
// the CA. It checks no host name: peers are addressed by IP address and
// port, and membership of the cluster is what the CA's signature proves.
func (l *Loader) ClusterClientConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS10,
		// Verification is VerifyConnection's (chain to the CA, no host
		// name), not the default one.
		InsecureSkipVerify: true,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			st := l.cur.Load()
			return &st.cert, nil
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			return l.cur.Load().verifyPeer(cs)
		},
	}
}

// ClientConfig is for tools dialing the client port over TLS (--join): it
// presents the current certificate if the server asks for one and verifies
// the server's certificate against the CA (the system's roots when no CA
// is configured), host name included (tls.Dial takes ServerName from the
// address dialed when it is empty). Versions and suites are the
// Loader's as they are when it is called.
func (l *Loader) ClientConfig() *tls.Config {
	st := l.cur.Load()
	c := st.base()
	if st.haveCA {
		c.RootCAs = st.pool
	}
	c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		st := l.cur.Load()
		return &st.cert, nil
	}
	return c
}

// verifyPeer checks that the peer's certificate chains to the CA, for any
// extended key usage, with no host name.
func (st *state) verifyPeer(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tls: peer presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         st.pool,
		Intermediates: inter,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err != nil {
		return fmt.Errorf("tls: peer certificate: %w", err)
	}
	return nil
}
