package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestACLConfigRefused: as Redis, streamd does not start with a bad "user"
// line, an aclfile that does not parse, or both an aclfile and "user"
// lines; the error says why.
func TestACLConfigRefused(t *testing.T) {
	dir := t.TempDir()
	acl := filepath.Join(dir, "users.acl")
	os.WriteFile(acl, []byte("user app on bogus\n"), 0o600)
	for _, c := range []struct{ name, conf, want string }{
		{"bad user line", "user app on +nosuchcommand\n", "Error in user declaration 'app on +nosuchcommand'"},
		{"bad aclfile", "aclfile " + acl + "\n", "users.acl:1: Syntax error"},
		{"both", "aclfile " + acl + "\nuser app on\n", "please define either an ACL file or declare users"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conf := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".conf")
			text := "port 0\nmetrics-addr \"\"\ndir " + filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")) + "\n" + c.conf
			if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			err := run([]string{conf}, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("run: %v, want an error containing %q", err, c.want)
			}
		})
	}
}
