package server

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"

	"streamd/config"
	"streamd/replication"
)

// TestCommandKeys checks the keys routing takes from every keyed command's
// arguments (the legacy positions of its table row, STREAMS for XREAD).
func TestCommandKeys(t *testing.T) {
	s := New(config.Default(), replication.NewShard(), pquietLog())
	cases := []struct {
		req  string
		keys string
	}{
		{"XADD s * f v", "s"},
		{"XTRIM s MAXLEN 1", "s"},
		{"XDEL s 1-1", "s"},
		{"XLEN s", "s"},
		{"XRANGE s - +", "s"},
		{"XREVRANGE s + -", "s"},
		{"XSETID s 1-1", "s"},
		{"XCFGSET s IDMP-DURATION 1", "s"},
		{"XIDMPRECORD s p i 1-1", "s"},
		{"XACK s g 1-1", "s"},
		{"XCLAIM s g c 0 1-1", "s"},
		{"XAUTOCLAIM s g c 0 0", "s"},
		{"XNACK s g FAIL IDS 1 1-1", "s"},
		{"XPENDING s g", "s"},
		{"XGROUP CREATE s g $", "s"},
		{"XGROUP CREATECONSUMER s g c", "s"},
		{"XGROUP DELCONSUMER s g c", "s"},
		{"XGROUP DESTROY s g", "s"},
		{"XGROUP SETID s g $", "s"},
		{"XGROUP HELP", ""},
		{"XINFO STREAM s FULL", "s"},
		{"XINFO GROUPS s", "s"},
		{"XINFO CONSUMERS s g", "s"},
		{"XREAD COUNT 1 BLOCK 0 STREAMS a b 0 0", "a b"},
		{"XREAD streams a 0", "a"},
		{"XREAD STREAMS a b 0", ""}, // unbalanced: the planner answers
		{"XREADGROUP GROUP g c COUNT 2 NOACK BLOCK 5 STREAMS x y > >", "x y"},
		{"XREADGROUP GROUP streams streams STREAMS k >", "k"},
		{"DEL a b c", "a b c"},
		{"UNLINK a", "a"},
		{"EXISTS a b", "a b"},
		{"TYPE a", "a"},
		{"RENAME a b", "a b"},
		{"RENAMENX a b", "a b"},
		{"EXPIRE a 1", "a"},
		{"PEXPIRE a 1 NX", "a"},
		{"EXPIREAT a 1", "a"},
		{"PEXPIREAT a 1", "a"},
		{"TTL a", "a"},
		{"PTTL a", "a"},
		{"PERSIST a", "a"},
		{"TOUCH a b", "a b"},
		{"EXPIRETIME a", "a"},
		{"PEXPIRETIME a", "a"},
		{"COPY a b DB 0 REPLACE", "a b"},
		{"DUMP a", "a"},
		{"RESTORE a 0 payload REPLACE", "a"},
		{"OBJECT ENCODING a", "a"},
		{"OBJECT FREQ a", "a"},
		{"OBJECT IDLETIME a", "a"},
		{"OBJECT REFCOUNT a", "a"},
		{"MEMORY USAGE a SAMPLES 0", "a"},
		{"RANDOMKEY", ""},
		{"SWAPDB 0 1", ""},
		{"WATCH a b", "a b"},
		{"KEYS *", ""},
		{"SCAN 0", ""},
		{"DBSIZE", ""},
		{"FLUSHALL", ""},
		{"PING", ""},
		{"XDELEX a IDS 1 1-1", "a"},
		{"XACKDEL a g IDS 1 1-1", "a"},
		{"XGROUP CONFIG {a}s g MAXDELIVERIES 3 DEADLETTER {a}d visibility 10", "{a}s {a}d"},
		{"XGROUP CONFIG s g DEADLETTER none", "s"},
	}
	for _, tc := range cases {
		args := bytesArgs(strings.Fields(tc.req))
		cmd, rej := s.lookup(args)
		if rej != "" {
			t.Fatalf("%s: %s", tc.req, rej)
		}
		var got []string
		for _, k := range commandKeys(cmd, args) {
			got = append(got, string(k))
		}
		if strings.Join(got, " ") != tc.keys {
			t.Errorf("%s: keys %q, want %q", tc.req, got, tc.keys)
		}
	}
	// Every command with key positions in the table is covered above.
	covered := map[string]bool{}
	for _, tc := range cases {
		args := bytesArgs(strings.Fields(tc.req))
		cmd, _ := s.lookup(args)
		covered[cmd.Name] = true
	}
	var fanout, controls []string
	for _, c := range s.cmds.sorted {
		for _, x := range append([]*Command{c}, c.Subcommands...) {
			if (x.FirstKey > 0 || hasFlag(x, "movablekeys")) && !covered[x.Name] {
				t.Errorf("keyed command %s has no key extraction case", x.Name)
			}
			if hasFlag(x, "movablekeys") != (x.KeysFrom != nil) {
				t.Errorf("%s: movablekeys %v but KeysFrom set %v", x.Name, hasFlag(x, "movablekeys"), x.KeysFrom != nil)
			}
			if x.Fanout {
				fanout = append(fanout, x.Name)
			}
			if x.Control != ctlNone {
				controls = append(controls, fmt.Sprintf("%s=%d", x.Name, x.Control))
			}
		}
	}
	if got := strings.Join(fanout, " "); got != "dbsize flushall flushdb keys randomkey scan swapdb" {
		t.Errorf("fan-out rows: %s", got)
	}
	want := fmt.Sprintf("discard=%d exec=%d multi=%d quit=%d reset=%d select=%d unwatch=%d watch=%d",
		ctlDiscard, ctlExec, ctlMulti, ctlQuit, ctlReset, ctlSelect, ctlUnwatch, ctlWatch)
	if got := strings.Join(controls, " "); got != want {
		t.Errorf("control rows: %s, want %s", got, want)
	}
}

func bytesArgs(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// multiShard serves a single node whose keyspace is split into 4 shards.
func multiShard(t *testing.T) (*Server, string) {
	t.Helper()
	node, err := replication.OpenNode(replication.NodeOptions{Shards: 4, Logger: pquietLog()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewNode(config.Default(), node, pquietLog())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
		node.Close(false)
	})
	return srv, ln.Addr().String()
}

// keysOfShards returns one key per shard of n (k0 in shard 0, …).
func keysOfShards(n int) []string {
	out := make([]string, n)
	found := 0
	for k := 0; found < n; k++ {
		key := fmt.Sprintf("key%d", k)
		if i := replication.ShardOfSlot(replication.KeySlot(key), n); out[i] == "" {
			out[i] = key
			found++
		}
	}
	return out
}

// TestShardsCrossSlotAndFanout: a 4-shard node answers CROSSSLOT for keys
// in different shards (in a command, and queued in MULTI), serves keys of
// every shard, and sums/concatenates/walks/flushes every shard for DBSIZE,
// KEYS, SCAN and FLUSHALL.
func TestShardsCrossSlotAndFanout(t *testing.T) {
	_, addr := multiShard(t)
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	do := func(want string, args ...string) Value {
		t.Helper()
		v, err := c.Do(args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if want != "" && v.String() != want {
			t.Fatalf("%v = %s, want %s", args, v, want)
		}
		return v
	}
	keys := keysOfShards(4)
	for _, k := range keys {
		do(`"1-1"`, "XADD", k, "1-1", "f", "v")
		do(`"1-1"`, "XADD", "{"+k+"}x", "1-1", "f", "v")
	}
	cross := `(error) CROSSSLOT Keys in request don't hash to the same slot`
	do(cross, "DEL", keys[0], keys[1])
	do(cross, "XREAD", "STREAMS", keys[2], keys[3], "0", "0")
	// Same shard, different slots: fine outside cluster mode.
	do("(integer) 2", "EXISTS", keys[0], "{"+keys[0]+"}x")
	do("(integer) 8", "DBSIZE")
	v := do("", "KEYS", "*")
	if len(v.Elems) != 8 {
		t.Fatalf("KEYS * = %s", v)
	}
	// SCAN with COUNT 1 walks every shard; every key comes back.
	seen := map[string]bool{}
	cursor := "0"
	for round := 0; ; round++ {
		if round > 100 {
			t.Fatal("SCAN does not end")
		}
		v := do("", "SCAN", cursor, "COUNT", "1")
		cursor = v.Elems[0].Str
		for _, e := range v.Elems[1].Elems {
			seen[e.Str] = true
		}
		if cursor == "0" {
			break
		}
	}
	if len(seen) != 8 {
		got := make([]string, 0, len(seen))
		for k := range seen {
			got = append(got, k)
		}
		sort.Strings(got)
		t.Fatalf("SCAN saw %v", got)
	}
	// MULTI with keys in two shards: refused while queuing, EXECABORT.
	do("+OK", "MULTI")
	do("+QUEUED", "XLEN", keys[0])
	do(cross, "XLEN", keys[1])
	do("(error) EXECABORT Transaction discarded because of previous errors.", "EXEC")
	// One shard: runs.
	do("+OK", "MULTI")
	do("+QUEUED", "XADD", keys[3], "2-1", "f", "v")
	do("+QUEUED", "XLEN", keys[3])
	do("", "EXEC")
	do("(integer) 2", "XLEN", keys[3])
	do("+OK", "FLUSHALL")
	do("(integer) 0", "DBSIZE")
}
