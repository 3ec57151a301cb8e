package acl

import (
	"reflect"
	"strings"
	"testing"
)

// TestSetUserErrors: the texts are redis-server's replies (checked by
// hand against it and by TestDifferentialSetUser), without "ERR ".
func TestSetUserErrors(t *testing.T) {
	const hashMsg = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	for _, tc := range []struct{ rules, want string }{
		{"%~foo", "Error in ACL SETUSER modifier '%~foo': Syntax error"},
		{"%RR~foo", "Error in ACL SETUSER modifier '%RR~foo': Syntax error"},
		{"%X~foo", "Error in ACL SETUSER modifier '%X~foo': Syntax error"},
		{"~* ~foo", "Error in ACL SETUSER modifier '~foo': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"},
		{"allkeys %R~x", "Error in ACL SETUSER modifier '%R~x': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"},
		{"&* &x", "Error in ACL SETUSER modifier '&x': Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"},
		{"#abc", "Error in ACL SETUSER modifier '#abc': " + hashMsg},
		{"!abc", "Error in ACL SETUSER modifier '!abc': " + hashMsg},
		{"#" + strings.ToUpper(HashPassword("x")), "Error in ACL SETUSER modifier '#" + strings.ToUpper(HashPassword("x")) + "': " + hashMsg},
		{"<nopex", "Error in ACL SETUSER modifier '<nopex': The password you are trying to remove from the user does not exist"},
		{"+select|0|1", "Error in ACL SETUSER modifier '+select|0|1': Unknown command or category name in ACL"},
		{"+xinfo|stream|x", "Error in ACL SETUSER modifier '+xinfo|stream|x': Allowing first-arg of a subcommand is not supported"},
		{"+xinfo|", "Error in ACL SETUSER modifier '+xinfo|': Syntax error"},
		{"+xinfo|nope", "Error in ACL SETUSER modifier '+xinfo|nope': Unknown command or category name in ACL"},
		{"-select|0", "Error in ACL SETUSER modifier '-select|0': Unknown command or category name in ACL"},
		{"-xinfo|", "Error in ACL SETUSER modifier '-xinfo|': Unknown command or category name in ACL"},
		{"+nope", "Error in ACL SETUSER modifier '+nope': Unknown command or category name in ACL"},
		{"+@nope", "Error in ACL SETUSER modifier '+@nope': Unknown command or category name in ACL"},
		{"-@NOPE", "Error in ACL SETUSER modifier '-@NOPE': Unknown command or category name in ACL"},
		{"bogus", "Error in ACL SETUSER modifier 'bogus': Syntax error"},
		{"(on)", "Error in ACL SETUSER modifier '(on)': Syntax error"},
		{"(+get ~x*) (+nope ~y)", "Error in ACL SETUSER modifier '(+nope ~y)': Unknown command or category name in ACL"},
		{"(+get", "Unmatched parenthesis in acl selector starting at '(+get'."},
		{"+get (~x +set", "Unmatched parenthesis in acl selector starting at '(~x'."},
		{"+|", "Error in ACL SETUSER modifier '+|': Unknown command or category name in ACL"},
		{"+", "Error in ACL SETUSER modifier '+': Unknown command or category name in ACL"},
		{"-", "Error in ACL SETUSER modifier '-': Unknown command or category name in ACL"},
		{")", "Error in ACL SETUSER modifier ')': Syntax error"},
	} {
		us := NewUsers(testCatalog())
		err := us.SetUser("t", strings.Fields(tc.rules))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v\nwant %q", tc.rules, err, tc.want)
		}
		if us.Get("t") != nil {
			t.Errorf("%q: the failed SETUSER created the user", tc.rules)
		}
	}
	us := NewUsers(testCatalog())
	if err := us.SetUser("a b", nil); err == nil || err.Error() != "Usernames can't contain spaces or null characters" {
		t.Errorf("space in name: %v", err)
	}
}

func TestSetUserIsAtomic(t *testing.T) {
	us := NewUsers(testCatalog())
	u := setUser(t, us, "t", "on", ">p", "~a*", "+get")
	before := u.Describe()
	if err := us.SetUser("t", []string{"off", "resetpass", "+set", "+nope"}); err == nil {
		t.Fatal("no error")
	}
	if got := us.Get("t").Describe(); got != before {
		t.Fatalf("after a failed SETUSER: %q, want %q", got, before)
	}
}

func TestDescribeAndGetUser(t *testing.T) {
	us := NewUsers(testCatalog())
	h := HashPassword("p")
	for _, tc := range []struct{ rules, want string }{
		{"", "off sanitize-payload resetchannels -@all"},
		{"on nopass", "on nopass sanitize-payload resetchannels -@all"},
		{"on >p >p", "on sanitize-payload #" + h + " resetchannels -@all"},
		{"on >p nopass", "on nopass sanitize-payload resetchannels -@all"},
		{"nopass >p", "off sanitize-payload #" + h + " resetchannels -@all"},
		{"#" + h + " !" + h, "off sanitize-payload resetchannels -@all"},
		{"skip-sanitize-payload", "off skip-sanitize-payload resetchannels -@all"},
		{"~", "off sanitize-payload ~ resetchannels -@all"},
		{"%R", "off sanitize-payload %R~ resetchannels -@all"},
		{"%r~foo %w~bar %RW~baz %WR~qux", "off sanitize-payload %R~foo %W~bar ~baz ~qux resetchannels -@all"},
		{"%R~a %W~a", "off sanitize-payload ~a resetchannels -@all"},
		{"~a %R~a", "off sanitize-payload ~a resetchannels -@all"},
		{"%RW~* ~foo", "off sanitize-payload ~* ~foo resetchannels -@all"},
		{"~a ~* ", "off sanitize-payload ~* resetchannels -@all"},
		{"allkeys resetkeys ~b", "off sanitize-payload ~b resetchannels -@all"},
		{"&a &b &a", "off sanitize-payload resetchannels &a &b -@all"},
		{"&a allchannels", "off sanitize-payload &* -@all"},
		{"allchannels resetchannels", "off sanitize-payload resetchannels -@all"},
		{"+get (~x* +set) (%R~y &c)", "off sanitize-payload resetchannels -@all +get (~x* resetchannels -@all +set) (%R~y resetchannels &c -@all)"},
		{"(+set) clearselectors", "off sanitize-payload resetchannels -@all"},
		{"() (  )", "off sanitize-payload resetchannels -@all (resetchannels -@all) (resetchannels -@all)"},
		{`("+get" ~'x y')`, "off sanitize-payload resetchannels -@all (~x y resetchannels -@all +get)"},
		{"on >p ~* &* +@all (+get) reset", "off sanitize-payload resetchannels -@all"},
	} {
		us.DelUser("t")
		u := setUser(t, us, "t", splitRules(tc.rules)...)
		if got := u.Describe(); got != tc.want {
			t.Errorf("%q: Describe %q\nwant %q", tc.rules, got, tc.want)
		}
	}
	u := setUser(t, us, "g", "on", ">p", "%R~r*", "~x", "&c1", "&c2", "+get", "(+set ~w* allchannels)", "(-@all)")
	want := []Field{
		{"flags", []string{"on", "sanitize-payload"}},
		{"passwords", []string{h}},
		{"commands", "-@all +get"},
		{"keys", "%R~r* ~x"},
		{"channels", "&c1 &c2"},
		{"selectors", [][]Field{
			{{"commands", "-@all +set"}, {"keys", "~w*"}, {"channels", "&*"}},
			{{"commands", "-@all"}, {"keys", ""}, {"channels", ""}},
		}},
	}
	if got := u.GetUser(); !reflect.DeepEqual(got, want) {
		t.Errorf("GetUser\n%v\nwant\n%v", got, want)
	}
	d := NewUsers(testCatalog()).Get("default").GetUser()
	if d[0].Value.([]string)[2] != "sanitize-payload" || d[3].Value != "~*" || d[4].Value != "&*" || len(d[5].Value.([][]Field)) != 0 {
		t.Errorf("default GetUser %v", d)
	}
}

// splitRules splits like redis-cli would, keeping a parenthesised group
// with quotes in one argument only when written without spaces.
func splitRules(s string) []string {
	if strings.Contains(s, `"`) {
		return []string{s}
	}
	return strings.Fields(s)
}

func TestUsersSet(t *testing.T) {
	us := NewUsers(testCatalog())
	setUser(t, us, "bob", "on")
	setUser(t, us, "alice", "on", "nopass")
	if got := us.Names(); !reflect.DeepEqual(got, []string{"alice", "bob", "default"}) {
		t.Errorf("Names %q", got)
	}
	wantList := []string{
		"user alice on nopass sanitize-payload resetchannels -@all",
		"user bob on sanitize-payload resetchannels -@all",
		"user default on nopass sanitize-payload ~* &* +@all",
	}
	if got := us.List(); !reflect.DeepEqual(got, wantList) {
		t.Errorf("List %q", got)
	}
	if got := us.FileText(); got != strings.Join(wantList, "\n")+"\n" {
		t.Errorf("FileText %q", got)
	}
	c := us.Clone()
	setUser(t, c, "bob", "+get", "~k")
	c.DelUser("alice")
	if us.Get("bob").Describe() != "on sanitize-payload resetchannels -@all" || us.Get("alice") == nil {
		t.Error("changing a clone changed the original")
	}
	if !c.DelUser("bob") || c.DelUser("bob") || c.Get("bob") != nil {
		t.Error("DelUser")
	}
	if us.Catalog() == nil || !us.Catalog().Has("XINFO|STREAM") || us.Catalog().Has("xinfo|nope") {
		t.Error("Catalog.Has")
	}
}

func TestPasswords(t *testing.T) {
	if got := HashPassword("p"); got != "148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940" {
		t.Fatalf("HashPassword(p) = %s", got)
	}
	us := NewUsers(testCatalog())
	u := setUser(t, us, "t", "on", ">one", "#"+HashPassword("two"))
	for pass, ok := range map[string]bool{"one": true, "two": true, "three": false, "": false} {
		if u.CheckPassword(pass) != ok {
			t.Errorf("CheckPassword(%q) != %v", pass, ok)
		}
	}
	if u.NoPass() || !u.Enabled() || u.Name() != "t" {
		t.Error("flags")
	}
	u = setUser(t, us, "t", "<one", "off")
	if u.CheckPassword("one") || !u.CheckPassword("two") || u.Enabled() {
		t.Error("after <one")
	}
	u = setUser(t, us, "t", "resetpass")
	if u.CheckPassword("two") || u.CheckPassword("") || len(u.Passwords()) != 0 {
		t.Error("after resetpass")
	}
	if u = setUser(t, us, "t", "nopass"); !u.CheckPassword("anything") {
		t.Error("nopass")
	}
}

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"", nil, true},
		{"  a  b ", []string{"a", "b"}, true},
		{`"a b" 'c d'`, []string{"a b", "c d"}, true},
		{`"\x41\n\t\"" 'it\'s'`, []string{"A\n\t\"", "it's"}, true},
		{`"abc`, nil, false},
		{`'abc`, nil, false},
		{`"a"b`, nil, false},
		{`a"b"`, []string{"ab"}, true},
	} {
		got, ok := splitArgs(tc.in)
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCatalog(t *testing.T) {
	if n := CategoryNames(); len(n) != 21 || n[0] != "keyspace" || n[20] != "scripting" {
		t.Fatalf("CategoryNames %q", n)
	}
	c := testCatalog()
	got, ok := c.InCategory("STREAM")
	want := []string{"xadd", "xdel", "xinfo|groups", "xinfo|help", "xinfo|stream", "xrange", "xread"}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("InCategory(stream) = %q, %v", got, ok)
	}
	if got, ok := c.InCategory("pubsub"); !ok || len(got) != 0 || got == nil {
		t.Errorf("InCategory(pubsub) = %#v, %v", got, ok)
	}
	if _, ok := c.InCategory("@stream"); ok {
		t.Error("InCategory(@stream): ACL CAT takes the name without @")
	}
	if _, ok := c.InCategory("nope"); ok {
		t.Error("InCategory(nope)")
	}
	// A subcommand row without its container gets one.
	c2 := NewCatalog([]Command{{Name: "OBJECT|ENCODING", Categories: []string{"@keyspace", "bogus"}}})
	if !c2.Has("object") || !c2.Has("object|encoding") {
		t.Error("implicit container")
	}
	if got, _ := c2.InCategory("keyspace"); !reflect.DeepEqual(got, []string{"object|encoding"}) {
		t.Errorf("InCategory(keyspace) = %q", got)
	}
}

// TestRulesRoundTrip: User.Rules rebuilds the same user, including where
// Describe's text does not read back.
func TestRulesRoundTrip(t *testing.T) {
	cat := testCatalog()
	for _, rules := range [][]string{
		{},
		{"on", "nopass"},
		{"%RW~*", "~foo", "%R~r*", "%W~w*", "&*"},
		{"on", ">a", ">b", "skip-sanitize-payload", "~k", "&c1", "&c2", "+@all", "-@hash", "+hget", "-xinfo|help", "+select|0"},
		{"-@all", "+select|ABC", "(+get ~x)", `("+get" ~'x y' "%R~a\"b\\c")`, "(%R~y &* -@all +@stream)", "()"},
		{"allkeys", "allchannels", "allcommands", "-debug"},
	} {
		us := NewUsers(cat)
		u := setUser(t, us, "t", rules...)
		other := NewUsers(cat)
		setUser(t, other, "t", "on", ">zzz", "~old", "(+set)")
		got := setUser(t, other, "t", u.Rules()...)
		if !sameUser(got, u) || got.Describe() != u.Describe() || got.sanitize != u.sanitize {
			t.Errorf("%q: Rules %q rebuild %q, want %q", rules, u.Rules(), got.Describe(), u.Describe())
		}
	}
}
