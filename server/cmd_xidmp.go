package server

import (
	"streamd/server/xargs"
	"streamd/server/xreply"
)

// Redis 8.6's idempotent production: XADD's IDMP/IDMPAUTO are parsed with
// XADD (xargs.XAdd); these are its configuration and recording commands.

// cmdXCFGSET plans XCFGSET key [IDMP-DURATION s] [IDMP-MAXSIZE n] (and
// issue #15's retention options, xargs/retention.go). Redis
// looks the key up before it parses the options, so "no such key" wins
// over their errors.
func cmdXCFGSET(c *Client, args [][]byte) (Plan, Reply) {
	op, r := xargs.XCfgSet(args)
	if r != nil {
		return keyFirst(c, args[1], errNoSuchKey, r)
	}
	op.DB = c.DB()
	return Plan{Op: op, Format: xreply.OK}, nil
}

// cmdXIDMPRECORD plans XIDMPRECORD key pid iid stream-id (the command
// Redis's AOF rewrite writes to restore an iid).
func cmdXIDMPRECORD(c *Client, args [][]byte) (Plan, Reply) {
	op, r := xargs.XIDMPRecord(args)
	if r != nil {
		return Plan{}, r
	}
	op.DB = c.DB()
	return Plan{Op: op, Format: xreply.OK}, nil
}

// xidmpCommands are the rows of XCFGSET and XIDMPRECORD (Redis 8.6).
func xidmpCommands() []*Command {
	return []*Command{
		keyCommand("xcfgset", -2, []string{"write", "fast"},
			[]string{"@write", "@stream", "@fast"},
			"Sets the IDMP configuration parameters for a stream", "8.6.0", cmdXCFGSET),
		keyCommand("xidmprecord", 5, []string{"write", "denyoom", "fast"},
			[]string{"@write", "@stream", "@fast"},
			"An internal command for recording an idempotent ID of a stream entry", "8.6.2", cmdXIDMPRECORD),
	}
}
