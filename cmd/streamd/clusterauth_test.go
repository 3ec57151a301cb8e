package main

import (
	"bufio"
	"crypto/tls"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/server/resp"
)

// TestClusterCredentials: the start-up rule and cluster-secret-file.
func TestClusterCredentials(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, empty := file("good", "  s3cret \n"), file("empty", " \n\t")
	node := func(addr string, f func(*config.Config)) config.Config {
		c := config.Default()
		c.NodeID, c.RaftAddr = "n1", addr
		if f != nil {
			f(&c)
		}
		return c
	}
	for _, tc := range []struct {
		name         string
		cfg          config.Config
		secret, warn string
		err          string
	}{
		{name: "single node", cfg: config.Default()},
		{name: "non-loopback, nothing", cfg: node("10.1.2.3:7000", nil),
			err: "raft-addr 10.1.2.3:7000 is not a loopback address and the raft port has no credentials"},
		{name: "host name, nothing", cfg: node("db1.example:7000", nil), err: "not a loopback address"},
		{name: "non-loopback, requirepass", cfg: node("10.1.2.3:7000", func(c *config.Config) { c.RequirePass = "p" })},
		{name: "non-loopback, secret", cfg: node("10.1.2.3:7000", func(c *config.Config) { c.ClusterSecret = "x" }), secret: "x"},
		{name: "secret file", cfg: node("10.1.2.3:7000", func(c *config.Config) { c.ClusterSecretFile = good }), secret: "s3cret"},
		{name: "empty secret file", cfg: node("127.0.0.1:7000", func(c *config.Config) { c.ClusterSecretFile = empty }), err: "is empty"},
		{name: "missing secret file", cfg: node("127.0.0.1:7000", func(c *config.Config) { c.ClusterSecretFile = filepath.Join(dir, "none") }),
			err: "cluster-secret-file: open"},
		{name: "both", cfg: node("127.0.0.1:7000", func(c *config.Config) { c.ClusterSecret, c.ClusterSecretFile = "x", good }),
			err: "only one of cluster-secret and cluster-secret-file"},
		{name: "non-loopback, tls-cluster", cfg: node("10.1.2.3:7000", func(c *config.Config) { c.TLSCluster, c.TLSCACertFile = true, "ca.crt" })},
		{name: "tls-cluster without a CA", cfg: node("10.1.2.3:7000", func(c *config.Config) { c.TLSCluster = true }),
			err: "tls-cluster needs tls-ca-cert-file or tls-ca-cert-dir"},
		{name: "loopback, nothing", cfg: node("127.0.0.1:7000", nil), warn: "raft-addr is a loopback address"},
		{name: "localhost, nothing", cfg: node("localhost:7000", nil), warn: "raft-addr is a loopback address"},
		{name: "::1, nothing", cfg: node("[::1]:7000", nil), warn: "raft-addr is a loopback address"},
	} {
		secret, warn, err := clusterCredentials(tc.cfg)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case secret != tc.secret || !strings.HasPrefix(warn, tc.warn) || (tc.warn == "") != (warn == ""):
			t.Errorf("%s: secret %q warn %q", tc.name, secret, warn)
		}
	}
}

// TestJoinTLS: with join-tls, --join speaks TLS to the member's client port
// (presenting this node's certificate, checking the member's against the
// CA and the join host), sends AUTH and RAFT ADD; a member whose
// certificate another CA signed is refused at once.
func TestJoinTLS(t *testing.T) {
	certs, other := genCerts(t, "cluster"), genCerts(t, "other")
	member := func(c testCerts) (string, chan []string) {
		ln, err := tls.Listen("tcp", "127.0.0.1:0", c.loader(t).ServerConfig())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		got := make(chan []string, 4)
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer conn.Close()
					rr := resp.NewRequestReader(bufio.NewReader(conn), func() int64 { return 1 << 20 }, func() bool { return true })
					for {
						args, err := rr.ReadCommand()
						if err != nil {
							return
						}
						var words []string
						for _, a := range args {
							words = append(words, string(a))
						}
						got <- words
						conn.Write([]byte("+OK\r\n"))
					}
				}()
			}
		}()
		return ln.Addr().String(), got
	}
	cfg := config.Default()
	cfg.NodeID, cfg.RaftAddr, cfg.JoinTLS = "n9", "127.0.0.1:1", true
	cfg.TLSCertFile, cfg.TLSKeyFile, cfg.TLSCACertFile = certs.Cert, certs.Key, certs.CA
	addr, got := member(certs)
	cfg.Join = addr
	tc, err := joinTLSConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := joinCluster(addr, tc, "pw", "n9", "127.0.0.1:1", 10*time.Second, slog.New(slog.DiscardHandler), nil); err != nil {
		t.Fatal(err)
	}
	if a, b := <-got, <-got; strings.Join(a, " ") != "AUTH pw" || strings.Join(b, " ") != "RAFT ADD n9 127.0.0.1:1" {
		t.Fatalf("member got %q then %q", a, b)
	}
	// A member with another CA's certificate: refused without retrying.
	addr, _ = member(other)
	cfg.Join = addr
	if tc, err = joinTLSConfig(cfg); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = joinCluster(addr, tc, "pw", "n9", "127.0.0.1:1", 20*time.Second, slog.New(slog.DiscardHandler), nil)
	if err == nil || !strings.Contains(err.Error(), "certificate") || time.Since(start) > 10*time.Second {
		t.Fatalf("join to a member of another CA: %v after %v", err, time.Since(start))
	}
	// join-tls without usable files fails before any connection.
	cfg.TLSCertFile = filepath.Join(t.TempDir(), "none.crt")
	if _, err := joinTLSConfig(cfg); err == nil || !strings.Contains(err.Error(), "join-tls") {
		t.Fatalf("join-tls without a certificate: %v", err)
	}
}
