package cmdinfo

import (
	"testing"

	"streamd/server/resp"
)

var table = []Desc{
	{Name: "ping", Arity: -1, Flags: []string{"fast"}, ACL: []string{"@fast", "@connection"},
		Summary: "Returns the server's liveliness response.", Since: "1.0.0", Group: "connection"},
	{Name: "xgroup", Arity: -2, ACL: []string{"@slow"}, Summary: "A container.", Since: "5.0.0", Group: "stream",
		Subcommands: []Desc{{Name: "xgroup|create", Arity: -5, Flags: []string{"write"}, FirstKey: 2, LastKey: 2, Step: 1,
			ACL: []string{"@write", "@stream"}, Summary: "Creates a group.", Since: "5.0.0", Group: "stream"}}},
}

func render(r resp.Reply, proto int) string { return string(resp.AppendReply(nil, r, proto)) }

func TestList(t *testing.T) {
	cases := []struct {
		filter []string
		want   string
	}{
		{nil, "*2\r\n$4\r\nping\r\n$6\r\nxgroup\r\n"},
		{[]string{"FILTERBY", "aclcat", "STREAM"}, "*1\r\n$13\r\nxgroup|create\r\n"},
		{[]string{"filterby", "PATTERN", "x*"}, "*2\r\n$6\r\nxgroup\r\n$13\r\nxgroup|create\r\n"},
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
	want := "*2\r\n*10\r\n$4\r\nping\r\n:-1\r\n~1\r\n+fast\r\n:0\r\n:0\r\n:0\r\n~2\r\n+@fast\r\n+@connection\r\n~0\r\n*0\r\n*0\r\n_\r\n"
	if got != want {
		t.Errorf("INFO: got %q want %q", got, want)
	}
	got = render(Docs(table[1:]), 2)
	want = "*2\r\n$6\r\nxgroup\r\n*8\r\n$7\r\nsummary\r\n$12\r\nA container.\r\n$5\r\nsince\r\n$5\r\n5.0.0\r\n" +
		"$5\r\ngroup\r\n$6\r\nstream\r\n$11\r\nsubcommands\r\n*2\r\n$13\r\nxgroup|create\r\n*6\r\n" +
		"$7\r\nsummary\r\n$16\r\nCreates a group.\r\n$5\r\nsince\r\n$5\r\n5.0.0\r\n$5\r\ngroup\r\n$6\r\nstream\r\n"
	if got != want {
		t.Errorf("DOCS: got %q want %q", got, want)
	}
}
