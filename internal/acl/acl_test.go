package acl

import (
	"reflect"
	"strings"
	"testing"
)

// testCatalog is a small catalog: the stream commands, some strings and
// hashes, and containers with subcommands.
func testCatalog() *Catalog {
	return NewCatalog([]Command{
		{Name: "get", Categories: []string{"read", "string", "fast"}},
		{Name: "getex", Categories: []string{"write", "string", "fast"}},
		{Name: "set", Categories: []string{"write", "string", "slow"}},
		{Name: "mget", Categories: []string{"read", "string", "fast"}},
		{Name: "lmove", Categories: []string{"write", "list", "slow"}},
		{Name: "exists", Categories: []string{"keyspace", "read", "fast"}},
		{Name: "hget", Categories: []string{"read", "hash", "fast"}},
		{Name: "hset", Categories: []string{"write", "hash", "fast"}},
		{Name: "select", Categories: []string{"fast", "connection"}},
		{Name: "debug", Categories: []string{"admin", "slow", "dangerous"}},
		{Name: "auth", Categories: []string{"fast", "connection"}, NoAuth: true},
		{Name: "xadd", Categories: []string{"write", "stream", "fast"}},
		{Name: "xdel", Categories: []string{"write", "stream", "fast"}},
		{Name: "xrange", Categories: []string{"read", "stream", "slow"}},
		{Name: "xread", Categories: []string{"read", "stream", "slow", "blocking"}},
		{Name: "xinfo", Categories: []string{"slow"}},
		{Name: "xinfo|stream", Categories: []string{"read", "stream", "slow"}},
		{Name: "xinfo|groups", Categories: []string{"read", "stream", "slow"}},
		{Name: "xinfo|help", Categories: []string{"stream", "slow"}},
		{Name: "config", Categories: []string{"slow"}},
		{Name: "config|get", Categories: []string{"admin", "slow", "dangerous"}},
		{Name: "config|set", Categories: []string{"admin", "slow", "dangerous"}},
		{Name: "client", Categories: []string{"slow"}},
		{Name: "client|list", Categories: []string{"admin", "slow", "dangerous", "connection"}},
		{Name: "acl", Categories: []string{"slow"}},
		{Name: "acl|list", Categories: []string{"admin", "slow", "dangerous"}},
	})
}

func setUser(t *testing.T, us *Users, name string, rules ...string) *User {
	t.Helper()
	if err := us.SetUser(name, rules); err != nil {
		t.Fatalf("SETUSER %s %v: %v", name, rules, err)
	}
	return us.Get(name)
}

// TestCommandRulesDescription follows Redis 7.2's "ACL GETUSER provides
// correct results" (tests/unit/acl.tcl) and more mixed rule sets.
func TestCommandRulesDescription(t *testing.T) {
	us := NewUsers(testCatalog())
	for _, tc := range []struct{ rules, want string }{
		{"+@all -@hash -@slow +hget", "+@all -@hash -@slow +hget"},
		{"-@hash", "+@all -@slow +hget -@hash"},
		{"+@hash", "+@all -@slow +hget +@hash"},
		{"-@all", "-@all"},
		{"-@string -@slow +@all", "+@all"},
		{"-@all +@HASH +@hash +@HaSh", "-@all +@hash"},
		{"-@all +HGET +hget +hGeT", "-@all +hget"},
		{"-@all +@hash +@slow +@set +@set +@slow +@hash", "-@all +@set +@slow +@hash"},
		{"-@all +hget -hset +hset -hget", "-@all +hset -hget"},
		{"-@all +client|list +client|list +config|get +config +acl|list -acl", "-@all +client|list +config -acl"},
		{"-@all +select|0 +select|0 +debug|segfault +debug", "-@all +select|0 +debug"},
		{"-@all -@dangerous", "-@all -@dangerous"},
		{"-@all +config +config|get -config|set +config", "-@all +config"},
		{"+@all -xadd", "+@all -xadd"},
		{"-@all +@stream -xdel", "-@all +@stream -xdel"},
		{"-@all +xinfo|stream", "-@all +xinfo|stream"},
		{"-@all +XINFO|Stream +xinfo", "-@all +xinfo"},
		{"-@all +getex +get", "-@all +getex +get"},
		{"nocommands +get allcommands", "+@all"},
		{"allcommands -get nocommands +set", "-@all +set"},
	} {
		u := setUser(t, us, "adv", strings.Fields(tc.rules)...)
		if got := u.GetUser()[2].Value; got != tc.want {
			t.Errorf("after %q: commands %q, want %q", tc.rules, got, tc.want)
		}
	}
}

func TestDefaultUser(t *testing.T) {
	us := NewUsers(testCatalog())
	if got := us.List(); !reflect.DeepEqual(got, []string{"user default on nopass sanitize-payload ~* &* +@all"}) {
		t.Fatalf("List = %q", got)
	}
	d := us.Get("default")
	if !d.Enabled() || !d.NoPass() || !d.CheckPassword("anything") {
		t.Fatal("default user must be on and nopass")
	}
	if den := d.Check("xadd", "", []KeyRef{{Key: []byte("k"), Write: true}}); den != nil {
		t.Fatalf("default denied: %+v", den)
	}
}

func TestCheckAndDryRun(t *testing.T) {
	us := NewUsers(testCatalog())
	u := setUser(t, us, "u", "on", "nopass", "-@all", "+get", "%R~r*", "(+set ~w*)")
	for _, tc := range []struct {
		cmd, sub string
		keys     []KeyRef
		dry      string
		noperm   string
	}{
		{"set", "", []KeyRef{{Key: []byte("x"), Write: true}}, "User u has no permissions to access the 'x' key", "NOPERM No permissions to access a key"},
		{"get", "", []KeyRef{{Key: []byte("x"), Read: true}}, "User u has no permissions to access the 'x' key", "NOPERM No permissions to access a key"},
		{"get", "", []KeyRef{{Key: []byte("r1"), Read: true}}, "", ""},
		{"set", "", []KeyRef{{Key: []byte("w1"), Write: true}}, "", ""},
		{"xadd", "", []KeyRef{{Key: []byte("k"), Write: true}}, "User u has no permissions to run the 'xadd' command", "NOPERM User u has no permissions to run the 'xadd' command"},
		{"xinfo", "stream", []KeyRef{{Key: []byte("k"), Read: true}}, "User u has no permissions to run the 'xinfo|stream' command", "NOPERM User u has no permissions to run the 'xinfo|stream' command"},
		{"auth", "", nil, "", ""},
	} {
		d := u.Check(tc.cmd, tc.sub, tc.keys)
		if tc.dry == "" {
			if d != nil {
				t.Errorf("%s %s: denied %+v", tc.cmd, tc.sub, d)
			}
			continue
		}
		if d == nil {
			t.Errorf("%s %s: allowed", tc.cmd, tc.sub)
			continue
		}
		if d.DryRun("u") != tc.dry || d.NoPerm("u") != tc.noperm {
			t.Errorf("%s %s: %q / %q", tc.cmd, tc.sub, d.DryRun("u"), d.NoPerm("u"))
		}
	}
}
