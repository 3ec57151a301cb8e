package acl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// refRedis is a reference redis-server for the differential tests, started
// with an aclfile in a temporary directory.
type refRedis struct {
	c       *redis.Client
	aclfile string
	is72    bool // 7.2 or later: texts are compared exactly
	cat     *Catalog
}

func startRefRedis(t *testing.T) *refRedis {
	t.Helper()
	bin := testutil.RequireTool(t, "redis-server")
	dir := t.TempDir()
	aclfile := filepath.Join(dir, "users.acl")
	if err := os.WriteFile(aclfile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port := testutil.FreePort(t)
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
			"--aclfile", aclfile, "--logfile", filepath.Join(dir, "redis.log"))
		dieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), Protocol: 2, MaxRetries: -1})
		deadline := time.Now().Add(10 * time.Second)
		for {
			if lastErr = c.Ping(context.Background()).Err(); lastErr == nil {
				break
			}
			select {
			case <-exited:
			default:
				if time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
					continue
				}
			}
			break
		}
		if lastErr == nil {
			t.Cleanup(func() {
				c.Close()
				cmd.Process.Kill()
				<-exited
			})
			r := &refRedis{c: c, aclfile: aclfile}
			r.init(t)
			return r
		}
		c.Close()
		cmd.Process.Kill()
		<-exited
	}
	t.Fatalf("redis-server did not start: %v", lastErr)
	return nil
}

func (r *refRedis) do(args ...any) (any, error) {
	return r.c.Do(context.Background(), args...).Result()
}

func (r *refRedis) must(t *testing.T, args ...any) any {
	t.Helper()
	v, err := r.do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// init reads the server's version and builds the catalog from COMMAND.
func (r *refRedis) init(t *testing.T) {
	info := r.must(t, "INFO", "server").(string)
	m := regexp.MustCompile(`redis_version:(\d+)\.(\d+)`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no redis_version in INFO")
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	r.is72 = major > 7 || major == 7 && minor >= 2
	t.Logf("reference redis-server %s.%s (exact command-rule texts compared: %v)", m[1], m[2], r.is72)
	var cmds []Command
	var walk func(rows []any)
	walk = func(rows []any) {
		for _, row := range rows {
			f := row.([]any)
			c := Command{Name: f[0].(string)}
			for _, fl := range f[2].([]any) {
				if fl == "no_auth" {
					c.NoAuth = true
				}
			}
			for _, cat := range f[6].([]any) {
				c.Categories = append(c.Categories, strings.TrimPrefix(cat.(string), "@"))
			}
			cmds = append(cmds, c)
			if len(f) > 9 {
				walk(f[9].([]any))
			}
		}
	}
	walk(r.must(t, "COMMAND").([]any))
	r.cat = NewCatalog(cmds)
	t.Logf("catalog: %d commands and subcommands from COMMAND", len(cmds))
}

// getUser is ACL GETUSER's reply as a map (selectors as a list of maps).
func (r *refRedis) getUser(t *testing.T, name string) map[string]any {
	t.Helper()
	v := r.must(t, "ACL", "GETUSER", name)
	return pairs(v.([]any))
}

func pairs(v []any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(v); i += 2 {
		val := v[i+1]
		if l, ok := val.([]any); ok && v[i] == "selectors" {
			var sels []any
			for _, s := range l {
				sels = append(sels, pairs(s.([]any)))
			}
			val = sels
		}
		m[v[i].(string)] = val
	}
	return m
}

func strs(v any) []string {
	out := []string{}
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func fieldMap(fs []Field) map[string]any {
	m := map[string]any{}
	for _, f := range fs {
		m[f.Name] = f.Value
	}
	return m
}

func dropFlag(flags []string, drop string) []string {
	out := []string{}
	for _, f := range flags {
		if f != drop {
			out = append(out, f)
		}
	}
	return out
}

// compareUser compares ACL GETUSER and the ACL LIST line of name on the
// server with the engine's user. Against 7.2 every text must be equal;
// against 7.0 (which renders command rules from the bitmap and does not
// flag new users sanitize-payload) the command rules are compared by their
// effect: each side's text, applied on the other, gives the same result.
func (r *refRedis) compareUser(t *testing.T, us *Users, name, what string) {
	t.Helper()
	srv := r.getUser(t, name)
	mine := us.Get(name)
	if mine == nil {
		t.Errorf("%s: user %s missing in the engine", what, name)
		return
	}
	my := fieldMap(mine.GetUser())
	sflags, mflags := strs(srv["flags"]), my["flags"].([]string)
	if !r.is72 {
		sflags, mflags = dropFlag(sflags, "sanitize-payload"), dropFlag(mflags, "sanitize-payload")
	}
	if !reflect.DeepEqual(sflags, mflags) {
		t.Errorf("%s: flags redis %q engine %q", what, sflags, mflags)
	}
	if sp, mp := strs(srv["passwords"]), my["passwords"].([]string); !reflect.DeepEqual(sp, mp) {
		t.Errorf("%s: passwords redis %q engine %q", what, sp, mp)
	}
	r.compareSelector(t, what+" root", srv, my, mine.selectors[0])
	ssels, _ := srv["selectors"].([]any)
	msels := my["selectors"].([][]Field)
	if len(ssels) != len(msels) {
		t.Errorf("%s: %d selectors in redis, %d in the engine", what, len(ssels), len(msels))
		return
	}
	for i := range ssels {
		r.compareSelector(t, fmt.Sprintf("%s selector %d", what, i+1), ssels[i].(map[string]any), fieldMap(msels[i]), mine.selectors[i+1])
	}
	var line string
	for _, l := range strs(r.must(t, "ACL", "LIST")) {
		if strings.HasPrefix(l, "user "+name+" ") {
			line = l
		}
	}
	myLine := "user " + name + " " + mine.Describe()
	if r.is72 {
		if line != myLine {
			t.Errorf("%s: ACL LIST\nredis  %q\nengine %q", what, line, myLine)
		}
		return
	}
	// 7.0: the engine's line loaded into redis gives redis's user back,
	// and redis's line loaded into the engine gives the engine's user.
	r.must(t, "ACL", "DELUSER", "roundtrip")
	args := []any{"ACL", "SETUSER", "roundtrip", "reset"}
	for _, a := range strings.Split(mine.Describe(), " ") {
		args = append(args, a)
	}
	if _, err := r.do(args...); err != nil {
		// Redis cannot always read its own line back (a "%RW~*" pattern
		// shows as "~*", which then means allkeys): then it must refuse
		// its own line the same way.
		args = append([]any{"ACL", "SETUSER", "roundtrip", "reset"}, toAny(strings.Split(strings.TrimPrefix(line, "user "+name+" "), " "))...)
		if _, err2 := r.do(args...); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%s: redis refuses the engine's line %q: %v (its own: %v)", what, myLine, err, err2)
		}
		return
	}
	back := r.getUser(t, "roundtrip")
	srvNoSan := func(m map[string]any) map[string]any {
		c := map[string]any{}
		for k, v := range m {
			c[k] = v
		}
		c["flags"] = dropFlag(strs(m["flags"]), "sanitize-payload")
		return c
	}
	if !reflect.DeepEqual(srvNoSan(back), srvNoSan(srv)) {
		t.Errorf("%s: the engine's line %q loaded into redis gives\n%v\nwant\n%v", what, myLine, back, srv)
	}
	rt := us.Clone()
	rt.DelUser("roundtrip")
	if err := rt.SetUser("roundtrip", append([]string{"reset"}, strings.Split(strings.TrimPrefix(line, "user "+name+" "), " ")...)); err != nil {
		t.Errorf("%s: the engine refuses redis's line %q: %v", what, line, err)
		return
	}
	got := rt.Get("roundtrip")
	if !sameUser(got, mine) {
		t.Errorf("%s: redis's line %q loaded into the engine gives %q, want %q", what, line, got.Describe(), mine.Describe())
	}
}

func (r *refRedis) compareSelector(t *testing.T, what string, srv, my map[string]any, sel *selector) {
	t.Helper()
	for _, f := range []string{"keys", "channels"} {
		if srv[f] != my[f] {
			t.Errorf("%s: %s redis %q engine %q", what, f, srv[f], my[f])
		}
	}
	scmds, mcmds := srv["commands"].(string), my["commands"].(string)
	if r.is72 {
		if scmds != mcmds {
			t.Errorf("%s: commands redis %q engine %q", what, scmds, mcmds)
		}
		return
	}
	// Redis's text applied in the engine gives the same permissions.
	probe := newSelector(r.cat)
	for _, op := range strings.Fields(scmds) {
		if err := probe.set(op); err != nil {
			t.Errorf("%s: redis's commands %q: %v", what, scmds, err)
			return
		}
	}
	if !sameCommands(probe, sel) {
		t.Errorf("%s: redis's commands %q and the engine's %q allow different commands", what, scmds, mcmds)
	}
	// The engine's text applied in redis gives redis's text back.
	r.must(t, "ACL", "DELUSER", "probe")
	args := []any{"ACL", "SETUSER", "probe"}
	for _, op := range strings.Fields(mcmds) {
		args = append(args, op)
	}
	if _, err := r.do(args...); err != nil {
		t.Errorf("%s: redis refuses the engine's commands %q: %v", what, mcmds, err)
		return
	}
	if back := r.getUser(t, "probe")["commands"]; back != scmds {
		t.Errorf("%s: the engine's commands %q give %q in redis, want %q", what, mcmds, back, scmds)
	}
}

func toAny(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// sameCommands compares two selectors' command permissions.
func sameCommands(a, b *selector) bool {
	if !reflect.DeepEqual(a.allowed, b.allowed) || a.future != b.future {
		return false
	}
	norm := func(m map[int][]string) map[int][]string {
		out := map[int][]string{}
		for k, v := range m {
			var l []string
			for _, s := range v {
				l = append(l, strings.ToLower(s))
			}
			sort.Strings(l)
			out[k] = l
		}
		return out
	}
	return reflect.DeepEqual(norm(a.firstArgs), norm(b.firstArgs))
}

// sameUser compares users by effect (commands through sameCommands).
func sameUser(a, b *User) bool {
	if a.enabled != b.enabled || a.nopass != b.nopass || !reflect.DeepEqual(a.Passwords(), b.Passwords()) ||
		len(a.selectors) != len(b.selectors) {
		return false
	}
	for i := range a.selectors {
		x, y := a.selectors[i], b.selectors[i]
		if x.describeKeys() != y.describeKeys() || x.describeChannels() != y.describeChannels() || !sameCommands(x, y) {
			return false
		}
	}
	return true
}

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
