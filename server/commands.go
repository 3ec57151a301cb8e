package server

import (
	"sort"
	"strings"
)

// allCommands is the one command table: this file's owners' connection and
// server commands plus the stream, keyspace and transaction commands.
func (s *Server) allCommands() []*Command {
	var all []*Command
	all = append(all, connectionCommands()...)
	all = append(all, s.serverCommands()...)
	all = append(all, streamCommands()...)
	all = append(all, keyspaceCommands()...)
	all = append(all, txCommands()...)
	all = append(all, s.slowlogCommand(), s.monitorCommand(), s.aclCommand())
	all = append(all, s.keyAdminCommands()...)
	all = append(all, s.objectCommand(), s.memoryCommand(), s.latencyCommand(), s.roleCommand())
	return all
}

// commandTable indexes commands by lower-case name; COMMAND reports them in
// name order.
type commandTable struct {
	byName map[string]*Command
	sorted []*Command
}

func newCommandTable(cmds []*Command) *commandTable {
	t := &commandTable{byName: make(map[string]*Command, len(cmds))}
	for _, c := range cmds {
		if _, dup := t.byName[c.Name]; dup {
			panic("server: command " + c.Name + " defined twice")
		}
		t.byName[c.Name] = c
		t.sorted = append(t.sorted, c)
		for _, x := range append([]*Command{c}, c.Subcommands...) {
			x.write, x.blocking, x.denyoom = hasFlag(x, "write"), hasFlag(x, "blocking"), hasFlag(x, "denyoom")
			x.keyAccess = nil
			for _, f := range keySpecFlags(x.Name) {
				x.keyAccess = append(x.keyAccess, specAccess(f))
			}
			if x != c {
				x.parent = c
			}
		}
		sort.Slice(c.Subcommands, func(i, j int) bool { return c.Subcommands[i].Name < c.Subcommands[j].Name })
	}
	sort.Slice(t.sorted, func(i, j int) bool { return t.sorted[i].Name < t.sorted[j].Name })
	return t
}

// get finds a top-level command, case-insensitively.
func (t *commandTable) get(name string) *Command {
	if c, ok := t.byName[name]; ok {
		return c
	}
	return t.byName[strings.ToLower(name)]
}

// getBytes is get for a request's first argument. A short ASCII name is
// lower-cased in a stack buffer, so finding "XADD" allocates nothing;
// anything else goes through get.
func (t *commandTable) getBytes(name []byte) *Command {
	var buf [32]byte
	if len(name) > len(buf) {
		return t.get(string(name))
	}
	lower := buf[:len(name)]
	for i, ch := range name {
		switch {
		case ch >= 0x80:
			return t.get(string(name)) // strings.ToLower's Unicode rules
		case ch >= 'A' && ch <= 'Z':
			ch += 'a' - 'A'
		}
		lower[i] = ch
	}
	return t.byName[string(lower)]
}

// sub finds a subcommand of a container by its own name ("create" for
// "xgroup|create"), case-insensitively.
func (c *Command) sub(name string) *Command {
	full := c.Name + "|" + strings.ToLower(name)
	for _, sc := range c.Subcommands {
		if sc.Name == full {
			return sc
		}
	}
	return nil
}

// lookupFull finds "name" or "container|sub" (COMMAND INFO / DOCS accept
// both).
func (t *commandTable) lookupFull(name string) *Command {
	name = strings.ToLower(name)
	if container, sub, ok := strings.Cut(name, "|"); ok {
		if c := t.get(container); c != nil {
			return c.sub(sub)
		}
		return nil
	}
	return t.get(name)
}
