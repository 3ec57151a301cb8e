package server

import (
	"strings"

	"streamd/server/cmdinfo"
)

// Key access for the ACL key rules (%R~ / %W~ / ~): each command's key
// specs' flags as Redis 7.2 defines them (COMMAND INFO's key_specs, from
// redis7.json; keySpecOverrides where 7.2 differs from the 7.0 that data
// was taken from; Redis 8's for its commands), one entry per spec in key order (a command's keys past
// the last spec take the last spec's flags). Redis's ACLSelectorCheckKey
// needs read permission for ACCESS and write permission for INSERT, DELETE
// or UPDATE; a spec with none of them (EXISTS, TYPE, XLEN: "RO" alone)
// needs neither, so any key pattern allows it.
var keySpecOverrides = map[string][]string{
	"xreadgroup": {"RW access update"}, // Redis 7.2 (7.0 said RO access)
	"xdelex":     {"RW delete"},        // Redis 8.2
	"xackdel":    {"RW update delete"}, // Redis 8.2
	// Redis 8.6 (not in the 7.0 data).
	"xcfgset":     {"RW update"},
	"xidmprecord": {"RW update"},
	"xnack":       {"RW update"}, // Redis 8.8 (not in the 7.0 data)
	// streamd's XGROUP CONFIG (issue #15): the stream, then the
	// DEADLETTER stream the claiming commands append to.
	"xgroup|config": {"RW update", "RW insert"},
}

// keySpecFlags returns the flags of the command's key specs (a full name:
// "xgroup|create"), nil for a command without key specs.
func keySpecFlags(name string) []string {
	if f, ok := keySpecOverrides[name]; ok {
		return f
	}
	return cmdinfo.KeySpecFlags(name)
}

// keyAccess is the ACL permission one key spec needs.
type keyAccess struct{ read, write bool }

// specAccess maps a key spec's flags to the permissions Redis's ACL code
// asks for.
func specAccess(flags string) keyAccess {
	var a keyAccess
	for _, f := range strings.Fields(strings.ToLower(flags)) {
		switch f {
		case "access":
			a.read = true
		case "insert", "delete", "update":
			a.write = true
		}
	}
	return a
}

// keyAccessOf returns the permission the command's i-th key needs (read
// and write for a command without key specs: the strictest).
func (c *Command) keyAccessOf(i int) keyAccess {
	if len(c.keyAccess) == 0 {
		return keyAccess{read: true, write: true}
	}
	return c.keyAccess[min(i, len(c.keyAccess)-1)]
}

// hasKeys reports whether the command names keys (legacy positions or
// movable keys).
func (c *Command) hasKeys() bool { return c.FirstKey > 0 || c.KeysFrom != nil }
