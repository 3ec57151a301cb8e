package server

import (
	"streamd/replication/wire"
	"streamd/server/xreply"
	"streamd/streams"
)

// groupCommand is a row for an XGROUP/XINFO subcommand whose key is args[2].
func groupCommand(name string, arity int, flags, acl []string, summary, since string,
	planner func(*Client, [][]byte) (*Plan, Reply)) *Command {
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
var xgroupHelp = []string{
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
}

// Errors xgroupCommand answers from the keyspace before the subcommand runs.
// The engine answers them for a well-formed operation; planners use them
// when an argument error must wait for the state check (see keyFirst).
const (
	errXGroupNoKey = ErrorReply("ERR The XGROUP subcommand requires the key to exist. " +
		"Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
	errValueEntriesRead = ErrorReply("ERR value for ENTRIESREAD must be positive or -1")
)

// errXGroupNoGroup is xgroupCommand's NOGROUP text.
func errXGroupNoGroup(key, group []byte) ErrorReply {
	return ErrorReply("NOGROUP No such consumer group '" + string(group) + "' for key name '" + string(key) + "'")
}

// xgroupOptions is the option loop xgroupCommand runs from args[5] before it
// looks the key up: MKSTREAM (CREATE only) and ENTRIESREAD n (CREATE and
// SETID), repeatable; anything else is the subcommand syntax error.
func xgroupOptions(args [][]byte, create bool) (mkStream bool, entriesRead int64, r Reply) {
	entriesRead = -1
	for i := 5; i < len(args); {
		switch {
		case create && isOpt(args[i], "MKSTREAM"):
			mkStream = true
			i++
		case isOpt(args[i], "ENTRIESREAD") && i+1 < len(args):
			n, r := intArg(args[i+1])
			if r != nil {
				return false, 0, r
			}
			// -1 is SCG_INVALID_ENTRIES_READ: "unknown", accepted.
			if n < 0 && n != -1 {
				return false, 0, errValueEntriesRead
			}
			entriesRead = n
			i += 2
		default:
			return false, 0, subcommandSyntaxError("XGROUP", args[1])
		}
	}
	return mkStream, entriesRead, nil
}

// cmdXGROUPCREATE plans XGROUP CREATE key group id|$ [MKSTREAM]
// [ENTRIESREAD n]. Redis's order: options, then (without MKSTREAM) the
// key must exist, then at most 8 arguments, then the ID ("$" or strict).
func cmdXGROUPCREATE(c *Client, args [][]byte) (*Plan, Reply) {
	mk, entriesRead, r := xgroupOptions(args, true)
	if r != nil {
		return nil, r
	}
	op := wire.XGroupCreate{
		Base: keyBase(c, args[2]), Group: string(args[3]),
		MkStream: mk, EntriesRead: entriesRead,
	}
	var argErr Reply
	switch {
	case len(args) > 8:
		argErr = subcommandSyntaxError("XGROUP", args[1])
	case string(args[4]) == "$":
		op.Dollar = true
	default:
		op.ID, argErr = strictIDArg(args[4])
	}
	if argErr == nil {
		return &Plan{Op: op, Format: xreply.OK}, nil
	}
	if mk {
		return nil, argErr
	}
	return keyFirst(c, args[2], errXGroupNoKey, argErr)
}

// cmdXGROUPSETID plans XGROUP SETID key group id|$ [ENTRIESREAD n]. The ID
// is parsed as a range ID ("-" and "+" allowed, "(" not), after Redis has
// checked the key and the group.
func cmdXGROUPSETID(c *Client, args [][]byte) (*Plan, Reply) {
	_, entriesRead, r := xgroupOptions(args, false)
	if r != nil {
		return nil, r
	}
	op := wire.XGroupSetID{Base: keyBase(c, args[2]), Group: string(args[3]), EntriesRead: entriesRead}
	var argErr Reply
	switch {
	case len(args) != 5 && len(args) != 7:
		argErr = subcommandSyntaxError("XGROUP", args[1])
	case string(args[4]) == "$":
		op.Dollar = true
	default:
		id, err := streams.ParseID(args[4], 0)
		if err != nil {
			argErr = errInvalidID
		}
		op.ID = id
	}
	if argErr != nil {
		return groupFirst(c, args[2], args[3], errXGroupNoKey, errXGroupNoGroup(args[2], args[3]), argErr)
	}
	return &Plan{Op: op, Format: xreply.OK}, nil
}

// cmdXGROUPDESTROY plans XGROUP DESTROY key group: 1 destroyed, 0 absent.
func cmdXGROUPDESTROY(c *Client, args [][]byte) (*Plan, Reply) {
	op := wire.XGroupDestroy{Base: keyBase(c, args[2]), Group: string(args[3])}
	return &Plan{Op: op, Format: xreply.Int}, nil
}

// cmdXGROUPCREATECONSUMER plans XGROUP CREATECONSUMER key group consumer:
// 1 created, 0 already there.
func cmdXGROUPCREATECONSUMER(c *Client, args [][]byte) (*Plan, Reply) {
	op := wire.XGroupCreateConsumer{Base: keyBase(c, args[2]), Group: string(args[3]), Consumer: string(args[4])}
	return &Plan{Op: op, Format: xreply.Int}, nil
}

// cmdXGROUPDELCONSUMER plans XGROUP DELCONSUMER key group consumer: the
// number of pending entries the consumer had.
func cmdXGROUPDELCONSUMER(c *Client, args [][]byte) (*Plan, Reply) {
	op := wire.XGroupDelConsumer{Base: keyBase(c, args[2]), Group: string(args[3]), Consumer: string(args[4])}
	return &Plan{Op: op, Format: xreply.Int}, nil
}
