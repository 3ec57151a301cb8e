package server

import (
	"streamd/replication/wire"
	"streamd/server/xargs"
	"streamd/server/xreply"
)

// groupCommand is a row for an XGROUP/XINFO subcommand whose key is args[2].
func groupCommand(name string, arity int, flags, acl []string, summary, since string,
	planner func(*Client, [][]byte) (Plan, Reply)) *Command {
	return &Command{
		Name: name, Arity: arity, Flags: flags,
		FirstKey: 2, LastKey: 2, Step: 1,
		ACL: acl, Summary: summary, Since: since, Group: "stream",
		Planner: planner,
	}
}

// helpCommand is a container's HELP row: no keys, allowed while loading and
// on a stale replica. It replies status lines as Redis's addReplyHelp: the
// "Subcommands are:" header, lines, then the HELP lines (see helpReply).
func helpCommand(name, container string, lines []string) *Command {
	return &Command{
		Name: name, Arity: 2, Flags: []string{"loading", "stale"},
		ACL:     []string{"@stream", "@slow"},
		Summary: "Show helpful text about the different subcommands", Since: "5.0.0", Group: "stream",
		Handler: func(*Client, [][]byte) Reply { return helpReply(container, lines...) },
	}
}

// xgroupHelp is XGROUP HELP's text (Redis 7.0 xgroupCommand) between the
// "Subcommands are:" header and the HELP lines helpReply adds.
var xgroupHelp = append([]string{
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
}, xgroupConfigHelp...)

// errXGroupNoKey is xgroupCommand's answer on a missing key. The engine
// answers it for a well-formed operation; planners use it when an argument
// error must wait for the state check (see keyFirst).
const errXGroupNoKey = ErrorReply("ERR The XGROUP subcommand requires the key to exist. " +
	"Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")

// errXGroupNoGroup is xgroupCommand's NOGROUP text.
func errXGroupNoGroup(key, group []byte) ErrorReply {
	return ErrorReply("NOGROUP No such consumer group '" + string(group) + "' for key name '" + string(key) + "'")
}

// cmdXGROUPCREATE plans XGROUP CREATE key group id|$ [MKSTREAM]
// [ENTRIESREAD n] (arguments: xargs.XGroupCreate); an ID or arity error
// waits for the key check unless MKSTREAM was given.
func cmdXGROUPCREATE(c *Client, args [][]byte) (Plan, Reply) {
	op, early, late := xargs.XGroupCreate(args)
	switch {
	case early != nil:
		return Plan{}, early
	case late != nil:
		return keyFirst(c, args[2], errXGroupNoKey, late)
	}
	op.DB = c.DB()
	return Plan{Op: op, Format: xreply.OK}, nil
}

// cmdXGROUPSETID plans XGROUP SETID key group id|$ [ENTRIESREAD n]
// (arguments: xargs.XGroupSetID); an ID or arity error waits for Redis's
// key and group checks.
func cmdXGROUPSETID(c *Client, args [][]byte) (Plan, Reply) {
	op, early, late := xargs.XGroupSetID(args)
	switch {
	case early != nil:
		return Plan{}, early
	case late != nil:
		return groupFirst(c, args[2], args[3], errXGroupNoKey, errXGroupNoGroup(args[2], args[3]), late)
	}
	op.DB = c.DB()
	return Plan{Op: op, Format: xreply.OK}, nil
}

// cmdXGROUPDESTROY plans XGROUP DESTROY key group: 1 destroyed, 0 absent.
func cmdXGROUPDESTROY(c *Client, args [][]byte) (Plan, Reply) {
	op := wire.XGroupDestroy{Base: keyBase(c, args[2]), Group: string(args[3])}
	return Plan{Op: op, Format: xreply.Int}, nil
}

// cmdXGROUPCREATECONSUMER plans XGROUP CREATECONSUMER key group consumer:
// 1 created, 0 already there.
func cmdXGROUPCREATECONSUMER(c *Client, args [][]byte) (Plan, Reply) {
	op := wire.XGroupCreateConsumer{Base: keyBase(c, args[2]), Group: string(args[3]), Consumer: string(args[4])}
	return Plan{Op: op, Format: xreply.Int}, nil
}

// cmdXGROUPDELCONSUMER plans XGROUP DELCONSUMER key group consumer: the
// number of pending entries the consumer had.
func cmdXGROUPDELCONSUMER(c *Client, args [][]byte) (Plan, Reply) {
	op := wire.XGroupDelConsumer{Base: keyBase(c, args[2]), Group: string(args[3]), Consumer: string(args[4])}
	return Plan{Op: op, Format: xreply.Int}, nil
}
