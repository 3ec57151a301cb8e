package server

import (
	"strings"

	"streamd/server/cmdinfo"
)

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
			sub("getkeys", -4, "Extracts the key names from an arbitrary command.", "2.8.13", s.cmdCOMMANDGETKEYS),
			sub("getkeysandflags", -4, "Extracts the key names and access flags for an arbitrary command.", "7.0.0",
				s.cmdCOMMANDGETKEYSANDFLAGS),
			sub("help", 2, "Returns helpful text about the different subcommands.", "5.0.0", cmdCOMMANDHELP),
		},
	}
}

// describe is what COMMAND reports of a row and its subcommands.
func describe(cmd *Command) cmdinfo.Desc {
	d := cmdinfo.Desc{Name: cmd.Name, Arity: cmd.Arity, Flags: cmd.Flags, ACL: cmd.ACL,
		FirstKey: cmd.FirstKey, LastKey: cmd.LastKey, Step: cmd.Step,
		Summary: cmd.Summary, Since: cmd.Since, Group: cmd.Group}
	if f := keySpecOverrides[cmd.Name]; len(f) == 1 {
		d.KeyFlags = strings.Fields(f[0])
	}
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

// cmdCOMMANDGETKEYS is COMMAND GETKEYS <full-command>: the command's keys.
func (s *Server) cmdCOMMANDGETKEYS(c *Client, args [][]byte) Reply {
	return s.getKeys(args[2:], false)
}

// cmdCOMMANDGETKEYSANDFLAGS is COMMAND GETKEYSANDFLAGS <full-command>: each
// key with its key spec's flags.
func (s *Server) cmdCOMMANDGETKEYSANDFLAGS(c *Client, args [][]byte) Reply {
	return s.getKeys(args[2:], true)
}

// getKeys finds a full command's keys as Redis's getKeysSubcommandImpl: the
// command (a container's subcommand when there is an argument after it),
// its arity, then its key specs (cmdinfo.GetKeys), falling back to the
// row's KeysFrom (XREAD/XREADGROUP, as Redis's xreadGetKeys) when a spec
// does not fit.
func (s *Server) getKeys(argv [][]byte, withFlags bool) Reply {
	cmd := s.cmds.getBytes(argv[0])
	if cmd != nil && len(argv) > 1 && len(cmd.Subcommands) > 0 {
		cmd = cmd.sub(string(argv[1]))
	}
	if cmd == nil {
		return ErrorReply("ERR Invalid command specified")
	}
	d := describe(cmd)
	specs := d.Specs()
	hasKeys := cmd.KeysFrom != nil
	for _, ks := range specs {
		if !containsFold(ks.Flags, "not_key") {
			hasKeys = true
		}
	}
	if !hasKeys {
		return ErrorReply("ERR The command has no key arguments")
	}
	if n := len(argv); (cmd.Arity > 0 && cmd.Arity != n) || n < -cmd.Arity {
		return ErrorReply("ERR Invalid number of arguments specified for command")
	}
	out := Array{}
	keys, ok := cmdinfo.GetKeys(specs, argv, cmd.Arity < 0)
	switch {
	case ok:
		for _, k := range keys {
			out = append(out, keyReply(argv[k.Pos], k.Flags, withFlags))
		}
	case cmd.KeysFrom != nil:
		for _, k := range cmd.KeysFrom(argv) {
			out = append(out, keyReply(k, nil, withFlags))
		}
	}
	if len(out) == 0 {
		return ErrorReply("ERR Invalid arguments specified for command")
	}
	return out
}

// keyReply is one GETKEYS key, or one GETKEYSANDFLAGS [key, flags] pair.
func keyReply(key []byte, flags []string, withFlags bool) Reply {
	if !withFlags {
		return Bulk(key)
	}
	set := Set{}
	for _, f := range flags {
		set = append(set, SimpleString(f))
	}
	return Array{Bulk(key), set}
}

// containsFold reports whether list holds s, case-insensitively.
func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// withFlags sets a row's Flags (COMMAND INFO's flags).
func withFlags(c *Command, flags ...string) *Command {
	c.Flags = flags
	return c
}
