package server

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/acl"
	"streamd/internal/testutil"
)

// TestACLCommands: SETUSER/GETUSER/LIST/USERS/WHOAMI/CAT/DELUSER/GENPASS/
// DRYRUN/HELP and their errors.
func TestACLCommands(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"ACL", "WHOAMI"}, `"default"`},
		{[]string{"ACL", "USERS"}, `["default"]`},
		{[]string{"ACL", "LIST"}, `["user default on nopass sanitize-payload ~* &* +@all"]`},
		{[]string{"ACL", "SETUSER", "app", "on", ">secret", "~orders*", "+@stream", "+@connection"}, "+OK"},
		{[]string{"ACL", "SETUSER", "app", "-xdel"}, "+OK"},
		{[]string{"ACL", "USERS"}, `["app", "default"]`},
		{[]string{"ACL", "GETUSER", "nobody"}, "(nil bulk)"},
		{[]string{"ACL", "SETUSER", "a b"}, "(error) ERR Usernames can't contain spaces or null characters"},
		{[]string{"ACL", "SETUSER", "x", "bogus"}, "(error) ERR Error in ACL SETUSER modifier 'bogus': Syntax error"},
		{[]string{"ACL", "DELUSER", "default"}, "(error) ERR The 'default' user cannot be removed"},
		{[]string{"ACL", "DRYRUN", "nouser", "xadd"}, "(error) ERR User 'nouser' not found"},
		{[]string{"ACL", "DRYRUN", "app", "nocmd"}, "(error) ERR Command 'nocmd' not found"},
		{[]string{"ACL", "DRYRUN", "app", "xadd", "s"}, "(error) ERR wrong number of arguments for 'xadd' command"},
		{[]string{"ACL", "DRYRUN", "app", "xadd", "orders:1", "*", "f", "v"}, "+OK"},
		{[]string{"ACL", "DRYRUN", "app", "xadd", "other", "*", "f", "v"}, `"User app has no permissions to access the 'other' key"`},
		{[]string{"ACL", "DRYRUN", "app", "xdel", "orders:1", "1-1"}, `"User app has no permissions to run the 'xdel' command"`},
		{[]string{"ACL", "DRYRUN", "app", "xinfo", "stream", "orders"}, "+OK"},
		{[]string{"ACL", "DRYRUN", "app", "config", "get", "x"}, `"User app has no permissions to run the 'config|get' command"`},
		{[]string{"ACL", "CAT", "nosuch"}, "(error) ERR Unknown category 'nosuch'"},
		{[]string{"ACL", "GENPASS", "0"}, "(error) ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"},
		{[]string{"ACL", "GENPASS", "abc"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"ACL", "SAVE"}, "(error) " + string(errNoACLFile)},
		{[]string{"ACL", "LOAD"}, "(error) " + string(errNoACLFile)},
		{[]string{"ACL", "LOG", "RESET"}, "+OK"},
		{[]string{"ACL", "LOG", "x"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"ACL", "FOO"}, "(error) ERR unknown subcommand 'FOO'. Try ACL HELP."},
	})
	v, _ := c.Do("ACL", "GETUSER", "app")
	got := v.String()
	for _, want := range []string{`"flags", ["on", "sanitize-payload"]`,
		`"passwords", ["` + aclHash("secret") + `"]`, `"commands", "-@all +@stream +@connection -xdel", "keys", "~orders*", "channels", ""`} {
		if !strings.Contains(got, want) {
			t.Errorf("GETUSER app = %s, lacks %s", got, want)
		}
	}
	v, _ = c.Do("ACL", "GENPASS")
	if len(v.Str) != 64 {
		t.Errorf("GENPASS = %q, want 64 hex digits", v.Str)
	}
	v, _ = c.Do("ACL", "GENPASS", "5")
	if len(v.Str) != 2 {
		t.Errorf("GENPASS 5 = %q, want 2 hex digits", v.Str)
	}
	v, _ = c.Do("ACL", "CAT")
	if len(v.Elems) != 21 || v.Elems[11].Str != "stream" {
		t.Errorf("ACL CAT = %s", v)
	}
	v, _ = c.Do("ACL", "CAT", "stream")
	if s := v.String(); !strings.Contains(s, `"xadd"`) || !strings.Contains(s, `"xgroup|create"`) || strings.Contains(s, `"ping"`) {
		t.Errorf("ACL CAT stream = %s", s)
	}
	v, _ = c.Do("ACL", "HELP")
	if len(v.Elems) < 10 || !strings.HasPrefix(v.Elems[0].Str, "ACL <subcommand>") {
		t.Errorf("ACL HELP = %s", v)
	}
	runSteps(t, c, []step{
		{[]string{"ACL", "DELUSER", "app", "nobody", "app"}, "(integer) 1"},
		{[]string{"ACL", "USERS"}, `["default"]`},
	})
}

// TestACLAuthAndNoPerm: AUTH as a user, NOPERM texts for commands and keys
// (%R~ / %W~ by the commands' key specs), ACL LOG entries, WHOAMI, CLIENT
// LIST user=, RESET back to default, MULTI queuing and EXEC's re-check.
func TestACLAuthAndNoPerm(t *testing.T) {
	_, addr := startTestServer(t, nil)
	admin := dial(t, addr)
	runSteps(t, admin, []step{
		{[]string{"ACL", "SETUSER", "app", "on", ">pw", "~orders*", "%R~audit*", "+@stream", "+@connection", "+multi", "+exec"}, "+OK"},
		{[]string{"ACL", "SETUSER", "off", "off", ">pw", "+@all", "~*"}, "+OK"},
		{[]string{"ACL", "LOG", "RESET"}, "+OK"},
	})
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"AUTH", "app", "bad"}, "(error) WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"AUTH", "off", "pw"}, "(error) WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"AUTH", "app", "pw"}, "+OK"},
		{[]string{"ACL", "WHOAMI"}, "(error) NOPERM User app has no permissions to run the 'acl|whoami' command"},
		{[]string{"XADD", "orders", "1-1", "f", "v"}, `"1-1"`},
		{[]string{"XADD", "audit", "1-1", "f", "v"}, "(error) NOPERM No permissions to access a key"},
		{[]string{"XRANGE", "audit", "-", "+"}, "[]"},
		{[]string{"XLEN", "audit"}, "(integer) 0"},
		{[]string{"XGROUP", "CREATE", "audit", "g", "$", "MKSTREAM"}, "(error) NOPERM No permissions to access a key"},
		{[]string{"XGROUP", "CREATE", "orders", "g", "0"}, "+OK"},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "audit", ">"}, "(error) NOPERM No permissions to access a key"},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "orders", ">"}, `[["orders", [["1-1", ["f", "v"]]]]]`},
		{[]string{"XINFO", "STREAM", "other"}, "(error) NOPERM No permissions to access a key"},
		{[]string{"CONFIG", "GET", "port"}, "(error) NOPERM User app has no permissions to run the 'config|get' command"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"XADD", "other", "*", "f", "v"}, "(error) NOPERM No permissions to access a key"},
		{[]string{"EXEC"}, "(error) EXECABORT Transaction discarded because of previous errors."},
	})
	v, _ := admin.Do("ACL", "LOG")
	s := v.String()
	for _, want := range []string{`"reason", "key", "context", "multi", "object", "other", "username", "app"`,
		`"reason", "command", "context", "toplevel", "object", "config|get"`,
		`"count", (integer) 3, "reason", "key", "context", "toplevel", "object", "audit"`,
		`"reason", "auth", "context", "toplevel", "object", "AUTH", "username", "off"`} {
		if !strings.Contains(s, want) {
			t.Errorf("ACL LOG lacks %s:\n%s", want, s)
		}
	}
	v, _ = admin.Do("CLIENT", "LIST")
	if !strings.Contains(v.Str, " user=app ") || !strings.Contains(v.Str, " user=default ") {
		t.Errorf("CLIENT LIST = %s", v.Str)
	}
	// EXEC checks again: rules changed after queuing.
	runSteps(t, c, []step{
		{[]string{"MULTI"}, "+OK"},
		{[]string{"XADD", "orders", "2-1", "f", "v"}, "+QUEUED"},
		{[]string{"XLEN", "orders"}, "+QUEUED"},
	})
	runSteps(t, admin, []step{{[]string{"ACL", "SETUSER", "app", "-xadd"}, "+OK"}})
	runSteps(t, c, []step{
		{[]string{"EXEC"}, "[(error) NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. " +
			"This command is no longer allowed for the following reason: no permission to execute the command or subcommand, (integer) 1]"},
		// A changed user's rules apply at once to its connection.
		{[]string{"XADD", "orders", "3-1", "f", "v"}, "(error) NOPERM User app has no permissions to run the 'xadd' command"},
		{[]string{"RESET"}, "+RESET"},
		{[]string{"ACL", "WHOAMI"}, `"default"`},
	})
	runSteps(t, admin, []step{
		{[]string{"CLIENT", "KILL", "USER", "nobody"}, "(error) ERR No such user 'nobody'"},
		{[]string{"CLIENT", "KILL", "USER", "app"}, "(integer) 0"},
	})
}

// TestACLRequirePass: requirepass is the default user's password; CONFIG
// SET requirepass changes it through the state; CONFIG GET reports it;
// HELLO AUTH and AUTH with one argument.
func TestACLRequirePass(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.RequirePass = "s3cret" })
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"PING"}, "(error) NOAUTH Authentication required."},
		{[]string{"AUTH", "wrong"}, "(error) WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"HELLO", "3", "AUTH", "default", "s3cret"}, `map{"server": "redis", "version": "7.2.4", "proto": (integer) 3, "id": (integer) 1, "mode": "standalone", "role": "master", "modules": []}`},
		{[]string{"ACL", "GETUSER", "default"}, `map{"flags": set{"on", "sanitize-payload"}, "passwords": ["` + hashHex("s3cret") + `"], "commands": "+@all", "keys": "~*", "channels": "&*", "selectors": []}`},
		{[]string{"CONFIG", "GET", "requirepass"}, `map{"requirepass": "s3cret"}`},
		{[]string{"CONFIG", "SET", "requirepass", "other"}, "+OK"},
		{[]string{"CONFIG", "GET", "requirepass"}, `map{"requirepass": "other"}`},
	})
	d := dial(t, addr)
	runSteps(t, d, []step{
		{[]string{"AUTH", "s3cret"}, "(error) WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"AUTH", "other"}, "+OK"},
		{[]string{"CONFIG", "SET", "requirepass", ""}, "+OK"},
	})
	e := dial(t, addr)
	runSteps(t, e, []step{{[]string{"PING"}, "+PONG"}})
}

// hashHex is a password's SHA-256 in hex, as ACL GETUSER shows it.
func hashHex(p string) string {
	return aclHash(p)
}

// TestACLFileLoadSave: ACL SAVE writes the users to the aclfile, ACL LOAD
// replaces them (disconnecting users it removes), and an aclfile's users
// are loaded at start-up.
func TestACLFileLoadSave(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users.acl")
	if err := os.WriteFile(file, []byte("user reader on #"+aclHash("r")+" ~* +@read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, addr := startTestServer(t, func(c *config.Config) { c.ACLFile = file })
	admin := dial(t, addr)
	runSteps(t, admin, []step{
		{[]string{"ACL", "USERS"}, `["default", "reader"]`},
		{[]string{"ACL", "SETUSER", "writer", "on", ">w", "~*", "+@write"}, "+OK"},
		{[]string{"ACL", "SAVE"}, "+OK"},
	})
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), "user writer on sanitize-payload #"+aclHash("w")+" ~* resetchannels -@all +@write\n") {
		t.Errorf("aclfile after SAVE:\n%s", data)
	}
	w := dial(t, addr)
	runSteps(t, w, []step{{[]string{"AUTH", "writer", "w"}, "+OK"}})
	os.WriteFile(file, []byte("user reader on nopass ~* +@read\n"), 0o600)
	runSteps(t, admin, []step{
		{[]string{"ACL", "LOAD"}, "+OK"},
		{[]string{"ACL", "USERS"}, `["default", "reader"]`},
	})
	// ACL LOAD removed writer: its connection is closed.
	testutil.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if _, err := w.Do("PING"); err == nil {
			return errors.New("writer's connection still open after ACL LOAD removed it")
		}
		return nil
	})
	os.WriteFile(file, []byte("user reader on bogus\n"), 0o600)
	v, _ := admin.Do("ACL", "LOAD")
	if !strings.Contains(v.String(), "users.acl:1: Syntax error. WARNING: ACL errors detected") {
		t.Errorf("ACL LOAD of a bad file = %s", v)
	}
}

// aclHash is acl.HashPassword.
func aclHash(p string) string { return acl.HashPassword(p) }

// TestACLCheckHotPath: for a "+@all ~*" user (the default) the dispatcher's
// check allocates nothing and calls no engine check; a restricted user's
// check is still exact.
func TestACLCheckHotPath(t *testing.T) {
	srv, _ := startTestServer(t, nil)
	c := &Client{srv: srv}
	c.setUser("default")
	cmd := srv.cmds.get("xadd")
	args := [][]byte{[]byte("XADD"), []byte("orders"), []byte("*"), []byte("f"), []byte("v")}
	if d := srv.aclCheck(c, cmd, args); d != nil {
		t.Fatalf("default user denied: %+v", d)
	}
	if n := testing.AllocsPerRun(1000, func() { srv.aclCheck(c, cmd, args) }); n != 0 {
		t.Errorf("aclCheck for +@all ~* allocates %v times per call", n)
	}
	if !c.acl.all {
		t.Error("the default user is not recognised as unrestricted")
	}
	for _, rules := range [][]string{{"on", "~*", "+@all", "-xdel"}, {"on", "%R~*", "+@all"}, {"on", "~*", "+@stream"}, {"on", "~a*", "+@all"}} {
		users := srv.aclNow().users.Clone()
		if err := users.SetUser("u", rules); err != nil {
			t.Fatal(err)
		}
		if allowsAll(users.Get("u")) {
			t.Errorf("%v counted as unrestricted", rules)
		}
	}
}

// TestACLDeleteOwnUser: a client deleting its own user gets the reply, then
// its connection closes (Redis's CLIENT_CLOSE_AFTER_COMMAND); other
// connections of the user close at once.
func TestACLDeleteOwnUser(t *testing.T) {
	_, addr := startTestServer(t, nil)
	runSteps(t, dial(t, addr), []step{{[]string{"ACL", "SETUSER", "adm", "on", ">pw", "~*", "+@all"}, "+OK"}})
	c, other := dial(t, addr), dial(t, addr)
	runSteps(t, c, []step{{[]string{"AUTH", "adm", "pw"}, "+OK"}})
	runSteps(t, other, []step{{[]string{"AUTH", "adm", "pw"}, "+OK"}})
	runSteps(t, c, []step{{[]string{"ACL", "DELUSER", "adm"}, "(integer) 1"}})
	if v, err := c.Receive(5 * time.Second); err == nil {
		t.Fatalf("after deleting its own user the connection got %s, want it closed", v)
	}
	if v, err := other.Do("PING"); err == nil {
		t.Fatalf("the deleted user's other connection answered %s", v)
	}
}

// BenchmarkACLCheck is the dispatcher's check of XADD for a "+@all ~*"
// user (cached: no engine call) and for a user with key patterns.
func BenchmarkACLCheck(b *testing.B) {
	srv, _ := startTestServer(b, nil)
	cmd := srv.cmds.get("xadd")
	args := [][]byte{[]byte("XADD"), []byte("orders:1"), []byte("*"), []byte("f"), []byte("v")}
	for _, u := range []struct {
		name  string
		rules []string
	}{{"default", nil}, {"restricted", []string{"on", "~orders*", "%R~audit*", "+@stream", "+@connection"}}} {
		if u.rules != nil {
			users := srv.aclNow().users.Clone()
			if err := users.SetUser(u.name, u.rules); err != nil {
				b.Fatal(err)
			}
			srv.acl.view.Store(&aclView{ver: 1 << 40, users: users, nobody: srv.aclNow().nobody})
		}
		c := &Client{srv: srv}
		c.setUser(u.name)
		b.Run(u.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if d := srv.aclCheck(c, cmd, args); d != nil {
					b.Fatal(d)
				}
			}
		})
	}
}
