package tlsconf

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// errProtocols is Redis's text for a bad tls-protocols.
var errProtocols = errors.New("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")

// ParseProtocols reads tls-protocols: space-separated TLSv1, TLSv1.1,
// TLSv1.2 and TLSv1.3, case-insensitively, as Redis. "" is Redis's default,
// TLSv1.2 and TLSv1.3. Go's TLS takes a range of versions, so the list
// must not leave a gap ("TLSv1 TLSv1.3" is refused).
func ParseProtocols(v string) (min, max uint16, err error) {
	if strings.TrimSpace(v) == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	versions := map[string]uint16{"tlsv1": tls.VersionTLS10, "tlsv1.1": tls.VersionTLS11,
		"tlsv1.2": tls.VersionTLS12, "tlsv1.3": tls.VersionTLS13}
	var got []uint16
	for _, f := range strings.Fields(v) {
		ver, ok := versions[strings.ToLower(f)]
		if !ok {
			return 0, 0, errProtocols
		}
		if !slices.Contains(got, ver) {
			got = append(got, ver)
		}
	}
	slices.Sort(got)
	if int(got[len(got)-1]-got[0]) != len(got)-1 {
		return 0, 0, fmt.Errorf("tls-protocols %q leaves a gap: Go's TLS takes a contiguous range of versions", v)
	}
	return got[0], got[len(got)-1], nil
}

// suites13 are the TLS 1.3 suites Go implements.
var suites13 = map[string]uint16{
	"TLS_AES_128_GCM_SHA256":       tls.TLS_AES_128_GCM_SHA256,
	"TLS_AES_256_GCM_SHA384":       tls.TLS_AES_256_GCM_SHA384,
	"TLS_CHACHA20_POLY1305_SHA256": tls.TLS_CHACHA20_POLY1305_SHA256,
}

// parseCiphersuites reads tls-ciphersuites, OpenSSL's colon-separated
// TLS 1.3 suite list; nil means all. Go chooses the TLS 1.3 suite itself
// (AES-GCM when the CPU has AES instructions, else ChaCha20) among the
// client's: a connection whose choice is not in the list is refused.
func parseCiphersuites(v string) (map[uint16]bool, error) {
	names := splitList(v)
	if len(names) == 0 {
		return nil, nil
	}
	out := map[uint16]bool{}
	for _, n := range names {
		id, ok := suites13[strings.ToUpper(n)]
		if !ok {
			return nil, fmt.Errorf("tls-ciphersuites: unknown or unsupported TLS 1.3 suite %q (Go has TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256)", n)
		}
		out[id] = true
	}
	return out, nil
}

// openSSLNames maps OpenSSL's cipher names onto the TLS 1.2 suites Go
// implements.
var openSSLNames = map[string]uint16{
	"AES128-SHA":                    tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	"AES256-SHA":                    tls.TLS_RSA_WITH_AES_256_CBC_SHA,
	"AES128-SHA256":                 tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
	"AES128-GCM-SHA256":             tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	"AES256-GCM-SHA384":             tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	"DES-CBC3-SHA":                  tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA,
	"ECDHE-RSA-DES-CBC3-SHA":        tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	"ECDHE-ECDSA-AES128-SHA256":     tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-RSA-AES128-SHA256":       tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
}

// parseCiphers reads tls-ciphers: cipher names separated by colons,
// commas or spaces, OpenSSL's or IANA's; nil means Go's defaults.
// OpenSSL's cipher-string keywords (DEFAULT, HIGH, !aNULL, ...) are not
// understood and are refused.
func parseCiphers(v string) ([]uint16, error) {
	names := splitList(v)
	if len(names) == 0 {
		return nil, nil
	}
	iana := map[string]uint16{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if slices.Contains(s.SupportedVersions, tls.VersionTLS12) || slices.Contains(s.SupportedVersions, tls.VersionTLS10) {
			iana[s.Name] = s.ID
		}
	}
	var out []uint16
	for _, n := range names {
		id, ok := openSSLNames[strings.ToUpper(n)]
		if !ok {
			id, ok = iana[strings.ToUpper(n)]
		}
		if !ok {
			return nil, fmt.Errorf("tls-ciphers: unknown or unsupported cipher %q (streamd takes a list of cipher names, OpenSSL's or IANA's, not cipher-string keywords)", n)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// splitList splits an OpenSSL list on colons, commas and spaces.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ',' || r == ' ' || r == '\t' })
}

// pickSuite chooses the TLS 1.2 suite when tls-ciphers is set, honouring
// tls-prefer-server-ciphers (Go's own choice ignores both orders): the
// first of ours the client offers (yes) or the client's first that ours
// allows (no), among those the certificate's key can sign. It returns
// that one suite, or the whole list when there is no match (the
// handshake then fails, or goes on in TLS 1.3).
func (st *state) pickSuite(hello *tls.ClientHelloInfo) []uint16 {
	if st.suites12 == nil {
		return nil
	}
	fits := func(id uint16) bool {
		if !slices.Contains(st.suites12, id) || !slices.Contains(hello.CipherSuites, id) {
			return false
		}
		return strings.Contains(tls.CipherSuiteName(id), "_ECDSA_") == st.ecdsaKey()
	}
	order := hello.CipherSuites
	if st.preferOwn {
		order = st.suites12
	}
	for _, id := range order {
		if fits(id) {
			return []uint16{id}
		}
	}
	return st.suites12
}

// ecdsaKey reports whether the certificate's key signs ECDSA-suite
// handshakes (ECDSA and Ed25519 keys) rather than RSA ones.
func (st *state) ecdsaKey() bool {
	switch st.cert.PrivateKey.(type) {
	case *ecdsa.PrivateKey, ed25519.PrivateKey:
		return true
	}
	return false
}

// checkSuite13 refuses a TLS 1.3 connection whose suite tls-ciphersuites
// does not allow.
func (st *state) checkSuite13(cs tls.ConnectionState) error {
	if cs.Version == tls.VersionTLS13 && st.suites13 != nil && !st.suites13[cs.CipherSuite] {
		return fmt.Errorf("tls: TLS 1.3 suite %s is not in tls-ciphersuites", tls.CipherSuiteName(cs.CipherSuite))
	}
	return nil
}
