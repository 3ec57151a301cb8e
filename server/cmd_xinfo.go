package server

import (
	"streamd/replication/wire"
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

// cmdXINFOSTREAM plans XINFO STREAM key [FULL [COUNT n]]. Redis looks the
// key up ("ERR no such key") before it parses FULL/COUNT; a negative COUNT
// is the default 10 and COUNT 0 means every entry.
func cmdXINFOSTREAM(c *Client, args [][]byte) (*Plan, Reply) {
	op := wire.XInfoStream{Base: keyBase(c, args[2]), Count: 10}
	var argErr Reply
	switch opts := args[3:]; len(opts) {
	case 0:
	case 1, 3:
		if !isOpt(opts[0], "FULL") {
			argErr = subcommandSyntaxError("XINFO", args[1])
			break
		}
		op.Full = true
		if len(opts) == 3 {
			if !isOpt(opts[1], "COUNT") {
				argErr = subcommandSyntaxError("XINFO", args[1])
				break
			}
			n, r := intArg(opts[2])
			if r != nil {
				argErr = r
				break
			}
			if n >= 0 {
				op.Count = n
			}
		}
	default:
		argErr = subcommandSyntaxError("XINFO", args[1])
	}
	if argErr != nil {
		return keyFirst(c, args[2], errNoSuchKey, argErr)
	}
	return &Plan{Op: op, Format: xreply.StreamInfoResult(op.Full)}, nil
}

// cmdXINFOGROUPS plans XINFO GROUPS key.
func cmdXINFOGROUPS(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.XInfoGroups{Base: keyBase(c, args[2])}, Format: xreply.GroupsResult}, nil
}

// cmdXINFOCONSUMERS plans XINFO CONSUMERS key group.
func cmdXINFOCONSUMERS(c *Client, args [][]byte) (*Plan, Reply) {
	op := wire.XInfoConsumers{Base: keyBase(c, args[2]), Group: string(args[3])}
	return &Plan{Op: op, Format: xreply.ConsumersResult}, nil
}
