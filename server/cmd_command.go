package server

import (
	"strings"

	"streamd/internal/glob"
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
			sub("help", 2, "Returns helpful text about the different subcommands.", "5.0.0", cmdCOMMANDHELP),
		},
	}
}

// cmdCOMMAND with no subcommand is every command's COMMAND INFO entry.
func (s *Server) cmdCOMMAND(c *Client, args [][]byte) Reply {
	out := make(Array, 0, len(s.cmds.sorted))
	for _, cmd := range s.cmds.sorted {
		out = append(out, commandInfo(cmd))
	}
	return out
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
	out := make(Array, 0, len(args)-2)
	for _, a := range args[2:] {
		if cmd := s.cmds.lookupFull(string(a)); cmd != nil {
			out = append(out, commandInfo(cmd))
		} else {
			out = append(out, NullArray{})
		}
	}
	return out
}

// commandInfo is Redis 7's 10-element COMMAND INFO entry: name, arity,
// flags, first key, last key, step, ACL categories, tips, key specs,
// subcommands. streamd keeps no tips or key specs (the legacy key positions
// are given), so those are empty.
func commandInfo(cmd *Command) Reply {
	flags := make(Set, len(cmd.Flags))
	for i, f := range cmd.Flags {
		flags[i] = SimpleString(f)
	}
	acl := make(Set, len(cmd.ACL))
	for i, a := range cmd.ACL {
		acl[i] = SimpleString(a)
	}
	subs := make(Array, 0, len(cmd.Subcommands))
	for _, sc := range cmd.Subcommands {
		subs = append(subs, commandInfo(sc))
	}
	return Array{
		BulkString(cmd.Name),
		Int(cmd.Arity),
		flags,
		Int(cmd.FirstKey),
		Int(cmd.LastKey),
		Int(cmd.Step),
		acl,
		Set{},
		Array{},
		subs,
	}
}

// cmdCOMMANDDOCS is COMMAND DOCS [name ...]: a map of name → docs; unknown
// names are left out, as Redis does.
func (s *Server) cmdCOMMANDDOCS(c *Client, args [][]byte) Reply {
	var out Map
	if len(args) == 2 {
		for _, cmd := range s.cmds.sorted {
			out = append(out, KV{K: BulkString(cmd.Name), V: commandDocs(cmd)})
		}
		return out
	}
	out = Map{}
	for _, a := range args[2:] {
		if cmd := s.cmds.lookupFull(string(a)); cmd != nil {
			out = append(out, KV{K: BulkString(cmd.Name), V: commandDocs(cmd)})
		}
	}
	return out
}

// commandDocs is one command's docs map: summary, since, group and, for a
// container, its subcommands' docs.
func commandDocs(cmd *Command) Reply {
	m := Map{
		{K: BulkString("summary"), V: BulkString(cmd.Summary)},
		{K: BulkString("since"), V: BulkString(cmd.Since)},
		{K: BulkString("group"), V: BulkString(cmd.Group)},
	}
	if len(cmd.Subcommands) > 0 {
		subs := make(Map, 0, len(cmd.Subcommands))
		for _, sc := range cmd.Subcommands {
			subs = append(subs, KV{K: BulkString(sc.Name), V: commandDocs(sc)})
		}
		m = append(m, KV{K: BulkString("subcommands"), V: subs})
	}
	return m
}

// cmdCOMMANDLIST is COMMAND LIST [FILTERBY MODULE m | ACLCAT cat | PATTERN p].
// Like Redis, the plain list has top-level names only, while a filter also
// looks at subcommands.
func (s *Server) cmdCOMMANDLIST(c *Client, args [][]byte) Reply {
	var match func(*Command) bool
	switch {
	case len(args) == 2:
	case len(args) == 5 && strings.EqualFold(string(args[2]), "filterby"):
		val := string(args[4])
		switch strings.ToLower(string(args[3])) {
		case "module":
			match = func(*Command) bool { return false } // no modules
		case "aclcat":
			match = func(cmd *Command) bool {
				for _, a := range cmd.ACL {
					if strings.EqualFold(strings.TrimPrefix(a, "@"), val) {
						return true
					}
				}
				return false
			}
		case "pattern":
			match = func(cmd *Command) bool { return glob.MatchFold(val, cmd.Name) }
		default:
			return errSyntax
		}
	default:
		return errSyntax
	}
	var out Array
	for _, cmd := range s.cmds.sorted {
		if match == nil {
			out = append(out, BulkString(cmd.Name))
			continue
		}
		if match(cmd) {
			out = append(out, BulkString(cmd.Name))
		}
		for _, sc := range cmd.Subcommands {
			if match(sc) {
				out = append(out, BulkString(sc.Name))
			}
		}
	}
	if out == nil {
		out = Array{}
	}
	return out
}

// cmdCOMMANDHELP lists the COMMAND subcommands streamd implements.
func cmdCOMMANDHELP(c *Client, args [][]byte) Reply {
	return helpReply("COMMAND",
		"(no subcommand)",
		"    Return details about all Redis commands.",
		"COUNT",
		"    Return the total number of commands in this Redis server.",
		"LIST",
		"    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
	)
}
