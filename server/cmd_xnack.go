package server

import (
	"streamd/server/xargs"
	"streamd/server/xreply"
)

// xnackCommand is the row of XNACK (Redis 8.8): write, fast, one key
// (read-write update).
func xnackCommand() *Command {
	return keyCommand("xnack", -7, []string{"write", "fast"},
		[]string{"@write", "@stream", "@fast"},
		"Returns pending messages to the consumer group so that they can be redelivered, "+
			"without waiting for them to become idle.",
		"8.8.0", cmdXNACK)
}

// cmdXNACK plans XNACK key group SILENT|FAIL|FATAL IDS numids id…
// [RETRYCOUNT n] [FORCE] (arguments: xargs.XNack). As xnackCommand, a
// missing key or group is NOGROUP before any argument error.
func cmdXNACK(c *Client, args [][]byte) (Plan, Reply) {
	op, r := xargs.XNack(args)
	if r != nil {
		return groupFirst(c, args[1], args[2],
			errNoKeyOrGroup(args[1], args[2]), errNoKeyOrGroup(args[1], args[2]), r)
	}
	op.DB = c.DB()
	return Plan{Op: op, Format: xreply.Int}, nil
}
