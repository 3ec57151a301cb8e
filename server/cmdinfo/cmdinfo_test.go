package cmdinfo

import (
	"slices"
	"strings"
	"testing"

	"streamd/server/resp"
)

var table = []Desc{
	{Name: "pong", Arity: -1, Flags: []string{"fast"}, ACL: []string{"@fast", "@connection"},
		Summary: "Returns the server's liveliness response.", Since: "1.0.0", Group: "connection"},
	{Name: "ygroup", Arity: -2, ACL: []string{"@slow"}, Summary: "A container.", Since: "5.0.0", Group: "stream",
		Subcommands: []Desc{{Name: "ygroup|create", Arity: -5, Flags: []string{"write"}, FirstKey: 2, LastKey: 2, Step: 1,
			ACL: []string{"@write", "@stream"}, Summary: "Creates a group.", Since: "5.0.0", Group: "stream"}}},
}

func render(r resp.Reply, proto int) string { return string(resp.AppendReply(nil, r, proto)) }

func TestList(t *testing.T) {
	cases := []struct {
		filter []string
		want   string
	}{
		{nil, "*2\r\n$4\r\npong\r\n$6\r\nygroup\r\n"},
		{[]string{"FILTERBY", "aclcat", "STREAM"}, "*1\r\n$13\r\nygroup|create\r\n"},
		{[]string{"filterby", "PATTERN", "y*"}, "*2\r\n$6\r\nygroup\r\n$13\r\nygroup|create\r\n"},
		{[]string{"filterby", "module", "m"}, "*0\r\n"},
		{[]string{"filterby", "nope", "m"}, "-ERR syntax error\r\n"},
		{[]string{"filterby", "pattern"}, "-ERR syntax error\r\n"},
	}
	for _, c := range cases {
		var f [][]byte
		for _, a := range c.filter {
			f = append(f, []byte(a))
		}
		if got := render(List(table, f), 2); got != c.want {
			t.Errorf("LIST %q: got %q want %q", c.filter, got, c.want)
		}
	}
}

func TestInfoAndDocs(t *testing.T) {
	got := render(Infos([]Desc{table[0], {}}), 3)
	want := "*2\r\n*10\r\n$4\r\npong\r\n:-1\r\n~1\r\n+fast\r\n:0\r\n:0\r\n:0\r\n~2\r\n+@fast\r\n+@connection\r\n~0\r\n~0\r\n~0\r\n_\r\n"
	if got != want {
		t.Errorf("INFO: got %q want %q", got, want)
	}
	got = render(Docs(table[1:]), 2)
	want = "*2\r\n$6\r\nygroup\r\n*8\r\n$7\r\nsummary\r\n$12\r\nA container.\r\n$5\r\nsince\r\n$5\r\n5.0.0\r\n" +
		"$5\r\ngroup\r\n$6\r\nstream\r\n$11\r\nsubcommands\r\n*2\r\n$13\r\nygroup|create\r\n*6\r\n" +
		"$7\r\nsummary\r\n$16\r\nCreates a group.\r\n$5\r\nsince\r\n$5\r\n5.0.0\r\n$5\r\ngroup\r\n$6\r\nstream\r\n"
	if got != want {
		t.Errorf("DOCS: got %q want %q", got, want)
	}
}

// TestDerivedKeySpec: a command Redis does not have gets the key spec its
// legacy positions imply.
func TestDerivedKeySpec(t *testing.T) {
	got := render(Info(table[1].Subcommands[0]), 3)
	want := "~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RW\r\n+update\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n" +
		"$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n" +
		"$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("INFO ygroup|create: got %q, want it to end in %q", got, want)
	}
}

// TestRedisData: redis7.json loads, XADD's docs have arguments and XREAD's
// key spec is the STREAMS keyword's.
func TestRedisData(t *testing.T) {
	if !HasRedisData("xadd") || !HasRedisData("xgroup|create") || HasRedisData("raft") {
		t.Fatal("redis7.json: xadd, xgroup|create expected, raft not")
	}
	docs := render(Docs([]Desc{{Name: "xadd"}}), 2)
	for _, want := range []string{"$9\r\narguments\r\n", "$10\r\nnomkstream\r\n", "$7\r\nhistory\r\n"} {
		if !strings.Contains(docs, want) {
			t.Errorf("DOCS xadd lacks %q", want)
		}
	}
	specs := Desc{Name: "xread"}.Specs()
	if len(specs) != 1 || specs[0].Keyword != "STREAMS" || specs[0].StartFrom != 1 || specs[0].Limit != 2 || specs[0].LastKey != -1 {
		t.Errorf("xread key specs: %+v", specs)
	}
}

func TestGetKeys(t *testing.T) {
	args := func(s string) [][]byte {
		var out [][]byte
		for _, f := range strings.Fields(s) {
			out = append(out, []byte(f))
		}
		return out
	}
	xread := Desc{Name: "xread"}.Specs()
	cases := []struct {
		specs []KeySpec
		cmd   string
		want  []int
		ok    bool
	}{
		{xread, "XREAD COUNT 2 STREAMS a b 0 0", []int{4, 5}, true},
		{xread, "XREAD STREAMS a 0", []int{2}, true},
		{xread, "XREAD COUNT 2 a 0", nil, false},
		{Desc{Name: "xadd"}.Specs(), "XADD s * f v", []int{1}, true},
		{Desc{Name: "del"}.Specs(), "DEL a b c", []int{1, 2, 3}, true},
		{Desc{Name: "rename"}.Specs(), "RENAME a b", []int{1, 2}, true},
		{[]KeySpec{{BeginIndex: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, "EVAL 2 a b c", []int{2, 3}, true},
		{[]KeySpec{{BeginIndex: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, "EVAL x a", nil, false},
	}
	for _, c := range cases {
		keys, ok := GetKeys(c.specs, args(c.cmd), true)
		var got []int
		for _, k := range keys {
			got = append(got, k.Pos)
		}
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v %v, want %v %v", c.cmd, got, ok, c.want, c.ok)
		}
	}
}
