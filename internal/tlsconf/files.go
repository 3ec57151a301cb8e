package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// loadKeyPair reads the certificate chain and its key, decrypting a
// legacy encrypted PEM key with pass, and checks that they match.
func loadKeyPair(certFile, keyFile, pass string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls-cert-file: %v", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls-key-file: %v", err)
	}
	keyPEM, err = decryptKey(keyFile, keyPEM, pass)
	if err != nil {
		return tls.Certificate{}, err
	}
	if !hasBlock(certPEM, "CERTIFICATE") {
		return tls.Certificate{}, fmt.Errorf("tls-cert-file %s: no PEM certificate in it", certFile)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls-cert-file %s / tls-key-file %s: %v", certFile, keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return tls.Certificate{}, fmt.Errorf("tls-cert-file %s: %v", certFile, err)
		}
	}
	return cert, nil
}

// hasBlock reports whether data holds a PEM block of type typ.
func hasBlock(data []byte, typ string) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if b.Type == typ {
			return true
		}
	}
}

// decryptKey returns keyPEM with its private key decrypted when it is
// encrypted, as is otherwise: a PKCS#8 "ENCRYPTED PRIVATE KEY" (PBES2,
// OpenSSL 3's default; pkcs8.go) or a legacy PEM block ("Proc-Type:
// 4,ENCRYPTED", `openssl genrsa -aes256 -traditional`).
func decryptKey(keyFile string, keyPEM []byte, pass string) ([]byte, error) {
	rest := keyPEM
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, fmt.Errorf("tls-key-file %s: no PEM private key in it", keyFile)
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" {
			if pass == "" {
				return nil, fmt.Errorf("tls-key-file %s: the key is encrypted and tls-key-file-pass is not set", keyFile)
			}
			der, err := decryptPKCS8(b.Bytes, pass)
			if errors.Is(err, errWrongPass) {
				return nil, fmt.Errorf("tls-key-file %s: wrong tls-key-file-pass", keyFile)
			}
			if err != nil {
				return nil, fmt.Errorf("tls-key-file %s: %v; convert it with `openssl pkcs8 -topk8 -v2 aes-256-cbc -in %s -out key.pem`",
					keyFile, err, keyFile)
			}
			return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
		}
		if !strings.HasSuffix(b.Type, "PRIVATE KEY") {
			continue
		}
		// Legacy PEM encryption (deprecated in Go, but what `openssl
		// genrsa -aes256 -traditional` writes). A passphrase for an unencrypted key is
		// not needed and not an error, as in Redis.
		if !x509.IsEncryptedPEMBlock(b) { //nolint:staticcheck
			return keyPEM, nil
		}
		if pass == "" {
			return nil, fmt.Errorf("tls-key-file %s: the key is encrypted and tls-key-file-pass is not set", keyFile)
		}
		der, err := x509.DecryptPEMBlock(b, []byte(pass)) //nolint:staticcheck // see above
		if err != nil {
			if errors.Is(err, x509.IncorrectPasswordError) {
				return nil, fmt.Errorf("tls-key-file %s: wrong tls-key-file-pass", keyFile)
			}
			return nil, fmt.Errorf("tls-key-file %s: %v", keyFile, err)
		}
		// The legacy format's only check is the CBC padding, which a
		// wrong passphrase passes about once in 256 tries: a key that
		// then does not parse was opened with the wrong one.
		if !parsesAsKey(b.Type, der) {
			return nil, fmt.Errorf("tls-key-file %s: wrong tls-key-file-pass", keyFile)
		}
		return pem.EncodeToMemory(&pem.Block{Type: b.Type, Bytes: der}), nil
	}
}

// parsesAsKey reports whether der is a private key of the PEM type typ
// ("RSA PRIVATE KEY", "EC PRIVATE KEY" or PKCS#8 "PRIVATE KEY"; other
// types are left to the TLS library's own error).
func parsesAsKey(typ string, der []byte) bool {
	var err error
	switch typ {
	case "RSA PRIVATE KEY":
		_, err = x509.ParsePKCS1PrivateKey(der)
	case "EC PRIVATE KEY":
		_, err = x509.ParseECPrivateKey(der)
	case "PRIVATE KEY":
		_, err = x509.ParsePKCS8PrivateKey(der)
	}
	return err == nil
}

// loadCAs reads the CA certificates of file and of every regular file of
// dir holding PEM certificates (files with none, such as OpenSSL's hash
// links to CRLs, are skipped). The pool is never nil: with neither set it
// is empty, so that nothing verifies against the system's roots by
// mistake.
func loadCAs(file, dir string) (*x509.CertPool, bool, error) {
	pool := x509.NewCertPool()
	have := false
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, false, fmt.Errorf("tls-ca-cert-file: %v", err)
		}
		if !pool.AppendCertsFromPEM(data) {
			return nil, false, fmt.Errorf("tls-ca-cert-file %s: no PEM certificate in it", file)
		}
		have = true
	}
	if dir != "" {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, false, fmt.Errorf("tls-ca-cert-dir: %v", err)
		}
		n := 0
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, false, fmt.Errorf("tls-ca-cert-dir: %v", err)
			}
			if pool.AppendCertsFromPEM(data) {
				n++
			}
		}
		if n == 0 {
			return nil, false, fmt.Errorf("tls-ca-cert-dir %s: no PEM certificate in it", dir)
		}
		have = true
	}
	return pool, have, nil
}
