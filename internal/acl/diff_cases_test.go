package acl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// dryRunProbes are commands ACL DRYRUN is asked about for every rule set.
var dryRunProbes = [][]string{
	{"get", "r1"}, {"get", "w1"}, {"get", "x"}, {"get", "rw"},
	{"set", "w1", "v"}, {"set", "r1", "v"}, {"set", "x", "v"},
	{"getex", "r1"}, {"getdel", "w1"}, {"copy", "r1", "w1"}, {"copy", "w1", "r1"},
	{"lmove", "r1", "w1", "left", "right"}, {"lmove", "rw", "rw", "left", "right"},
	{"mget", "r1", "x", "r2"}, {"mset", "w1", "a", "x", "b"},
	{"xadd", "w1", "*", "f", "v"}, {"xadd", "r1", "*", "f", "v"}, {"xadd", "x", "*", "f", "v"},
	{"xdel", "w1", "1-1"}, {"xlen", "r1"}, {"xrange", "r1", "-", "+"}, {"xrevrange", "x", "+", "-"},
	{"xread", "streams", "r1", "w1", "0", "0"}, {"xread", "streams", "r1", "r2", "0", "0"},
	{"xreadgroup", "group", "g", "c", "streams", "r1", ">"}, {"xreadgroup", "group", "g", "c", "streams", "rw", ">"},
	{"xack", "rw", "g", "1-1"}, {"xgroup", "create", "w1", "g", "$"}, {"xgroup", "help"},
	{"xinfo", "stream", "r1"}, {"xinfo", "groups", "x"}, {"xinfo", "help"}, {"xtrim", "w1", "maxlen", "1"},
	{"xpending", "r1", "g"}, {"xclaim", "rw", "g", "c", "0", "1-1"}, {"xautoclaim", "rw", "g", "c", "0", "0"},
	{"xsetid", "w1", "1-1"},
	{"hget", "r1", "f"}, {"hset", "w1", "f", "v"}, {"select", "0"}, {"select", "1"},
	{"debug", "help"}, {"config", "get", "x"}, {"config", "set", "x", "y"}, {"client", "list"},
	{"acl", "list"}, {"acl", "whoami"}, {"auth", "a", "b"}, {"hello"}, {"ping"}, {"echo", "x"},
	{"del", "w1", "x"}, {"exists", "r1"}, {"type", "x"}, {"keys", "*"}, {"flushall"},
}

// keyRefs asks the server which keys argv touches, and how.
func (r *refRedis) keyRefs(argv []string) []KeyRef {
	args := []any{"COMMAND", "GETKEYSANDFLAGS"}
	for _, a := range argv {
		args = append(args, a)
	}
	v, err := r.do(args...)
	if err != nil {
		return nil
	}
	var refs []KeyRef
	for _, k := range v.([]any) {
		kf := k.([]any)
		ref := KeyRef{Key: []byte(kf[0].(string))}
		for _, f := range kf[1].([]any) {
			switch f {
			case "access":
				ref.Read = true
			case "insert", "update", "delete":
				ref.Write = true
			}
		}
		refs = append(refs, ref)
	}
	return refs
}

// compareDryRun compares ACL DRYRUN for every probe.
func (r *refRedis) compareDryRun(t *testing.T, us *Users, name, what string) int {
	t.Helper()
	u := us.Get(name)
	n := 0
	for _, argv := range dryRunProbes {
		args := []any{"ACL", "DRYRUN", name}
		for _, a := range argv {
			args = append(args, a)
		}
		v, err := r.do(args...)
		if err != nil {
			t.Errorf("%s: DRYRUN %v: %v", what, argv, err)
			continue
		}
		want := fmt.Sprint(v)
		if !r.is72 {
			want = strings.Replace(want, "This user ", "User "+name+" ", 1)
		}
		sub := ""
		if len(argv) > 1 {
			sub = argv[1]
		}
		got := "OK"
		if d := u.Check(argv[0], sub, r.keyRefs(argv)); d != nil {
			got = d.DryRun(name)
		}
		if got != want {
			t.Errorf("%s: DRYRUN %v: redis %q engine %q", what, argv, want, got)
		}
		n++
	}
	return n
}

// ruleSets are ACL SETUSER calls applied in turn to a fresh user; each
// step is compared (error text, GETUSER, LIST, DRYRUN).
var ruleSets = [][]string{
	{""},
	{"on nopass +@all ~* &*"},
	{"+@all -xadd"},
	{"-@all +@stream -xdel"},
	{"+xinfo|stream"},
	{"+@all -@hash -@slow +hget", "-@hash", "+@hash", "-@all", "-@string -@slow +@all"},
	{"-@all +@HASH +@hash +@HaSh"},
	{"-@all +hget -hset +hset -hget"},
	{"-@all +client|list +client|list +config|get +config +acl|list -acl"},
	{"-@all +select|0 +select|0 +debug|segfault +debug"},
	{"-@all -@dangerous"},
	{"-@all +config +config|get -config|set +config"},
	{"+@all -@write +xadd -xinfo|help", "+@stream"},
	{"-@all +@read -@stream +xinfo|stream +xrange"},
	{"+@all -@dangerous -@admin +acl|whoami"},
	{"+@read +@write -@keyspace +del"},
	{"-@all +select|0 +select|9", "-select"},
	{"-@all +xgroup|create +xgroup|destroy -xgroup|create +xgroup"},
	{"on >secret >other <secret ~r* %R~rw %W~w* &chan", "%W~rw"},
	{"%R~r* %W~w*", "resetkeys ~x"},
	{"%RW~* ~foo"},
	{"~"},
	{"%R"},
	{"%r~r*"},
	{"allkeys", "~foo"},
	{"&* &x"},
	{"allchannels", "resetchannels &a &b &a"},
	{"#" + HashPassword("p"), "!" + HashPassword("p"), "nopass", "resetpass >x"},
	{"#abc"},
	{"!abc"},
	{"<nope"},
	{"+nope"},
	{"+@nope"},
	{"-@NOPE"},
	{"bogus"},
	{"+xinfo|stream|x"},
	{"+xinfo|"},
	{"+xinfo|nope"},
	{"-xinfo|stream"},
	{"-select|0"},
	{"-xinfo|"},
	{"+|"},
	{"+"},
	{"-"},
	{"(on)"},
	{"(+get"},
	{"(+nope)"},
	{"+get ~r* (+set ~w*) (%R~x* +xrange +xread)"},
	{"-@all +get %R~r* (+set ~w*)", "clearselectors", "(+@stream %W~w* &c)"},
	{"on nopass -@all +@stream ~r* (~w* +@all -xdel)"},
	{"skip-sanitize-payload", "sanitize-payload"},
	{"reset", "on >a ~* +@all", "reset"},
	{"+@all -debug +debug|help -@dangerous"},
	{"+@all -@all +@all -get"},
	{"allcommands -get nocommands +set"},
	{"-@all +@connection -select +select|0"},
	{"-@all +@scripting -@slow +@blocking"},
	{"+@all %R~r* %W~w*"},
	{"+@all %R~r* %W~w* %RW~rw", "%W~r2"},
	{"+@all ~r* (%W~w* -@all +@write) (%R~x* +@read)"},
	{"+@all %R~* %W~w*"},
	{"+@all ~r* %R~rw %W~w* &chan", "%W~rw"},
	{"+@stream %R~r* %W~w1 ~rw"},
	{"-@all +get +set ~x* (+get ~r*) (+set ~w*)"},
	{"+@all -set ~r* (+set ~w* %R~r1)"},
	{"-@all +@pubsub +@transaction +@geo +@bitmap +@hyperloglog +@list +@sortedset +@set"},
}

func TestDifferentialSetUser(t *testing.T) {
	r := startRefRedis(t)
	us := NewUsers(r.cat)
	r.compareUser(t, us, "default", "default user")
	dry := 0
	for i, steps := range ruleSets {
		name := fmt.Sprintf("u%d", i)
		for j, step := range steps {
			what := fmt.Sprintf("set %d step %d %q", i, j, step)
			rules := strings.Fields(step)
			args := []any{"ACL", "SETUSER", name}
			for _, a := range rules {
				args = append(args, a)
			}
			_, serr := r.do(args...)
			merr := us.SetUser(name, rules)
			switch {
			case serr == nil && merr == nil:
			case serr != nil && merr != nil:
				if serr.Error() != "ERR "+merr.Error() {
					t.Errorf("%s: error\nredis  %q\nengine %q", what, serr, "ERR "+merr.Error())
				}
			default:
				t.Errorf("%s: redis %v, engine %v", what, serr, merr)
			}
			if us.Get(name) == nil {
				continue
			}
			r.compareUser(t, us, name, what)
			dry += r.compareDryRun(t, us, name, what)
			r.compareRules(t, us.Get(name), name, what)
		}
	}
	if names := strs(r.must(t, "ACL", "USERS")); !reflect.DeepEqual(dropFlag(dropFlag(dropFlag(names, "probe"), "roundtrip"), "rules"), us.Names()) {
		t.Errorf("ACL USERS redis %q engine %q", names, us.Names())
	}
	t.Logf("%d rule sets, %d DRYRUN probes compared", len(ruleSets), dry)
}

// compareRules checks that User.Rules, given to redis, rebuild the user
// redis has under name.
func (r *refRedis) compareRules(t *testing.T, u *User, name, what string) {
	t.Helper()
	r.must(t, "ACL", "DELUSER", "rules")
	args := append([]any{"ACL", "SETUSER", "rules"}, toAny(u.Rules())...)
	if _, err := r.do(args...); err != nil {
		t.Errorf("%s: redis refuses Rules %q: %v", what, u.Rules(), err)
		return
	}
	want, got := r.getUser(t, name), r.getUser(t, "rules")
	want["flags"], got["flags"] = dropFlag(strs(want["flags"]), "sanitize-payload"), dropFlag(strs(got["flags"]), "sanitize-payload")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: Rules %q give\n%v in redis, want\n%v", what, u.Rules(), got, want)
	}
}

// aclFiles are aclfile contents for ACL LOAD (the default user, when
// present, stays as it is so that the test's connection keeps working).
var aclFiles = []string{
	"user alice on >p ~a* +get\n",
	"user bob on +nope\nuser x bogus\n",
	"\n\nfoo bar\n  user c \"unbal\nuser\n",
	"user a on\nuser a off\n",
	"user a (+get\nuser b (+nope) x\n",
	"  user   z   on  \t  +get\t  \r\nuser y\ton\n",
	"user a on ~x (+get ~y*) ( +set ) (~a +get )\r\nuser b\r\n",
	"user a >x\nuser a2 on\n\n",
	"user default on nopass ~* &* +@all\nuser s on #" + HashPassword("s") + " %R~r* %W~w* resetchannels &c -@all +@stream -xdel\n",
	"user a on bogus +nope bogus2 #zz\n",
	"user a on nopass sanitize-payload ~* resetchannels +@all (~x -@all +get)\nuser b skip-sanitize-payload\n",
	"USER a on\n",
	"user a on\x00\nuser b bogus\n",
	"user a on\x00junk\nuser b\x00\n +get\nuser c " + strings.Repeat("~k", 600) + "\x00x\n",
	"user a +xinfo|stream +select|0 -@all +xinfo|help\n",
}

func TestDifferentialLoad(t *testing.T) {
	r := startRefRedis(t)
	for i, content := range aclFiles {
		what := fmt.Sprintf("aclfile %d %q", i, content)
		if err := os.WriteFile(r.aclfile, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, serr := r.do("ACL", "LOAD")
		mine, merr := ParseFileNamed(r.cat, r.aclfile, content)
		switch {
		case serr != nil && merr != nil:
			if serr.Error() != "ERR "+merr.Error() {
				t.Errorf("%s: error\nredis  %q\nengine %q", what, serr, "ERR "+merr.Error())
			}
			continue
		case serr != nil || merr != nil:
			t.Errorf("%s: redis %v, engine %v", what, serr, merr)
			continue
		}
		if names := strs(r.must(t, "ACL", "USERS")); !reflect.DeepEqual(names, mine.Names()) {
			t.Errorf("%s: users redis %q engine %q", what, names, mine.Names())
			continue
		}
		for _, n := range mine.Names() {
			r.compareUser(t, mine, n, what+" user "+n)
		}
		// ACL SAVE writes what the engine's FileText does (7.2) and
		// reads back into the engine as the same users.
		r.must(t, "ACL", "DELUSER", "probe", "roundtrip")
		r.must(t, "ACL", "SAVE")
		saved, err := os.ReadFile(r.aclfile)
		if err != nil {
			t.Fatal(err)
		}
		if r.is72 && string(saved) != mine.FileText() {
			t.Errorf("%s: ACL SAVE\nredis  %q\nengine %q", what, saved, mine.FileText())
		}
		back, err := ParseFileNamed(r.cat, r.aclfile, string(saved))
		if err != nil {
			t.Errorf("%s: redis's saved file does not parse: %v", what, err)
			continue
		}
		for _, n := range mine.Names() {
			if !sameUser(back.Get(n), mine.Get(n)) {
				t.Errorf("%s: saved user %s reads back as %q, want %q", what, n, back.Get(n).Describe(), mine.Get(n).Describe())
			}
		}
	}
}

func TestDifferentialCatGenPass(t *testing.T) {
	r := startRefRedis(t)
	if cats := strs(r.must(t, "ACL", "CAT")); !reflect.DeepEqual(cats, CategoryNames()) {
		t.Errorf("ACL CAT redis %q engine %q", cats, CategoryNames())
	}
	for _, cat := range CategoryNames() {
		want := strs(r.must(t, "ACL", "CAT", cat))
		sort.Strings(want)
		got, ok := r.cat.InCategory(strings.ToUpper(cat))
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("ACL CAT %s: redis %q engine %q", cat, want, got)
		}
	}
	if _, err := r.do("ACL", "CAT", "nope"); err == nil || err.Error() != "ERR Unknown category 'nope'" {
		t.Errorf("ACL CAT nope: %v", err)
	}
	if _, ok := r.cat.InCategory("nope"); ok {
		t.Error("InCategory(nope) is ok")
	}
	for _, bits := range []int{0, -1, 4097, 1 << 20} {
		_, serr := r.do("ACL", "GENPASS", bits)
		_, merr := GenPass(bits, make([]byte, 1<<18))
		if serr == nil || merr == nil || serr.Error() != "ERR "+merr.Error() {
			t.Errorf("GENPASS %d: redis %v engine %v", bits, serr, merr)
		}
	}
	for _, bits := range []int{1, 3, 4, 5, 8, 9, 63, 64, 65, 255, 256, 4095, 4096} {
		s := r.must(t, "ACL", "GENPASS", bits).(string)
		m, err := GenPass(bits, make([]byte, GenPassBytes(bits)))
		if err != nil || len(m) != len(s) {
			t.Errorf("GENPASS %d: redis %d chars, engine %d (%v)", bits, len(s), len(m), err)
		}
	}
}

// TestDifferentialLog runs denied commands as a user on redis and feeds
// the engine's Check results to a Log: the entries must group alike.
func TestDifferentialLog(t *testing.T) {
	r := startRefRedis(t)
	us := NewUsers(r.cat)
	rules := []string{"on", ">pw", "-@all", "+get", "+xadd", "+xinfo|help", "~r*"}
	args := []any{"ACL", "SETUSER", "lg"}
	for _, a := range rules {
		args = append(args, a)
	}
	r.must(t, args...)
	if err := us.SetUser("lg", rules); err != nil {
		t.Fatal(err)
	}
	r.must(t, "ACL", "LOG", "RESET")
	lc := redis.NewClient(&redis.Options{Addr: r.c.Options().Addr, Username: "lg", Password: "pw", Protocol: 2, MaxRetries: -1})
	defer lc.Close()
	log := NewLog(128)
	now := int64(1_000_000)
	script := [][]string{
		{"set", "r1", "v"}, {"set", "r1", "v"}, {"get", "x"}, {"set", "r1", "v"}, {"get", "x"},
		{"get", "r1"}, {"xadd", "y", "*", "f", "v"}, {"xinfo", "stream", "r1"}, {"xinfo", "help"},
		{"get", "x2"}, {"set", "r1", "v"}, {"xinfo", "stream", "r1"},
	}
	for _, argv := range script {
		cargs := []any{}
		for _, a := range argv {
			cargs = append(cargs, a)
		}
		_, serr := lc.Do(context.Background(), cargs...).Result()
		d := us.Get("lg").Check(argv[0], argv[1], r.keyRefs(argv))
		if (d == nil) != (serr == nil || !strings.HasPrefix(serr.Error(), "NOPERM")) {
			t.Errorf("%v: redis %v, engine %+v", argv, serr, d)
		}
		if d != nil {
			var rerr redis.Error
			if errors.As(serr, &rerr) && rerr.Error() != d.NoPerm("lg") && r.is72 {
				t.Errorf("%v: redis %q engine %q", argv, rerr.Error(), d.NoPerm("lg"))
			}
			log.Add(LogEntry{Reason: d.Reason.String(), Context: "toplevel", Object: d.Object, Username: "lg"}, now)
			now += 10
		}
	}
	srv := r.must(t, "ACL", "LOG").([]any)
	mine := log.Entries(-1)
	if len(srv) != len(mine) {
		t.Fatalf("ACL LOG: redis %d entries, engine %d", len(srv), len(mine))
	}
	for i, e := range srv {
		m := pairs(e.([]any))
		got := fmt.Sprint(mine[i].Count, mine[i].Reason, mine[i].Context, mine[i].Object, mine[i].Username)
		want := fmt.Sprint(m["count"], m["reason"], m["context"], m["object"], m["username"])
		if got != want {
			t.Errorf("ACL LOG entry %d: redis %s engine %s", i, want, got)
		}
		if r.is72 {
			if m["entry-id"] != mine[i].EntryID {
				t.Errorf("ACL LOG entry %d: entry-id redis %v engine %d", i, m["entry-id"], mine[i].EntryID)
			}
			var keys []string
			for j := 0; j < len(e.([]any)); j += 2 {
				keys = append(keys, e.([]any)[j].(string))
			}
			var myKeys []string
			for _, f := range mine[i].Fields(now) {
				myKeys = append(myKeys, f.Name)
			}
			if !reflect.DeepEqual(keys, myKeys) {
				t.Errorf("ACL LOG fields redis %q engine %q", keys, myKeys)
			}
		}
	}
}
