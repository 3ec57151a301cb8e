package server

import (
	"context"
	"net"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"streamd/internal/testutil"
	"streamd/server/cmdinfo"
)

// redis8DocTokens are, per command with Redis 8 docs (cmdinfo/redis8.json),
// tokens its COMMAND DOCS arguments must name, and the history entries'
// versions after 7.0.
var redis8DocTokens = map[string]struct {
	tokens  []string
	history []string
}{
	"xadd":        {[]string{"NOMKSTREAM", "KEEPREF", "DELREF", "ACKED", "IDMPAUTO", "IDMP", "MAXLEN", "MINID", "LIMIT", "*"}, []string{"8.2.0", "8.6.0"}},
	"xtrim":       {[]string{"MAXLEN", "MINID", "LIMIT", "KEEPREF", "DELREF", "ACKED"}, []string{"8.2.0"}},
	"xread":       {[]string{"COUNT", "MAXCOUNT", "MAXSIZE", "BLOCK", "STREAMS"}, []string{"8.10.0"}},
	"xreadgroup":  {[]string{"GROUP", "COUNT", "MAXCOUNT", "MAXSIZE", "BLOCK", "CLAIM", "NOACK", "STREAMS"}, []string{"8.4.0", "8.10.0"}},
	"xdelex":      {[]string{"KEEPREF", "DELREF", "ACKED", "IDS"}, nil},
	"xackdel":     {[]string{"KEEPREF", "DELREF", "ACKED", "IDS"}, nil},
	"xnack":       {[]string{"SILENT", "FAIL", "FATAL", "IDS", "RETRYCOUNT", "FORCE"}, nil},
	"xcfgset":     {[]string{"IDMP-DURATION", "IDMP-MAXSIZE"}, nil},
	"xidmprecord": {nil, nil},
}

// mapGet is the value of key in a map Value (RESP3 map or RESP2 flat array).
func mapGet(v Value, key string) (Value, bool) {
	for i := 0; i+1 < len(v.Elems); i += 2 {
		if v.Elems[i].Str == key {
			return v.Elems[i+1], true
		}
	}
	return Value{}, false
}

// docTokens collects the tokens of an argument list, nested ones included.
func docTokens(args Value, into map[string]bool) {
	for _, a := range args.Elems {
		if tok, ok := mapGet(a, "token"); ok {
			into[tok.Str] = true
		}
		if sub, ok := mapGet(a, "arguments"); ok {
			docTokens(sub, into)
		}
	}
}

// TestRedis8CommandDocs: COMMAND DOCS of the stream commands show Redis 8's
// arguments and history (RESP2 and RESP3): the tokens of every new option,
// the key argument's key spec index, and for the Redis 8 commands the
// row's summary, since and group ahead of complexity and arguments.
func TestRedis8CommandDocs(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	for _, proto := range []string{"2", "3"} {
		c := dial(t, addr)
		if _, err := c.Do("HELLO", proto); err != nil {
			t.Fatal(err)
		}
		for name, want := range redis8DocTokens {
			if !cmdinfo.HasRedis8Docs(name) {
				t.Errorf("%s: no Redis 8 docs", name)
				continue
			}
			v, err := c.Do("COMMAND", "DOCS", name)
			if err != nil {
				t.Fatal(err)
			}
			d, ok := mapGet(v, name)
			if !ok {
				t.Fatalf("RESP%s COMMAND DOCS %s: %s", proto, name, v)
			}
			var keys []string
			for i := 0; i+1 < len(d.Elems); i += 2 {
				keys = append(keys, d.Elems[i].Str)
			}
			wantKeys := "summary since group complexity history arguments"
			if want.history == nil {
				wantKeys = "summary since group complexity arguments"
			}
			if strings.Join(keys, " ") != wantKeys {
				t.Errorf("RESP%s %s: docs fields %q, want %q", proto, name, keys, wantKeys)
			}
			cmd := srv.cmds.byName[name]
			for _, f := range []struct{ k, v string }{{"summary", cmd.Summary}, {"since", cmd.Since}, {"group", "stream"}} {
				if got, _ := mapGet(d, f.k); got.Str != f.v {
					t.Errorf("RESP%s %s: %s %q, want %q", proto, name, f.k, got.Str, f.v)
				}
			}
			args, _ := mapGet(d, "arguments")
			toks := map[string]bool{}
			docTokens(args, toks)
			for _, tok := range want.tokens {
				if !toks[tok] {
					t.Errorf("RESP%s %s: no %s token in %s", proto, name, tok, args)
				}
			}
			keyArg := args.Elems[0]
			if n, _ := mapGet(keyArg, "name"); n.Str == "group_consumer" {
				st, _ := mapGet(args.Elems[len(args.Elems)-1], "arguments")
				keyArg = st.Elems[0]
			} else if n.Str == "count" {
				st, _ := mapGet(args.Elems[len(args.Elems)-1], "arguments")
				keyArg = st.Elems[0]
			}
			if typ, _ := mapGet(keyArg, "type"); typ.Str != "key" {
				t.Errorf("RESP%s %s: first key argument %s", proto, name, keyArg)
			} else if ksi, ok := mapGet(keyArg, "key_spec_index"); !ok || ksi.Int != 0 {
				t.Errorf("RESP%s %s: key argument without key_spec_index 0: %s", proto, name, keyArg)
			}
			hist, _ := mapGet(d, "history")
			var vers []string
			for _, h := range hist.Elems {
				if len(h.Elems) == 2 && strings.HasPrefix(h.Elems[0].Str, "8.") {
					vers = append(vers, h.Elems[0].Str)
				}
			}
			if strings.Join(vers, " ") != strings.Join(want.history, " ") {
				t.Errorf("RESP%s %s: Redis 8 history %q, want %q", proto, name, vers, want.history)
			}
		}
		c.Close()
	}
}

// strip8Docs removes from streamd's COMMAND DOCS reply what redis8.json
// added to the 7.0 docs (arguments and history entries since 8.x, and
// CLAIM, whose argument has no since), so the rest compares equal with the
// 7.0 redis-server's.
func strip8Docs(v Value) Value {
	out := v
	out.Elems = append([]Value(nil), v.Elems...)
	for i := 0; i+1 < len(out.Elems); i += 2 {
		d := out.Elems[i+1]
		nd := d
		nd.Elems = append([]Value(nil), d.Elems...)
		for j := 0; j+1 < len(nd.Elems); j += 2 {
			switch nd.Elems[j].Str {
			case "arguments":
				nd.Elems[j+1] = strip8Args(nd.Elems[j+1])
			case "history":
				h := nd.Elems[j+1]
				h.Elems = nil
				for _, e := range nd.Elems[j+1].Elems {
					if len(e.Elems) == 2 && !strings.HasPrefix(e.Elems[0].Str, "8.") {
						h.Elems = append(h.Elems, e)
					}
				}
				nd.Elems[j+1] = h
			}
		}
		// A history of only Redis 8 entries goes, as 7.0 has none.
		for j := 0; j+1 < len(nd.Elems); j += 2 {
			if nd.Elems[j].Str == "history" && len(nd.Elems[j+1].Elems) == 0 {
				nd.Elems = append(nd.Elems[:j:j], nd.Elems[j+2:]...)
				break
			}
		}
		out.Elems[i+1] = nd
	}
	return out
}

// strip8Args drops the Redis 8 arguments from an argument list, nested
// lists included.
func strip8Args(args Value) Value {
	out := args
	out.Elems = nil
	for _, a := range args.Elems {
		since, _ := mapGet(a, "since")
		tok, _ := mapGet(a, "token")
		if strings.HasPrefix(since.Str, "8.") || tok.Str == "CLAIM" {
			continue
		}
		na := a
		na.Elems = append([]Value(nil), a.Elems...)
		for j := 0; j+1 < len(na.Elems); j += 2 {
			if na.Elems[j].Str == "arguments" {
				na.Elems[j+1] = strip8Args(na.Elems[j+1])
			}
		}
		out.Elems = append(out.Elems, na)
	}
	return out
}

// TestRedis8DocsClients: redis-cli prints the Redis 8 options of COMMAND
// DOCS, and go-redis (RESP2, RESP3) and rueidis parse the replies.
func TestRedis8DocsClients(t *testing.T) {
	_, addr := startTestServer(t, nil)
	ctx := context.Background()
	cli := testutil.RequireTool(t, "redis-cli")
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command(cli, "-h", host, "-p", port, "COMMAND", "DOCS", "xadd").CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli: %v\n%s", err, out)
	}
	for _, want := range []string{"IDMP", "IDMPAUTO", "KEEPREF", "8.6.0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("redis-cli COMMAND DOCS xadd lacks %s:\n%s", want, out)
		}
	}
	for _, proto := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto})
		res, err := c.Do(ctx, "COMMAND", "DOCS", "xreadgroup", "xnack").Result()
		if err != nil {
			t.Fatalf("go-redis RESP%d: %v", proto, err)
		}
		var names []string
		switch r := res.(type) {
		case map[interface{}]interface{}: // RESP3
			for k := range r {
				names = append(names, k.(string))
			}
		case []interface{}: // RESP2
			for i := 0; i < len(r); i += 2 {
				names = append(names, r[i].(string))
			}
		default:
			t.Fatalf("go-redis RESP%d: %T", proto, res)
		}
		sort.Strings(names)
		if strings.Join(names, ",") != "xnack,xreadgroup" {
			t.Errorf("go-redis RESP%d COMMAND DOCS names %q", proto, names)
		}
		c.Close()
	}
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	m, err := rc.Do(ctx, rc.B().CommandDocs().CommandName("xadd").Build()).AsMap()
	if err != nil {
		t.Fatal(err)
	}
	xadd := m["xadd"]
	doc, err := xadd.AsMap()
	if err != nil {
		t.Fatal(err)
	}
	argv := doc["arguments"]
	args, err := argv.ToArray()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range args {
		am, err := args[i].AsMap()
		if err != nil {
			t.Fatal(err)
		}
		name := am["name"]
		n, _ := name.ToString()
		names = append(names, n)
	}
	if got := strings.Join(names, " "); got != "key nomkstream condition idmp trim id_or_auto field_value" {
		t.Errorf("rueidis COMMAND DOCS xadd arguments %q", got)
	}
}
