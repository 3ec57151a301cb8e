package server

import (
	"strings"
	"testing"
)

// redis8Only are the command table's rows from Redis 8 (issue #14): the
// reference redis-server 7.0 does not know them, so the tests that compare
// COMMAND INFO/DOCS, key specs and ACL CAT with it skip them, and
// TestRedis8CommandInfo checks them against the spec
// (redis8-streams.md) instead.
var redis8Only = map[string]redis8Row{
	// §1.1.
	"xdelex":  {arity: -5, flags: "write fast", acl: "@write @stream @fast", since: "8.2.0", keySpec: "RW delete"},
	"xackdel": {arity: -6, flags: "write fast", acl: "@write @stream @fast", since: "8.2.0", keySpec: "RW update delete"},
	// §3.1.
	"xcfgset": {arity: -2, flags: "write fast", acl: "@write @stream @fast", since: "8.6.0", keySpec: "RW update"},
	// §4.1.
	"xnack":       {arity: -7, flags: "write fast", acl: "@write @stream @fast", since: "8.8.0", keySpec: "RW update"},
	"xidmprecord": {arity: 5, flags: "write denyoom fast", acl: "@write @stream @fast", since: "8.6.2", keySpec: "RW update"},
}

// redis8Row is what the spec says of a Redis 8 command's COMMAND INFO/DOCS
// and key specs.
type redis8Row struct {
	arity                      int
	flags, acl, since, keySpec string
}

func isRedis8Only(name string) bool { _, ok := redis8Only[name]; return ok }

// TestRedis8CommandInfo checks the Redis 8 rows of the command table, and
// the key spec flags the ACL key rules use, against the spec.
func TestRedis8CommandInfo(t *testing.T) {
	srv, _ := startTestServer(t, nil)
	for name, want := range redis8Only {
		cmd := srv.cmds.byName[name]
		if cmd == nil {
			t.Errorf("%s: not in the command table", name)
			continue
		}
		if cmd.Arity != want.arity || strings.Join(cmd.Flags, " ") != want.flags ||
			strings.Join(cmd.ACL, " ") != want.acl || cmd.Since != want.since {
			t.Errorf("%s: arity %d flags %q acl %q since %q, want %+v", name, cmd.Arity, cmd.Flags, cmd.ACL, cmd.Since, want)
		}
		if cmd.FirstKey != 1 || cmd.LastKey != 1 || cmd.Step != 1 {
			t.Errorf("%s: key positions %d %d %d", name, cmd.FirstKey, cmd.LastKey, cmd.Step)
		}
		if got := keySpecFlags(name); strings.Join(got, ",") != want.keySpec {
			t.Errorf("%s: key spec flags %q, want %q", name, got, want.keySpec)
		}
		// COMMAND INFO's key spec.
		if specs := describe(cmd).Specs(); len(specs) != 1 || strings.Join(specs[0].Flags, " ") != want.keySpec {
			t.Errorf("%s: COMMAND INFO key specs %+v, want flags %q", name, specs, want.keySpec)
		}
	}
}
