package server

import (
	"streamd/replication/wire"
	"streamd/server/xargs"
	"streamd/server/xreply"
)

// xinfoHelp is XINFO HELP's text (Redis 7.0 xinfoCommand) between the
// header and the HELP lines helpReply adds.
var xinfoHelp = []string{
	"CONSUMERS <key> <groupname>",
	"    Show consumers of <groupname>.",
	"GROUPS <key>",
	"    Show the stream consumer groups.",
	"STREAM <key> [FULL [COUNT <count>]",
	"    Show information about the stream.",
}

// cmdXINFOSTREAM plans XINFO STREAM key [FULL [COUNT n]] (arguments:
// xargs.XInfoStream). Redis looks the key up ("ERR no such key") before it
// parses FULL/COUNT.
func cmdXINFOSTREAM(c *Client, args [][]byte) (Plan, Reply) {
	op, r := xargs.XInfoStream(args)
	if r != nil {
		return keyFirst(c, args[2], errNoSuchKey, r)
	}
	op.DB = c.DB()
	full := op.Full
	return Plan{Op: op, Format: xreply.StreamInfoResult(full, c.srv.defaultAckLevel())}, nil
}

// cmdXINFOGROUPS plans XINFO GROUPS key.
func cmdXINFOGROUPS(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.XInfoGroups{Base: keyBase(c, args[2])}, Format: xreply.GroupsResult}, nil
}

// cmdXINFOCONSUMERS plans XINFO CONSUMERS key group.
func cmdXINFOCONSUMERS(c *Client, args [][]byte) (Plan, Reply) {
	op := wire.XInfoConsumers{Base: keyBase(c, args[2]), Group: string(args[3])}
	return Plan{Op: op, Format: xreply.ConsumersResult}, nil
}
