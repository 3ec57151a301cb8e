package server

import "strings"

// Key access for the ACL key rules (%R~ / %W~ / ~): each command's key
// specs' flags as Redis 7.2 defines them (COMMAND INFO's key_specs), one
// entry per spec in key order (a command's keys past the last spec take
// the last spec's flags). Redis's ACLSelectorCheckKey needs read
// permission for ACCESS and write permission for INSERT, DELETE or
// UPDATE; a spec with none of them (EXISTS, TYPE, XLEN: "RO" alone)
// needs neither, so any key pattern allows it.
var keySpecFlags = map[string][]string{
	"del":                   {"RM delete"},
	"unlink":                {"RM delete"},
	"exists":                {"RO"},
	"type":                  {"RO"},
	"rename":                {"RW access delete", "OW update"},
	"renamenx":              {"RW access delete", "OW insert"},
	"expire":                {"RW update"},
	"pexpire":               {"RW update"},
	"expireat":              {"RW update"},
	"pexpireat":             {"RW update"},
	"persist":               {"RW update"},
	"ttl":                   {"RO access"},
	"pttl":                  {"RO access"},
	"watch":                 {"RO"},
	"xadd":                  {"RW update"},
	"xtrim":                 {"RW delete"},
	"xdel":                  {"RW delete"},
	"xsetid":                {"RW update"},
	"xrange":                {"RO access"},
	"xrevrange":             {"RO access"},
	"xlen":                  {"RO"},
	"xack":                  {"RW update"},
	"xclaim":                {"RW update"},
	"xautoclaim":            {"RW delete"},
	"xpending":              {"RO access"},
	"xread":                 {"RO access"},
	"xreadgroup":            {"RW access update"}, // Redis 7.2 (7.0 said RO access)
	"xgroup|create":         {"RW insert"},
	"xgroup|createconsumer": {"RW insert"},
	"xgroup|delconsumer":    {"RW delete"},
	"xgroup|destroy":        {"RW delete"},
	"xgroup|setid":          {"RW update"},
	"xinfo|stream":          {"RO access"},
	"xinfo|groups":          {"RO access"},
	"xinfo|consumers":       {"RO access"},
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
// and write for a command keySpecFlags does not describe: the strictest).
func (c *Command) keyAccessOf(i int) keyAccess {
	if len(c.keyAccess) == 0 {
		return keyAccess{read: true, write: true}
	}
	return c.keyAccess[min(i, len(c.keyAccess)-1)]
}

// hasKeys reports whether the command names keys (legacy positions or
// movable keys).
func (c *Command) hasKeys() bool { return c.FirstKey > 0 || c.KeysFrom != nil }
