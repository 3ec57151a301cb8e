package server

// The stream family's rows of the command table (the handlers live one
// file per command family, cmd_x*.go).

// streamCommands is the stream family's part of the command table: every X*
// command, XREAD and XREADGROUP included.
// Flags, key positions, ACL categories and docs are Redis 7's COMMAND INFO
// and COMMAND DOCS.
func streamCommands() []*Command {
	var cmds []*Command
	cmds = append(cmds, xaddCommands()...)
	cmds = append(cmds, xrangeCommands()...)
	cmds = append(cmds, xgroupCommand())
	cmds = append(cmds, xackCommands()...)
	cmds = append(cmds, xpendingCommand())
	cmds = append(cmds, xinfoCommand())
	cmds = append(cmds, xreadCommands()...)
	cmds = append(cmds, xdelexCommands()...)
	cmds = append(cmds, xidmpCommands()...)
	cmds = append(cmds, xnackCommand())
	return cmds
}

// keyCommand is a row for a command whose only key is its first argument.
func keyCommand(name string, arity int, flags, acl []string, summary, since string,
	planner func(*Client, [][]byte) (Plan, Reply)) *Command {
	return &Command{
		Name: name, Arity: arity, Flags: flags,
		FirstKey: 1, LastKey: 1, Step: 1,
		ACL: acl, Summary: summary, Since: since, Group: "stream",
		Planner: planner,
	}
}

// xaddCommands are the rows of XADD and XTRIM.
func xaddCommands() []*Command {
	return []*Command{
		keyCommand("xadd", -5, []string{"write", "denyoom", "fast"},
			[]string{"@write", "@stream", "@fast"},
			"Appends a new entry to a stream", "5.0.0", cmdXADD),
		keyCommand("xtrim", -4, []string{"write"},
			[]string{"@write", "@stream", "@slow"},
			"Trims the stream to (approximately if '~' is passed) a certain size", "5.0.0", cmdXTRIM),
	}
}

// xrangeCommands are the rows of the stream reads and edits by ID: XRANGE,
// XREVRANGE, XLEN, XDEL, XSETID.
func xrangeCommands() []*Command {
	return []*Command{
		keyCommand("xrange", -4, []string{"readonly"},
			[]string{"@read", "@stream", "@slow"},
			"Return a range of elements in a stream, with IDs matching the specified IDs interval",
			"5.0.0", cmdXRANGE),
		keyCommand("xrevrange", -4, []string{"readonly"},
			[]string{"@read", "@stream", "@slow"},
			"Return a range of elements in a stream, with IDs matching the specified IDs interval, "+
				"in reverse order (from greater to smaller IDs) compared to XRANGE",
			"5.0.0", cmdXREVRANGE),
		keyCommand("xlen", 2, []string{"readonly", "fast"},
			[]string{"@read", "@stream", "@fast"},
			"Return the number of entries in a stream", "5.0.0", cmdXLEN),
		keyCommand("xdel", -3, []string{"write", "fast"},
			[]string{"@write", "@stream", "@fast"},
			"Removes the specified entries from the stream. Returns the number of items actually deleted, "+
				"that may be different from the number of IDs passed in case certain IDs do not exist.",
			"5.0.0", cmdXDEL),
		keyCommand("xsetid", -3, []string{"write", "denyoom", "fast"},
			[]string{"@write", "@stream", "@fast"},
			"An internal command for replicating stream values", "5.0.0", cmdXSETID),
	}
}

// xgroupCommand is XGROUP with its subcommands.
func xgroupCommand() *Command {
	w := []string{"write"}
	wd := []string{"write", "denyoom"}
	acl := []string{"@write", "@stream", "@slow"}
	return &Command{
		Name: "xgroup", Arity: -2, ACL: []string{"@slow"},
		Summary: "A container for consumer groups commands", Since: "5.0.0", Group: "stream",
		Subcommands: []*Command{
			groupCommand("xgroup|create", -5, wd, acl, "Create a consumer group.", "5.0.0", cmdXGROUPCREATE),
			groupCommand("xgroup|createconsumer", 5, wd, acl,
				"Create a consumer in a consumer group.", "6.2.0", cmdXGROUPCREATECONSUMER),
			groupCommand("xgroup|delconsumer", 5, w, acl,
				"Delete a consumer from a consumer group.", "5.0.0", cmdXGROUPDELCONSUMER),
			groupCommand("xgroup|destroy", 4, w, acl, "Destroy a consumer group.", "5.0.0", cmdXGROUPDESTROY),
			groupCommand("xgroup|setid", -5, w, acl,
				"Set a consumer group to an arbitrary last delivered ID value.", "5.0.0", cmdXGROUPSETID),
			xgroupConfigCommand(w, acl),
			helpCommand("xgroup|help", "XGROUP", xgroupHelp),
		},
	}
}

// xackCommands are the rows of XACK, XCLAIM and XAUTOCLAIM.
func xackCommands() []*Command {
	rwFast := []string{"write", "fast"}
	acl := []string{"@write", "@stream", "@fast"}
	return []*Command{
		keyCommand("xack", -4, rwFast, acl,
			"Marks a pending message as correctly processed, effectively removing it from the pending "+
				"entries list of the consumer group. Return value of the command is the number of messages "+
				"successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.",
			"5.0.0", cmdXACK),
		keyCommand("xclaim", -6, rwFast, acl,
			"Changes (or acquires) ownership of a message in a consumer group, as if the message was "+
				"delivered to the specified consumer.",
			"5.0.0", cmdXCLAIM),
		keyCommand("xautoclaim", -6, rwFast, acl,
			"Changes (or acquires) ownership of messages in a consumer group, as if the messages were "+
				"delivered to the specified consumer.",
			"6.2.0", cmdXAUTOCLAIM),
	}
}

// xpendingCommand is the row of XPENDING.
func xpendingCommand() *Command {
	return keyCommand("xpending", -3, []string{"readonly"},
		[]string{"@read", "@stream", "@slow"},
		"Return information and entries from a stream consumer group pending entries list, "+
			"that are messages fetched but never acknowledged.",
		"5.0.0", cmdXPENDING)
}

// xinfoCommand is XINFO with its subcommands.
func xinfoCommand() *Command {
	ro := []string{"readonly"}
	acl := []string{"@read", "@stream", "@slow"}
	return &Command{
		Name: "xinfo", Arity: -2, ACL: []string{"@slow"},
		Summary: "A container for stream introspection commands", Since: "5.0.0", Group: "stream",
		Subcommands: []*Command{
			groupCommand("xinfo|consumers", 4, ro, acl,
				"List the consumers in a consumer group", "5.0.0", cmdXINFOCONSUMERS),
			groupCommand("xinfo|groups", 3, ro, acl,
				"List the consumer groups of a stream", "5.0.0", cmdXINFOGROUPS),
			groupCommand("xinfo|stream", -3, ro, acl,
				"Get information about a stream", "5.0.0", cmdXINFOSTREAM),
			helpCommand("xinfo|help", "XINFO", xinfoHelp),
		},
	}
}

// xreadCommands are XREAD and XREADGROUP (streamCommands includes them).
func xreadCommands() []*Command {
	return []*Command{
		{
			Name: "xread", Arity: -4, Flags: []string{"readonly", "blocking", "movablekeys"},
			ACL: []string{"@read", "@stream", "@slow", "@blocking"},
			Summary: "Return never seen elements in multiple streams, with IDs greater than the ones " +
				"reported by the caller for each stream. Can block.",
			Since: "5.0.0", Group: "stream", Planner: cmdXREAD, KeysFrom: xreadKeys,
		},
		{
			Name: "xreadgroup", Arity: -7, Flags: []string{"write", "blocking", "movablekeys"},
			ACL: []string{"@write", "@stream", "@slow", "@blocking"},
			Summary: "Return new entries from a stream using a consumer group, or access the history of " +
				"the pending entries for a given consumer. Can block.",
			Since: "5.0.0", Group: "stream", Planner: cmdXREADGROUP, KeysFrom: xreadKeys,
		},
	}
}
