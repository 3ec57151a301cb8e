package server

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// slowArgs returns the argument lists of a SLOWLOG GET reply, newest first.
func slowArgs(t *testing.T, v Value) [][]string {
	t.Helper()
	if v.Kind != '*' {
		t.Fatalf("SLOWLOG GET: %s", v)
	}
	var out [][]string
	for _, e := range v.Elems {
		if len(e.Elems) != 6 {
			t.Fatalf("entry has %d fields: %s", len(e.Elems), e)
		}
		var args []string
		for _, a := range e.Elems[3].Elems {
			args = append(args, a.Str)
		}
		out = append(out, args)
	}
	return out
}

// TestSlowlogCommands covers SLOWLOG GET/LEN/RESET/HELP over raw RESP:
// entry shape, truncation, redaction, client name and address, the
// max-len trim, the threshold's -1 and default, and Redis's error texts.
func TestSlowlogCommands(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"SLOWLOG", "LEN"}, "(integer) 0"},
		{[]string{"CONFIG", "SET", "slowlog-log-slower-than", "0"}, "+OK"},
		{[]string{"CLIENT", "SETNAME", "me"}, "+OK"},
	})
	long := strings.Repeat("a", 200)
	many := []string{"XADD", "s", "*"}
	for i := 1; i <= 40; i++ {
		many = append(many, strconv.Itoa(i))
	}
	for _, args := range [][]string{{"XADD", "s", "1-1", "f", long}, many,
		{"AUTH", "secret"}, {"HELLO", "3", "AUTH", "default", "pw"}, {"HELLO", "2"}} {
		if _, err := c.Do(args...); err != nil {
			t.Fatal(err)
		}
	}
	v, err := c.Do("SLOWLOG", "GET")
	if err != nil {
		t.Fatal(err)
	}
	got := slowArgs(t, v)
	wantMany := append(append([]string{}, many[:31]...), "... (12 more arguments)")
	want := [][]string{
		{"HELLO", "2"},
		{"HELLO", "3", "AUTH", "(redacted)", "(redacted)"},
		{"AUTH", "(redacted)"},
		wantMany,
		{"XADD", "s", "1-1", "f", strings.Repeat("a", 128) + "... (72 more bytes)"},
		{"CLIENT", "SETNAME", "me"},
		{"CONFIG", "SET", "slowlog-log-slower-than", "0"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("SLOWLOG GET args:\n got %q\nwant %q", got, want)
	}
	// id, time, duration, client address and name.
	local := c.nc.LocalAddr().String()
	for i, e := range v.Elems {
		if e.Elems[0].Int != int64(len(v.Elems)-1-i) {
			t.Errorf("entry %d id %d", i, e.Elems[0].Int)
		}
		if d := time.Since(time.Unix(e.Elems[1].Int, 0)); d < -2*time.Second || d > time.Minute {
			t.Errorf("entry %d time %d", i, e.Elems[1].Int)
		}
		if e.Elems[2].Kind != ':' || e.Elems[2].Int < 0 {
			t.Errorf("entry %d duration %s", i, e.Elems[2])
		}
		if e.Elems[4].Str != local {
			t.Errorf("entry %d addr %q, want %q", i, e.Elems[4].Str, local)
		}
		wantName := "me"
		if i == len(v.Elems)-1 {
			wantName = "" // CONFIG SET ran before CLIENT SETNAME
		}
		if e.Elems[5].Str != wantName {
			t.Errorf("entry %d name %q", i, e.Elems[5].Str)
		}
	}
	if one := mustValue(t, c, "SLOWLOG", "GET", "1"); len(one.Elems) != 1 {
		t.Errorf("SLOWLOG GET 1: %s", one)
	}
	runSteps(t, c, []step{
		{[]string{"SLOWLOG", "GET", "0"}, "[]"},
		{[]string{"SLOWLOG", "GET", "-2"}, "(error) ERR count should be greater than or equal to -1"},
		{[]string{"SLOWLOG", "GET", "x"}, "(error) ERR count should be greater than or equal to -1"},
		{[]string{"SLOWLOG", "get", "1", "2"}, "(error) ERR unknown subcommand or wrong number of arguments for 'get'. Try SLOWLOG HELP."},
		{[]string{"SLOWLOG", "LEN", "x"}, "(error) ERR wrong number of arguments for 'slowlog|len' command"},
		{[]string{"SLOWLOG", "foo"}, "(error) ERR unknown subcommand 'foo'. Try SLOWLOG HELP."},
		{[]string{"SLOWLOG"}, "(error) ERR wrong number of arguments for 'slowlog' command"},
		{[]string{"SLOWLOG", "RESET"}, "+OK"},
		// RESET is logged once it ran, as in Redis.
		{[]string{"SLOWLOG", "LEN"}, "(integer) 1"},
		{[]string{"CONFIG", "SET", "slowlog-max-len", "2"}, "+OK"},
		{[]string{"PING"}, "+PONG"},
		{[]string{"PING"}, "+PONG"},
		{[]string{"SLOWLOG", "LEN"}, "(integer) 2"},
		{[]string{"CONFIG", "SET", "requirepass", "pw", "maxclients", "99"}, "+OK"},
		// Off from the CONFIG SET that turns it off, as in Redis.
		{[]string{"CONFIG", "SET", "slowlog-log-slower-than", "-1"}, "+OK"},
		{[]string{"PING"}, "+PONG"},
	})
	v = mustValue(t, c, "SLOWLOG", "GET", "-1")
	got = slowArgs(t, v)
	want = [][]string{{"CONFIG", "SET", "requirepass", "(redacted)", "maxclients", "99"}, {"SLOWLOG", "LEN"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after max-len 2 and threshold -1:\n got %q\nwant %q", got, want)
	}
	// IDs go on across RESET and the trim.
	if id := v.Elems[0].Elems[0].Int; id < 12 {
		t.Errorf("newest id %d", id)
	}
	// The default threshold (10ms) leaves fast commands out.
	runSteps(t, c, []step{
		{[]string{"CONFIG", "SET", "requirepass", "", "slowlog-log-slower-than", "10000", "slowlog-max-len", "128"}, "+OK"},
		{[]string{"SLOWLOG", "RESET"}, "+OK"},
		{[]string{"PING"}, "+PONG"},
		{[]string{"SLOWLOG", "LEN"}, "(integer) 0"},
	})
	help := mustValue(t, c, "SLOWLOG", "HELP")
	if len(help.Elems) != 12 || help.Elems[0].Str != "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" {
		t.Errorf("SLOWLOG HELP: %s", help)
	}
}

// mustValue runs a command and returns its reply.
func mustValue(t *testing.T, c *respConn, args ...string) Value {
	t.Helper()
	v, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return v
}

// TestSlowlogBlocking: a blocking read that was woken is logged with its
// own time (the wait left out); one that timed out is not logged, as in
// Redis 7.0.
func TestSlowlogBlocking(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, w := dial(t, addr), dial(t, addr)
	runSteps(t, c, []step{{[]string{"CONFIG", "SET", "slowlog-log-slower-than", "0"}, "+OK"}})
	if v := mustValue(t, c, "XREAD", "BLOCK", "60", "STREAMS", "nothing", "$"); !v.Nil {
		t.Fatalf("timed-out XREAD: %s", v)
	}
	if err := c.Send("XREAD", "BLOCK", "10000", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		if s := mustDo(t, w, "INFO", "clients"); !strings.Contains(s, "blocked_clients:1") {
			return fmt.Errorf("not blocked yet")
		}
		return nil
	})
	blockedFor := 300 * time.Millisecond
	time.Sleep(blockedFor) // the wait the slow log must leave out
	mustValue(t, w, "XADD", "s", "1-1", "f", "v")
	if v, err := c.Receive(10 * time.Second); err != nil || v.Kind != '*' {
		t.Fatalf("woken XREAD: %v %v", v, err)
	}
	v := mustValue(t, c, "SLOWLOG", "GET", "-1")
	var found bool
	for _, e := range v.Elems {
		args := e.Elems[3].Elems
		if args[0].Str != "XREAD" {
			continue
		}
		if args[2].Str == "60" {
			t.Errorf("timed-out XREAD logged: %s", e)
		}
		if args[2].Str == "10000" {
			found = true
			if us := e.Elems[2].Int; us >= blockedFor.Microseconds() {
				t.Errorf("woken XREAD logged %dµs: its wait counted", us)
			}
		}
	}
	if !found {
		t.Errorf("woken XREAD not logged: %s", v)
	}
}

// TestSlowlogGoRedis reads the log through go-redis's parser (RESP2 and
// RESP3), pipelined writes included.
func TestSlowlogGoRedis(t *testing.T) {
	_, addr := startTestServer(t, nil)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, ClientName: "gr" + strconv.Itoa(proto)})
		t.Cleanup(func() { c.Close() })
		must(t, "config set", c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err())
		must(t, "reset", c.SlowLogReset(ctx).Err())
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := 1; i <= 5; i++ {
				p.XAdd(ctx, &redis.XAddArgs{Stream: "p", ID: fmt.Sprintf("%d-%d", proto, i), Values: []string{"f", "v"}})
			}
			return nil
		})
		must(t, "pipeline", err)
		logs, err := c.SlowLogGet(ctx, -1).Result()
		must(t, "SLOWLOG GET", err)
		// The newest five are the pipeline's (go-redis may have set up
		// another connection first: HELLO, CLIENT SETNAME/SETINFO).
		if len(logs) < 6 {
			t.Fatalf("RESP%d: %d entries: %+v", proto, len(logs), logs)
		}
		for i, l := range logs[:5] {
			want := []string{"xadd", "p", fmt.Sprintf("%d-%d", proto, 5-i), "f", "v"}
			wantEq(t, "args", l.Args, want)
			wantEq(t, "name", l.ClientName, "gr"+strconv.Itoa(proto))
			if _, _, err := net.SplitHostPort(l.ClientAddr); err != nil {
				t.Errorf("addr %q", l.ClientAddr)
			}
			if time.Since(l.Time) > time.Minute || l.Duration < 0 {
				t.Errorf("time %v duration %v", l.Time, l.Duration)
			}
		}
		wantEq(t, "oldest", logs[len(logs)-1].Args, []string{"slowlog", "reset"})
		n, err := c.SlowLogLen(ctx).Result()
		must(t, "SLOWLOG LEN", err)
		wantEq(t, "len", n, int64(len(logs)+1))
	}
}

// TestSlowlogVsRedis runs the same commands on a real redis-server and on
// streamd with every command logged and compares SLOWLOG GET: entry shape,
// arguments (truncation, redaction), client name; ids, times, durations
// and ports are normalised.
func TestSlowlogVsRedis(t *testing.T) {
	raddr := startRedis(t)
	_, saddr := startTestServer(t, nil)
	script := [][]string{
		{"CONFIG", "SET", "slowlog-log-slower-than", "0"},
		{"CLIENT", "SETNAME", "diff"},
		{"XADD", "s", "1-1", "f", strings.Repeat("x", 300)},
		append([]string{"XADD", "s", "2-1"}, strings.Fields(strings.Repeat("a b ", 25))...),
		{"XLEN", "s"},
		{"AUTH", "nopass"},
		{"AUTH", "a", "b", "c"},
		{"HELLO", "3", "AUTH", "default", "x"},
		{"HELLO", "3", "AUTH", "x"},
		{"HELLO", "2", "SETNAME", "diff2"},
		{"PING", "a\x00b"},
		{"XREAD", "BLOCK", "20", "STREAMS", "none", "$"},
		{"SLOWLOG", "LEN"},
		{"CONFIG", "SET", "requirepass", "pw", "maxclients", "100"},
		{"CONFIG", "SET", "requirepass", ""},
	}
	run := func(addr string) (Value, []string) {
		c := dial(t, addr)
		var replies []string
		for _, args := range script {
			replies = append(replies, mustDo(t, c, args...))
		}
		return mustValue(t, c, "SLOWLOG", "GET", "-1"), replies
	}
	rv, rr := run(raddr)
	sv, sr := run(saddr)
	for i := range script {
		if i < len(rr) && i < len(sr) && rr[i] != sr[i] && script[i][0] != "HELLO" {
			t.Errorf("%q: redis %s, streamd %s", script[i], rr[i], sr[i])
		}
	}
	norm := func(v Value) string {
		var b strings.Builder
		for _, e := range v.Elems {
			fmt.Fprintf(&b, "%d fields:", len(e.Elems))
			for i, f := range e.Elems {
				switch i {
				case 0, 1, 2:
					fmt.Fprintf(&b, " %c", f.Kind)
				case 4:
					b.WriteString(" " + regexp.MustCompile(`:\d+$`).ReplaceAllString(f.Str, ":P"))
				default:
					b.WriteString(" " + f.String())
				}
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	if r, s := norm(rv), norm(sv); r != s {
		t.Errorf("SLOWLOG GET differs:\nredis:\n%s\nstreamd:\n%s", r, s)
	}
}
