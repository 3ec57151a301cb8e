package server

import (
	"strings"
	"testing"

	"streamd/internal/testutil"
)

// TestKeySpecFlags: every command with keys has its key specs' flags (an
// unknown one would be checked as read+write), none is listed that has no
// keys, and they are the real redis-server's COMMAND INFO key specs but
// for XREADGROUP, which Redis 7.2 made read+write.
func TestKeySpecFlags(t *testing.T) {
	srv, _ := startTestServer(t, nil)
	keyed := map[string][]string{}
	for _, c := range srv.cmds.sorted {
		for _, x := range append([]*Command{c}, c.Subcommands...) {
			flags := keySpecFlags(x.Name)
			if x.hasKeys() != (len(flags) > 0) {
				t.Errorf("%s: has keys %v, key specs %q", x.Name, x.hasKeys(), flags)
			}
			if len(flags) > 0 {
				keyed[x.Name] = flags
			}
		}
	}
	for name := range keySpecOverrides {
		if keyed[name] == nil {
			t.Errorf("keySpecOverrides lists %s, which is not a keyed command", name)
		}
	}
	for _, c := range []struct {
		flags       string
		read, write bool
	}{{"RO", false, false}, {"RO access", true, false}, {"RW update", false, true}, {"RW access update", true, true}, {"RM delete", false, true}, {"OW insert", false, true}} {
		if a := specAccess(c.flags); a.read != c.read || a.write != c.write {
			t.Errorf("specAccess(%q) = %+v", c.flags, a)
		}
	}

	testutil.RequireTool(t, "redis-server")
	r := dial(t, startRedis(t))
	for name, want := range keyed {
		if name == "xreadgroup" || isRedis8Only(name) || streamdSubcommands[name] {
			continue // not the 7.0 reference's key specs (Redis 7.2, Redis 8, streamd's own)
		}
		top, sub, _ := strings.Cut(name, "|")
		v, err := r.Do("COMMAND", "INFO", top)
		if err != nil || len(v.Elems) != 1 || len(v.Elems[0].Elems) < 10 {
			t.Fatalf("COMMAND INFO %s: %v %v", top, v, err)
		}
		info := v.Elems[0]
		if sub != "" {
			found := false
			for _, s := range info.Elems[9].Elems {
				if s.Elems[0].Str == name {
					info, found = s, true
				}
			}
			if !found {
				t.Errorf("redis has no %s", name)
				continue
			}
		}
		var got []string
		for _, spec := range info.Elems[8].Elems {
			for i := 0; i+1 < len(spec.Elems); i += 2 {
				if spec.Elems[i].Str == "flags" {
					var fs []string
					for _, f := range spec.Elems[i+1].Elems {
						fs = append(fs, f.Str)
					}
					got = append(got, strings.Join(fs, " "))
				}
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: redis key specs flags %q, keySpecFlags %q", name, got, want)
		}
	}
}

// TestCommandCategoriesMatchRedis: every command and subcommand streamd
// has that the reference redis-server also has shows the same arity and
// ACL categories in COMMAND INFO (the catalog the ACL rules resolve
// against). Flags are not compared: a few follow Redis 7.2, not the 7.0
// reference.
func TestCommandCategoriesMatchRedis(t *testing.T) {
	testutil.RequireTool(t, "redis-server")
	srv, _ := startTestServer(t, nil)
	r := dial(t, startRedis(t))
	strs := func(v Value) string {
		var out []string
		for _, e := range v.Elems {
			out = append(out, e.Str)
		}
		return strings.Join(out, " ")
	}
	compared := 0
	for _, c := range srv.cmds.sorted {
		v, err := r.Do("COMMAND", "INFO", c.Name)
		if err != nil || len(v.Elems) != 1 {
			t.Fatalf("COMMAND INFO %s: %v %v", c.Name, v, err)
		}
		if v.Elems[0].Nil || len(v.Elems[0].Elems) < 10 {
			continue // not a Redis command (RAFT)
		}
		theirs := map[string]Value{c.Name: v.Elems[0]}
		for _, s := range v.Elems[0].Elems[9].Elems {
			theirs[s.Elems[0].Str] = s
		}
		for _, x := range append([]*Command{c}, c.Subcommands...) {
			info, ok := theirs[x.Name]
			if !ok {
				continue // newer than the reference (CLIENT NO-TOUCH on 7.0) or streamd's own
			}
			compared++
			if info.Elems[1].Int != int64(x.Arity) {
				t.Errorf("%s: arity %d, redis %d", x.Name, x.Arity, info.Elems[1].Int)
			}
			if got, want := strings.Join(x.ACL, " "), strs(info.Elems[6]); got != want {
				t.Errorf("%s: ACL categories %q, redis %q", x.Name, got, want)
			}
		}
	}
	if compared < 80 {
		t.Errorf("only %d commands compared", compared)
	}
}
