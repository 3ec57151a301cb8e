package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// TestBinaryACLUsers: the binary with requirepass and a "user" line in its
// config file, driven by redis-cli --user/--pass: a consumer limited to
// ~orders* +@stream +@connection writes its streams and is refused others;
// a user created with ACL SETUSER and the configured one survive a
// restart; the log holds no clear-text password.
func TestBinaryACLUsers(t *testing.T) {
	cliBin := testutil.RequireTool(t, "redis-cli")
	dir := t.TempDir()
	conf := filepath.Join(dir, "streamd.conf")
	text := "requirepass adminpw\nuser app on >apppw ~orders* +@stream +@connection\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	port := pickPort(t)
	run := func(args ...string) string {
		out, _ := exec.Command(cliBin, append([]string{"-p", strconv.Itoa(port), "--no-auth-warning"}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	admin := func(args ...string) string {
		return run(append([]string{"--user", "default", "--pass", "adminpw"}, args...)...)
	}
	app := func(args ...string) string {
		return run(append([]string{"--user", "app", "--pass", "apppw"}, args...)...)
	}
	ready := func(s *proc) {
		testutil.Eventually(t, 20*time.Second, 20*time.Millisecond, func() error {
			if s.exited() {
				t.Fatalf("streamd exited: %v\n%s", s.err, s.logs())
			}
			if out := admin("PING"); out != "PONG" {
				return errorString("PING as default: " + out)
			}
			return nil
		})
	}

	s := startServer(t, port, data, conf)
	ready(s)
	for _, c := range []struct{ got, want string }{
		{run("PING"), "NOAUTH Authentication required."},
		{app("XADD", "orders", "1-1", "item", "book"), "1-1"},
		{app("XADD", "audit", "1-1", "f", "v"), "NOPERM No permissions to access a key"},
		{app("CONFIG", "GET", "port"), "NOPERM User app has no permissions to run the 'config|get' command"},
		{app("ACL", "WHOAMI"), "NOPERM User app has no permissions to run the 'acl|whoami' command"},
		{admin("ACL", "SETUSER", "runtime", "on", ">rtpw", "~*", "+@read"), "OK"},
		{run("--user", "app", "--pass", "wrong", "PING"), "AUTH failed: WRONGPASS invalid username-password pair or user is disabled.\nNOAUTH Authentication required."},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	s.terminate()

	s = startServer(t, port, data, conf)
	ready(s)
	if got := admin("ACL", "USERS"); got != "app\ndefault\nruntime" {
		t.Errorf("ACL USERS after restart: %q", got)
	}
	if got := run("--user", "runtime", "--pass", "rtpw", "XLEN", "orders"); got != "1" {
		t.Errorf("XLEN as runtime after restart: %q", got)
	}
	if got := app("XRANGE", "orders", "-", "+"); !strings.Contains(got, "book") {
		t.Errorf("XRANGE as app after restart: %q", got)
	}
	s.terminate()
	filepath.WalkDir(data, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), "apppw") || strings.Contains(string(b), "rtpw") {
				t.Errorf("%s holds a clear-text password", path)
			}
		}
		return nil
	})
}

// errorString is a plain error.
type errorString string

func (e errorString) Error() string { return string(e) }
