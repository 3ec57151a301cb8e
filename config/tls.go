package config

import (
	"errors"
	"strings"

	"streamd/internal/tlsconf"
)

// tlsDirectives are Redis's tls-* directives. As in Redis, the file and
// CONFIG SET store the text of the paths, protocols and ciphers as given;
// they are loaded and checked together (tlsconf.Loader) when TLS is in use
// (tls-port or tls-cluster), so a bad value fails the start-up or the
// CONFIG SET ("Unable to update TLS configuration") rather than the line.
func tlsDirectives() []*Directive {
	return []*Directive{
		intParam("tls-port", 0, 65535, func(c *Config) *int { return &c.TLSPort }, false).
			doc("client TLS port, on the same bind addresses as port (0 = off; with a tls-port, port 0 turns plain TCP off)"),
		tlsString("tls-cert-file", func(c *Config) *string { return &c.TLSCertFile },
			"PEM certificate (chain) presented to clients and, with tls-cluster, to other nodes"),
		tlsString("tls-key-file", func(c *Config) *string { return &c.TLSKeyFile },
			"PEM private key of tls-cert-file"),
		tlsString("tls-key-file-pass", func(c *Config) *string { return &c.TLSKeyFilePass },
			`passphrase of an encrypted tls-key-file (PKCS#8 PBES2, as "openssl genrsa -aes256" writes, or legacy PEM)`),
		tlsString("tls-ca-cert-file", func(c *Config) *string { return &c.TLSCACertFile },
			"PEM CA certificates client and node certificates must chain to"),
		tlsString("tls-ca-cert-dir", func(c *Config) *string { return &c.TLSCACertDir },
			"directory of PEM CA certificates (every file holding certificates is read)"),
		{name: "tls-auth-clients", get: func(c *Config) string { return c.TLSAuthClients },
			set: func(c *Config, v string) error {
				switch l := strings.ToLower(v); l {
				case "yes", "no", "optional":
					c.TLSAuthClients = l
					return nil
				}
				return errors.New("argument(s) must be one of the following: no, yes, optional")
			},
			help: "yes: TLS clients must present a certificate chaining to the CA; optional: one given is verified; no: none is asked for"},
		tlsString("tls-protocols", func(c *Config) *string { return &c.TLSProtocols },
			`TLS versions to accept, e.g. "TLSv1.2 TLSv1.3" ("" = TLSv1.2 and TLSv1.3); a contiguous range`),
		tlsString("tls-ciphersuites", func(c *Config) *string { return &c.TLSCiphersuites },
			`TLS 1.3 suites allowed, colon-separated (e.g. TLS_AES_256_GCM_SHA384; "" = all)`),
		tlsString("tls-ciphers", func(c *Config) *string { return &c.TLSCiphers },
			`TLS 1.2 ciphers allowed, colon-separated OpenSSL or IANA names (no cipher-string keywords; "" = Go's defaults)`),
		mutableBool(boolParam("tls-prefer-server-ciphers", func(c *Config) *bool { return &c.TLSPreferServerCiphers })).
			doc("with tls-ciphers: pick the first of its ciphers the client offers (yes) or the client's first it allows (no)"),
		boolParam("tls-cluster", func(c *Config) *bool { return &c.TLSCluster }).
			doc("mutual TLS on the raft port with tls-cert-file, tls-key-file and the CA (read at start-up only)"),
	}
}

// tlsString is a CONFIG SET-able string directive of the TLS settings.
func tlsString(name string, field func(*Config) *string, help string) *Directive {
	return &Directive{
		name:   name,
		get:    func(c *Config) string { return *field(c) },
		set:    func(c *Config, v string) error { *field(c) = v; return nil },
		quoted: true,
		help:   help,
	}
}

// mutableBool makes a boolParam CONFIG SET-able, and returns it.
func mutableBool(p *Directive) *Directive {
	p.immutable = false
	return p
}

// TLSEnabled reports whether TLS is in use: a tls-port, or tls-cluster.
func (c Config) TLSEnabled() bool { return c.TLSPort != 0 || c.TLSCluster }

// TLSFiles returns the tls-* settings as tlsconf takes them.
func (c Config) TLSFiles() tlsconf.Files {
	return tlsconf.Files{
		CertFile: c.TLSCertFile, KeyFile: c.TLSKeyFile, KeyFilePass: c.TLSKeyFilePass,
		CAFile: c.TLSCACertFile, CADir: c.TLSCACertDir, AuthClients: c.TLSAuthClients,
		Protocols: c.TLSProtocols, Ciphersuites: c.TLSCiphersuites, Ciphers: c.TLSCiphers,
		PreferServerCiphers: c.TLSPreferServerCiphers,
	}
}

// IsTLSDirective reports whether a change of the directive name changes
// the TLS settings a tlsconf.Loader holds (every tls-* but tls-port and
// tls-cluster).
func IsTLSDirective(name string) bool {
	return strings.HasPrefix(name, "tls-") && name != "tls-port" && name != "tls-cluster"
}
