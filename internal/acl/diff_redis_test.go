package acl

// The differential tests compare the engine with a real redis-server:
// this file starts it and compares users; diff_cases_test.go has the cases.

import (
	"context"
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
