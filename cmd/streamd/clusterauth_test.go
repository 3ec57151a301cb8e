package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamd/config"
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
