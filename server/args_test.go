package server

import (
	"reflect"
	"strings"
	"testing"

	"streamd/server/resp"
)

// streamCmd finds a stream command row ("xadd", "xgroup|create").
func streamCmd(t *testing.T, name string) *Command {
	t.Helper()
	container, _, isSub := strings.Cut(name, "|")
	for _, c := range streamCommands() {
		if !isSub && c.Name == name {
			return c
		}
		if isSub && c.Name == container {
			for _, sc := range c.Subcommands {
				if sc.Name == name {
					return sc
				}
			}
		}
	}
	t.Fatalf("no command %q", name)
	return nil
}

// planFor runs the planner of the command named by line's first word(s)
// ("XGROUP CREATE ..." uses "xgroup|create") on a client in database 3.
func planFor(t *testing.T, line string) (Plan, Reply) {
	t.Helper()
	args := xArgs(line)
	name := strings.ToLower(string(args[0]))
	if name == "xgroup" || name == "xinfo" {
		name += "|" + strings.ToLower(string(args[1]))
	}
	cmd := streamCmd(t, name)
	if !arityOK(cmd.Arity, len(args)) {
		t.Fatalf("%q: wrong arity for the test", line)
	}
	if cmd.Planner == nil {
		t.Fatalf("%q: %s has no planner", line, name)
	}
	c := &Client{}
	c.db.Store(3)
	return cmd.Planner(c, args)
}

// xArgs splits on spaces; a pair of single quotes is an empty argument.
func xArgs(line string) [][]byte {
	var args [][]byte
	for _, f := range strings.Fields(line) {
		if f == "''" {
			f = ""
		}
		args = append(args, []byte(f))
	}
	return args
}

// mustPlan plans line and fails on an argument error.
func mustPlan(t *testing.T, line string) *Plan {
	t.Helper()
	p, r := planFor(t, line)
	if r != nil {
		t.Fatalf("%q: unexpected reply %v", line, r)
	}
	if p.Format == nil {
		t.Fatalf("%q: no plan", line)
	}
	return &p
}

// wantErr checks that line is refused by the planner with want.
func wantErr(t *testing.T, line, want string) {
	t.Helper()
	p, r := planFor(t, line)
	if p.Op != nil || p.Format != nil {
		t.Fatalf("%q: got plan %#v, want error %q", line, p.Op, want)
	}
	if r != ErrorReply(want) {
		t.Fatalf("%q: got %#v, want %q", line, r, want)
	}
}

// render writes r in the protocol as the connection would.
func render(r Reply, proto int) string {
	return string(resp.AppendReply(nil, r, proto))
}

func TestStreamCmdTable(t *testing.T) {
	for _, c := range streamCommands() {
		if c.Group != "stream" || c.Summary == "" || c.Since == "" {
			t.Errorf("%s: docs incomplete: %+v", c.Name, c)
		}
		if len(c.Subcommands) == 0 && c.Planner == nil && c.Handler == nil {
			t.Errorf("%s: nothing runs it", c.Name)
		}
		for _, sc := range c.Subcommands {
			if !strings.HasPrefix(sc.Name, c.Name+"|") {
				t.Errorf("%s: bad subcommand name %s", c.Name, sc.Name)
			}
			if (sc.Planner == nil) == (sc.Handler == nil) {
				t.Errorf("%s: exactly one of Planner and Handler", sc.Name)
			}
		}
	}
	// Spot checks against redis-server 7.0's COMMAND INFO.
	xadd := streamCmd(t, "xadd")
	if xadd.Arity != -5 || !reflect.DeepEqual(xadd.Flags, []string{"write", "denyoom", "fast"}) ||
		xadd.FirstKey != 1 || xadd.LastKey != 1 || xadd.Step != 1 {
		t.Errorf("xadd row: %+v", xadd)
	}
	create := streamCmd(t, "xgroup|create")
	if create.Arity != -5 || create.FirstKey != 2 || create.LastKey != 2 {
		t.Errorf("xgroup|create row: %+v", create)
	}
	help := streamCmd(t, "xinfo|help")
	if help.Arity != 2 || help.FirstKey != 0 || !reflect.DeepEqual(help.ACL, []string{"@stream", "@slow"}) {
		t.Errorf("xinfo|help row: %+v", help)
	}
}

// TestStreamCmdArgErrorsPassThrough checks that the planners answer
// xargs' errors as they are (the tables live in package xargs).
func TestStreamCmdArgErrorsPassThrough(t *testing.T) {
	tests := []struct{ line, want string }{
		{"XADD s * f v f", "ERR wrong number of arguments for 'xadd' command"},
		{"XTRIM s LIMIT 0", "ERR syntax error, XTRIM must be called with a trimming strategy"},
		{"XRANGE s - (0-0", "ERR invalid end ID for the interval"},
		{"XREVRANGE s (0-0 bad", "ERR Invalid stream ID specified as stream command argument"},
		{"XSETID s 5-5 ENTRIESADDED -1", "ERR entries_added must be positive"},
		{"XGROUP CREATE s g $ ENTRIESREAD -2", "ERR value for ENTRIESREAD must be positive or -1"},
		{"XGROUP SETID s g 1 FOO 1", "ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP."},
		{"XAUTOCLAIM s g c 0 0 COUNT 0", "ERR COUNT must be > 0"},
		{"XPENDING s g - (0-0 1", "ERR invalid end ID for the interval"},
	}
	for _, tt := range tests {
		wantErr(t, tt.line, tt.want)
	}
}
