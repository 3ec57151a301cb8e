package observe

import (
	"strings"
	"testing"

	"streamd/server/resp"
)

func TestSlowLogTruncateTrimReset(t *testing.T) {
	var l SlowLog
	settings := func() (int64, int) { return -5, 3 }
	if got := l.Threshold(settings); got != -1 {
		t.Fatalf("threshold %d, want -1", got)
	}
	l.Reload(func() (int64, int) { return 7, 3 })
	if got := l.Threshold(settings); got != 7 {
		t.Fatalf("threshold %d, want 7", got)
	}
	long := [][]byte{[]byte(strings.Repeat("x", 130))}
	for range 40 {
		long = append(long, []byte("a"))
	}
	l.Add([][]byte{[]byte("PING")}, 1, "c:1", "")
	l.Add(long, 2, "c:2", "n")
	for i := range 5 {
		l.Add([][]byte{[]byte("X")}, int64(10+i), "c:3", "")
	}
	if l.Len() != 3 {
		t.Fatalf("len %d", l.Len())
	}
	got := l.Get(1)
	if len(got) != 1 || got[0].(resp.Array)[0] != resp.Int(6) || got[0].(resp.Array)[2] != resp.Int(14) {
		t.Fatalf("get 1: %v", got)
	}
	l.Reload(func() (int64, int) { return 0, 128 })
	l.Reset()
	l.Add(long, 3, "c:2", "n")
	e := l.Get(10)[0].(resp.Array)
	if e[0] != resp.Int(7) || string(e[4].(resp.Bulk)) != "c:2" || string(e[5].(resp.Bulk)) != "n" {
		t.Fatalf("entry %v", e)
	}
	args := e[3].(resp.Array)
	if len(args) != 32 || string(args[0].(resp.Bulk)) != strings.Repeat("x", 128)+"... (2 more bytes)" ||
		string(args[31].(resp.Bulk)) != "... (10 more arguments)" {
		t.Fatalf("args %v", args)
	}
}

func TestRedact(t *testing.T) {
	b := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, x := range s {
			out[i] = []byte(x)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		args [][]byte
		want string
	}{
		{"auth", b("AUTH", "pw"), "AUTH (redacted)"},
		{"acl|setuser", b("ACL", "SETUSER", "app", "on", ">pw"), "ACL SETUSER (redacted) (redacted) (redacted)"},
		{"auth", b("AUTH", "a", "b", "c"), "AUTH a b c"},
		{"hello", b("HELLO", "3", "SETNAME", "n", "AUTH", "u", "p"), "HELLO 3 SETNAME n AUTH (redacted) (redacted)"},
		{"hello", b("HELLO", "4", "AUTH", "u", "p"), "HELLO 4 AUTH u p"},
		{"config|set", b("CONFIG", "SET", "maxclients", "1", "RequirePass", "x"), "CONFIG SET maxclients 1 RequirePass (redacted)"},
		{"get", b("GET", "k"), "GET k"},
	} {
		orig := string(tc.args[len(tc.args)-1])
		if got := string(joinArgs(Redact(tc.name, tc.args))); got != tc.want {
			t.Errorf("%s: got %q want %q", tc.name, got, tc.want)
		}
		if string(tc.args[len(tc.args)-1]) != orig {
			t.Errorf("%s: args changed", tc.name)
		}
	}
}

func joinArgs(args [][]byte) []byte {
	var out []byte
	for i, a := range args {
		if i > 0 {
			out = append(out, ' ')
		}
		out = append(out, a...)
	}
	return out
}
