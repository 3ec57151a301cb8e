package server

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"streamd/server/resp"
	"streamd/streams"
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
func planFor(t *testing.T, line string) (*Plan, Reply) {
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
	if p == nil || p.Format == nil {
		t.Fatalf("%q: no plan", line)
	}
	return p
}

// wantErr checks that line is refused by the planner with want.
func wantErr(t *testing.T, line, want string) {
	t.Helper()
	p, r := planFor(t, line)
	if p != nil {
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

func TestStreamCmdParseInt64(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"7", 7, true},
		{"-7", -7, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"-0", 0, false},
		{"01", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"-", 0, false},
		{"", 0, false},
		{"1x", 0, false},
		{"1.5", 0, false},
		{"000000000000000000001", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseInt64([]byte(tt.in))
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseInt64(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestStreamCmdIsOpt(t *testing.T) {
	tests := []struct {
		arg, name string
		want      bool
	}{
		{"count", "COUNT", true},
		{"CoUnT", "COUNT", true},
		{"COUNTS", "COUNT", false},
		{"", "COUNT", false},
		{"mkstream", "MKSTREAM", true},
		{"M\u212aSTREAM", "MKSTREAM", false}, // Kelvin sign: strcasecmp is ASCII only
		{"nomk\u017ftream", "NOMKSTREAM", false},
	}
	for _, tt := range tests {
		if got := isOpt([]byte(tt.arg), tt.name); got != tt.want {
			t.Errorf("isOpt(%q, %q) = %v", tt.arg, tt.name, got)
		}
	}
}

func TestStreamCmdRangeBounds(t *testing.T) {
	max := uint64(math.MaxUint64)
	tests := []struct {
		in       string
		start    bool
		want     streams.ID
		wantErr  Reply
		describe string
	}{
		{"-", true, streams.MinID, nil, "minus"},
		{"+", false, streams.MaxID, nil, "plus"},
		{"5", true, streams.ID{Ms: 5}, nil, "ms-only start takes seq 0"},
		{"5", false, streams.ID{Ms: 5, Seq: max}, nil, "ms-only end takes seq max"},
		{"(5", true, streams.ID{Ms: 5, Seq: 1}, nil, "exclusive start"},
		{"(5", false, streams.ID{Ms: 5, Seq: max - 1}, nil, "exclusive end"},
		{"(5-" + "18446744073709551615", true, streams.ID{Ms: 6}, nil, "exclusive start carries"},
		{"(6-0", false, streams.ID{Ms: 5, Seq: max}, nil, "exclusive end borrows"},
		{"(18446744073709551615-18446744073709551615", true, streams.ID{}, errStartID, "no successor"},
		{"(18446744073709551615", true, streams.ID{Ms: max, Seq: 1}, nil, "ms-only max start"},
		{"(0-0", false, streams.ID{}, errEndID, "no predecessor"},
		{"(0", false, streams.ID{Ms: 0, Seq: max - 1}, nil, "ms-only zero end"},
		{"(-", true, streams.ID{}, errInvalidID, "exclusive minus is strict"},
		{"(+", false, streams.ID{}, errInvalidID, "exclusive plus is strict"},
		{"(", true, streams.ID{}, errInvalidID, "lone paren"},
		{"bad", false, streams.ID{}, errInvalidID, "garbage"},
	}
	for _, tt := range tests {
		var got streams.ID
		var r Reply
		if tt.start {
			got, r = rangeStartArg([]byte(tt.in))
		} else {
			got, r = rangeEndArg([]byte(tt.in))
		}
		if r != tt.wantErr {
			t.Errorf("%s: %q: err %v, want %v", tt.describe, tt.in, r, tt.wantErr)
			continue
		}
		if r == nil && got != tt.want {
			t.Errorf("%s: %q: got %v, want %v", tt.describe, tt.in, got, tt.want)
		}
	}
}

func TestStreamCmdSubcommandSyntaxError(t *testing.T) {
	got := subcommandSyntaxError("XGROUP", []byte("create"))
	want := ErrorReply("ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP.")
	if got != want {
		t.Fatalf("got %q", got)
	}
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
