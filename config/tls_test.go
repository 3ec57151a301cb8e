package config

import (
	"os"
	"path/filepath"
	"testing"

	"streamd/internal/tlsconf"
)

// TestTLSDirectives: Redis's tls-* names and defaults, what CONFIG SET may
// change, the checks made per value, the mapping onto tlsconf.Files, and a
// CONFIG REWRITE round trip.
func TestTLSDirectives(t *testing.T) {
	def := Default()
	for name, want := range map[string]string{
		"tls-port": "0", "tls-cert-file": "", "tls-key-file": "", "tls-key-file-pass": "",
		"tls-ca-cert-file": "", "tls-ca-cert-dir": "", "tls-auth-clients": "yes", "tls-protocols": "",
		"tls-ciphersuites": "", "tls-ciphers": "", "tls-prefer-server-ciphers": "no", "tls-cluster": "no",
	} {
		p := Lookup(name)
		if p == nil {
			t.Fatalf("no directive %s", name)
		}
		if got := p.Get(&def); got != want {
			t.Errorf("%s default %q, want %q", name, got, want)
		}
		if p.Immutable() != (name == "tls-cluster") {
			t.Errorf("%s: immutable = %v", name, p.Immutable())
		}
		if IsTLSDirective(name) == (name == "tls-port" || name == "tls-cluster") {
			t.Errorf("IsTLSDirective(%s) = %v", name, IsTLSDirective(name))
		}
	}
	if def.TLSEnabled() {
		t.Fatal("TLS enabled by default")
	}
	c := Default()
	for _, bad := range [][2]string{{"tls-auth-clients", "maybe"}, {"tls-port", "70000"}, {"tls-prefer-server-ciphers", "perhaps"}, {"tls-cluster", "1x"}} {
		if err := c.Set(bad[0], bad[1]); err == nil {
			t.Errorf("%s %s accepted", bad[0], bad[1])
		}
	}
	for _, kv := range [][2]string{
		{"tls-port", "6380"}, {"tls-cert-file", "a b.crt"}, {"tls-key-file", "k.key"}, {"tls-key-file-pass", "pw"},
		{"tls-ca-cert-file", "ca.crt"}, {"tls-ca-cert-dir", "/etc/ca"}, {"tls-auth-clients", "OPTIONAL"},
		{"tls-protocols", "TLSv1.3"}, {"tls-ciphersuites", "TLS_AES_256_GCM_SHA384"}, {"tls-ciphers", "AES128-SHA"},
		{"tls-prefer-server-ciphers", "yes"}, {"tls-cluster", "yes"},
	} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("%s %s: %v", kv[0], kv[1], err)
		}
	}
	want := tlsconf.Files{CertFile: "a b.crt", KeyFile: "k.key", KeyFilePass: "pw", CAFile: "ca.crt", CADir: "/etc/ca",
		AuthClients: "optional", Protocols: "TLSv1.3", Ciphersuites: "TLS_AES_256_GCM_SHA384", Ciphers: "AES128-SHA",
		PreferServerCiphers: true}
	if got := c.TLSFiles(); got != want || !c.TLSEnabled() || c.TLSPort != 6380 || !c.TLSCluster {
		t.Fatalf("TLSFiles = %+v (enabled %v)", got, c.TLSEnabled())
	}
	path := filepath.Join(t.TempDir(), "redis.conf")
	if err := os.WriteFile(path, Rewrite(nil, c), 0o644); err != nil {
		t.Fatal(err)
	}
	back := Default()
	if err := LoadFile(path, &back); err != nil {
		t.Fatal(err)
	}
	if back.TLSFiles() != want || back.TLSPort != 6380 || !back.TLSCluster {
		t.Fatalf("after CONFIG REWRITE: %+v", back.TLSFiles())
	}
}
