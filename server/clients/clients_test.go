package clients

import (
	"strings"
	"testing"
	"time"

	"streamd/server/resp"
)

func bs(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

// TestLine checks every field and their order (Redis 7.2's CLIENT LIST).
func TestLine(t *testing.T) {
	i := Info{ID: 7, Addr: "127.0.0.1:5000", LAddr: "127.0.0.1:6379", FD: 9, Name: "n",
		Age: 3999 * time.Millisecond, Idle: 1500 * time.Millisecond, DB: 2, Resp: 3,
		LibName: "go-redis", LibVer: "9.0"}
	want := "id=7 addr=127.0.0.1:5000 laddr=127.0.0.1:6379 fd=9 name=n age=3 idle=1 flags=N db=2 " +
		"sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 " +
		"omem=0 tot-mem=0 events=r cmd=NULL user=default redir=-1 resp=3 lib-name=go-redis lib-ver=9.0"
	if got := i.Line(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	i.Multi, i.Blocked, i.NoEvict, i.NoTouch, i.Cmd = true, true, true, true, "client|list"
	got := i.Line()
	for _, f := range []string{" flags=xbeT ", " multi=0 ", " cmd=client|list "} {
		if !strings.Contains(got, f) {
			t.Errorf("%q lacks %q", got, f)
		}
	}
	for _, c := range []struct {
		i    Info
		want string
	}{{Info{NoTouch: true}, "T"}, {Info{Blocked: true, NoEvict: true}, "be"}, {Info{Multi: true}, "x"}} {
		if got := c.i.Flags(); got != c.want {
			t.Errorf("%+v: flags %q, want %q", c.i, got, c.want)
		}
	}
}

func TestValidAttr(t *testing.T) {
	for s, want := range map[string]bool{"": true, "a-b_c!~": true, "a b": false, "a\nb": false, "\x7f": false, "é": false} {
		if ValidAttr([]byte(s)) != want {
			t.Errorf("ValidAttr(%q) != %v", s, want)
		}
	}
	if ValidateName([]byte("ok")) != nil || ValidateName([]byte("no way")) != ErrName {
		t.Error("ValidateName")
	}
	if a, err := ParseSetInfo([]byte("LIB-Ver"), []byte("1.0")); err != nil || a != LibVer {
		t.Errorf("ParseSetInfo: %v %v", a, err)
	}
	if a, err := ParseSetInfo([]byte("lib-name"), []byte("x")); err != nil || a != LibName {
		t.Errorf("ParseSetInfo: %v %v", a, err)
	}
	if _, err := ParseSetInfo([]byte("Foo"), []byte("x")); err != resp.ErrorReply("ERR Unrecognized option 'Foo'") {
		t.Errorf("ParseSetInfo: %v", err)
	}
	if _, err := ParseSetInfo([]byte("LIB-NAME"), []byte("a b")); err != resp.ErrorReply("ERR LIB-NAME cannot contain spaces, newlines or special characters.") {
		t.Errorf("ParseSetInfo: %v", err)
	}
}

func TestParseList(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  resp.Reply
	}{
		{nil, nil},
		{[]string{"TYPE", "Normal"}, nil},
		{[]string{"type", "pubsub"}, nil},
		{[]string{"ID", "1", "2"}, nil},
		{[]string{"type", "foo"}, resp.ErrorReply("ERR Unknown client type 'foo'")},
		{[]string{"id", "0"}, errInvalidID},
		{[]string{"id", "x"}, errInvalidID},
		{[]string{"type"}, resp.ErrSyntax},
		{[]string{"type", "normal", "id", "1"}, resp.ErrSyntax},
		{[]string{"id", "1", "type", "normal"}, errInvalidID},
		{[]string{"foo"}, resp.ErrSyntax},
	} {
		if _, err := ParseList(bs(c.args...)); err != c.err {
			t.Errorf("%q: %v, want %v", c.args, err, c.err)
		}
	}
	f, _ := ParseList(bs("id", "3", "5"))
	if !f.Match(Info{ID: 3}) || f.Match(Info{ID: 4}) || !f.Normal() {
		t.Error("ID filter")
	}
	f, _ = ParseList(bs("type", "MASTER"))
	if f.Normal() || f.Match(Info{ID: 1}) {
		t.Error("TYPE master matches")
	}
	if f, _ = ParseList(nil); !f.Match(Info{ID: 9}) {
		t.Error("no filter")
	}
}

func TestParseKill(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  resp.Reply
	}{
		{[]string{"id", "0"}, errKillID},
		{[]string{"id", "x"}, errKillID},
		{[]string{"type", "bad"}, resp.ErrorReply("ERR Unknown client type 'bad'")},
		{[]string{"skipme", "maybe"}, resp.ErrSyntax},
		{[]string{"maxage", "x"}, resp.ErrNotInteger},
		{[]string{"addr"}, resp.ErrSyntax},
		{[]string{"addr", "a", "laddr"}, resp.ErrSyntax},
		{[]string{"bogus", "1"}, resp.ErrSyntax},
	} {
		if _, err := ParseKill(bs(c.args...)); err != c.err {
			t.Errorf("%q: %v, want %v", c.args, err, c.err)
		}
	}
	f, err := ParseKill(bs("ID", "4", "TYPE", "Normal", "ADDR", "a:1", "LADDR", "b:2", "USER", "default", "SKIPME", "NO", "MAXAGE", "10"))
	want := KillFilter{ID: 4, Type: "normal", Addr: "a:1", LAddr: "b:2", User: "default", MaxAge: 10}
	if err != nil || f != want {
		t.Fatalf("%+v %v, want %+v", f, err, want)
	}
	if f, _ := ParseKill(bs("addr", "x")); !f.SkipMe {
		t.Error("SKIPME defaults to yes")
	}
	ok := Info{ID: 4, Addr: "a:1", LAddr: "b:2", Age: 10 * time.Second, User: "default"}
	if !f.Match(ok) {
		t.Error("no match")
	}
	for _, i := range []Info{
		{ID: 5, Addr: "a:1", LAddr: "b:2", Age: 10 * time.Second, User: "default"},
		{ID: 4, Addr: "a:1", LAddr: "b:2", Age: 10 * time.Second, User: "alice"},
		{ID: 4, Addr: "a:9", LAddr: "b:2", Age: 10 * time.Second},
		{ID: 4, Addr: "a:1", LAddr: "b:9", Age: 10 * time.Second},
		{ID: 4, Addr: "a:1", LAddr: "b:2", Age: 9999 * time.Millisecond},
	} {
		if f.Match(i) {
			t.Errorf("%+v matches", i)
		}
	}
	if f, _ := ParseKill(bs("type", "replica")); f.Match(ok) {
		t.Error("TYPE replica matches a normal client")
	}
	if f, _ := ParseKill(bs("maxage", "0")); !f.Match(Info{}) {
		t.Error("MAXAGE 0 filters")
	}
}

func TestOnOffUnblock(t *testing.T) {
	if on, ok := OnOff([]byte("ON")); !on || !ok {
		t.Error("ON")
	}
	if on, ok := OnOff([]byte("off")); on || !ok {
		t.Error("off")
	}
	if _, ok := OnOff([]byte("yes")); ok {
		t.Error("yes")
	}
	for _, c := range []struct {
		args    []string
		id      int64
		withErr bool
		err     resp.Reply
	}{
		{[]string{"12"}, 12, false, nil},
		{[]string{"12", "TIMEOUT"}, 12, false, nil},
		{[]string{"12", "Error"}, 12, true, nil},
		{[]string{"x"}, 0, false, resp.ErrNotInteger},
		{[]string{"12", "later"}, 0, false, errUnblockReason},
		{[]string{"12", "error", "x"}, 0, false, resp.ErrSyntax},
	} {
		id, we, err := ParseUnblock(bs(c.args...))
		if id != c.id || we != c.withErr || err != c.err {
			t.Errorf("%q: %d %v %v", c.args, id, we, err)
		}
	}
}

func TestHelpLines(t *testing.T) {
	l := HelpLines()
	if len(l) != 47 || l[0] != "CACHING (YES|NO)" || l[len(l)-1] != "    Will not touch LRU/LFU stats when this mode is on." {
		t.Fatalf("%d lines: %q", len(l), l)
	}
	l[0] = "x"
	if HelpLines()[0] == "x" {
		t.Error("HelpLines shares its slice")
	}
}
