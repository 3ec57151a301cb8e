package server

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestACLUsersSurviveRestart: users live in the replicated state, so they
// come back after a restart from the log alone and from a snapshot; the
// log holds no clear-text password.
func TestACLUsersSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	d := startDurable(t, dir)
	c := d.dial()
	pexpect(t, c, "+OK", "ACL", "SETUSER", "app", "on", ">clear-text-secret", "~orders*", "+@stream")
	pexpect(t, c, "+OK", "ACL", "SETUSER", "gone", "on", "nopass")
	pexpect(t, c, "(integer) 1", "ACL", "DELUSER", "gone")
	d.stop(false) // no snapshot: the log alone brings them back

	if b := readAll(t, dir); containsBytes(b, "clear-text-secret") {
		t.Fatal("the data directory holds the clear-text password")
	}

	d = startDurable(t, dir)
	c = d.dial()
	pexpect(t, c, `["app", "default"]`, "ACL", "USERS")
	a := d.dial()
	pexpect(t, a, "+OK", "AUTH", "app", "clear-text-secret")
	pexpect(t, a, "(error) NOPERM No permissions to access a key", "XADD", "x", "*", "f", "v")
	pexpect(t, c, "+OK", "ACL", "SETUSER", "app", "-xadd")
	d.stop(true) // with a snapshot

	d = startDurable(t, dir)
	c = d.dial()
	pexpect(t, c, `["user app on sanitize-payload #`+aclHash("clear-text-secret")+` ~orders* resetchannels -@all +@stream -xadd", `+
		`"user default on nopass sanitize-payload ~* &* +@all"]`, "ACL", "LIST")
}

// readAll concatenates every file under dir.
func readAll(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		all = append(all, b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// containsBytes reports whether b holds s.
func containsBytes(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }
