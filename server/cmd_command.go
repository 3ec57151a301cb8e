package server

import "streamd/server/cmdinfo"

// commandCommand is COMMAND and its subcommands, all answered from the one
// command table.
func (s *Server) commandCommand() *Command {
	sub := func(name string, arity int, summary, since string, h func(*Client, [][]byte) Reply) *Command {
		return &Command{Name: "command|" + name, Arity: arity, Flags: []string{"loading", "stale"},
			ACL: []string{"@slow", "@connection"}, Summary: summary, Since: since, Group: "server", Handler: h}
	}
	return &Command{
		Name: "command", Arity: -1, Flags: []string{"loading", "stale"}, ACL: []string{"@slow", "@connection"},
		Summary: "Returns detailed information about all commands.", Since: "2.8.13", Group: "server",
		Handler: func(c *Client, args [][]byte) Reply { return s.cmdCOMMAND(c, args) },
		Subcommands: []*Command{
			sub("count", 2, "Returns a count of commands.", "2.8.13", s.cmdCOMMANDCOUNT),
			sub("info", -2, "Returns information about one, multiple or all commands.", "2.8.13", s.cmdCOMMANDINFO),
			sub("docs", -2, "Returns documentary information about one, multiple or all commands.", "7.0.0", s.cmdCOMMANDDOCS),
			sub("list", -2, "Returns a list of command names.", "7.0.0", s.cmdCOMMANDLIST),
			sub("help", 2, "Returns helpful text about the different subcommands.", "5.0.0", cmdCOMMANDHELP),
		},
	}
}

// describe is what COMMAND reports of a row and its subcommands.
func describe(cmd *Command) cmdinfo.Desc {
	d := cmdinfo.Desc{Name: cmd.Name, Arity: cmd.Arity, Flags: cmd.Flags, ACL: cmd.ACL,
		FirstKey: cmd.FirstKey, LastKey: cmd.LastKey, Step: cmd.Step,
		Summary: cmd.Summary, Since: cmd.Since, Group: cmd.Group}
	for _, sc := range cmd.Subcommands {
		d.Subcommands = append(d.Subcommands, describe(sc))
	}
	return d
}

// descs describes every top-level command, in name order.
func (s *Server) descs() []cmdinfo.Desc {
	ds := make([]cmdinfo.Desc, len(s.cmds.sorted))
	for i, cmd := range s.cmds.sorted {
		ds[i] = describe(cmd)
	}
	return ds
}

// lookupDescs describes the named commands; an unknown name is a Desc with
// no Name.
func (s *Server) lookupDescs(names [][]byte) []cmdinfo.Desc {
	ds := make([]cmdinfo.Desc, len(names))
	for i, a := range names {
		if cmd := s.cmds.lookupFull(string(a)); cmd != nil {
			ds[i] = describe(cmd)
		}
	}
	return ds
}

// cmdCOMMAND with no subcommand is every command's COMMAND INFO entry.
func (s *Server) cmdCOMMAND(c *Client, args [][]byte) Reply {
	return cmdinfo.Infos(s.descs())
}

// cmdCOMMANDCOUNT counts top-level commands, as Redis does.
func (s *Server) cmdCOMMANDCOUNT(c *Client, args [][]byte) Reply {
	return Int(len(s.cmds.sorted))
}

// cmdCOMMANDINFO is COMMAND INFO [name ...]: a null for an unknown name.
func (s *Server) cmdCOMMANDINFO(c *Client, args [][]byte) Reply {
	if len(args) == 2 {
		return s.cmdCOMMAND(c, args)
	}
	return cmdinfo.Infos(s.lookupDescs(args[2:]))
}

// cmdCOMMANDDOCS is COMMAND DOCS [name ...]: a map of name → docs; unknown
// names are left out, as Redis does.
func (s *Server) cmdCOMMANDDOCS(c *Client, args [][]byte) Reply {
	if len(args) == 2 {
		return cmdinfo.Docs(s.descs())
	}
	var known []cmdinfo.Desc
	for _, d := range s.lookupDescs(args[2:]) {
		if d.Name != "" {
			known = append(known, d)
		}
	}
	return cmdinfo.Docs(known)
}

// cmdCOMMANDLIST is COMMAND LIST [FILTERBY MODULE m | ACLCAT cat | PATTERN p].
func (s *Server) cmdCOMMANDLIST(c *Client, args [][]byte) Reply {
	return cmdinfo.List(s.descs(), args[2:])
}

// cmdCOMMANDHELP lists the COMMAND subcommands streamd implements.
func cmdCOMMANDHELP(c *Client, args [][]byte) Reply {
	return helpReply("COMMAND", cmdinfo.HelpLines()...)
}
