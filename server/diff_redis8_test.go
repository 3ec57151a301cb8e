package server

import "strings"

// The Redis 8 commands and reply fields streamd has that the 7.0 reference
// redis-server lacks: the differential and introspection tests leave them
// out of the comparison (each a counted, deliberate difference), and their
// own tests (cmd_xidmp_test.go) check them against the spec instead.

// xinfo86Fields are XINFO STREAM's idempotent-production fields (Redis 8.6).
var xinfo86Fields = map[string]bool{"idmp-duration": true, "idmp-maxsize": true, "pids-tracked": true,
	"iids-tracked": true, "iids-added": true, "iids-duplicates": true,
	"acklevel": true} // issue #15's ACKLEVEL (no Redis has it)

// dropRedis8 removes from streamd's reply v to cmd (upper-cased name) what
// only Redis 8 has: XINFO STREAM's IDMP fields, and the Redis 8 commands
// from ACL CAT's list. It returns the reasons for what it removed.
func dropRedis8(cmd []string, v Value) (Value, []string) {
	var reasons []string
	if cmd[0] == "XINFO" || cmd[0] == "AWAIT" || cmd[0] == "EXEC" {
		if nv, dropped := dropXinfoFields(v, xinfo86Fields); dropped {
			v = nv
			reasons = append(reasons, "XINFO STREAM 8.6 fields (idmp-duration ... iids-duplicates) dropped from streamd's reply: the reference redis-server is 7.0")
		}
	}
	if cmd[0] == "ACL" && len(cmd) > 2 && strings.EqualFold(cmd[1], "CAT") && v.Kind == '*' {
		kept := v
		kept.Elems = nil
		for _, e := range v.Elems {
			if !isRedis8Only(e.Str) {
				kept.Elems = append(kept.Elems, e)
			}
		}
		if len(kept.Elems) != len(v.Elems) {
			v = kept
			reasons = append(reasons, "ACL CAT lists Redis 8 commands (XDELEX, XACKDEL, XCFGSET, XIDMPRECORD, ...) the 7.0 reference lacks")
		}
		kept.Elems = nil
		for _, e := range v.Elems {
			if !streamdSubcommands[e.Str] {
				kept.Elems = append(kept.Elems, e)
			}
		}
		if len(kept.Elems) != len(v.Elems) {
			v = kept
			reasons = append(reasons, "ACL CAT lists streamd's XGROUP CONFIG (issue #15), which Redis does not have")
		}
	}
	return v, reasons
}

// streamdSubcommands are subcommands only streamd has (no Redis release).
var streamdSubcommands = map[string]bool{"xgroup|config": true}
