package server

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// diffPair runs the same commands on redis-server and streamd.
type diffPair struct {
	t           *testing.T
	redis, ours *respConn
}

func newDiffPair(t *testing.T) *diffPair {
	t.Helper()
	raddr := startRedis(t)
	_, saddr := startTestServer(t, nil)
	return &diffPair{t: t, redis: dial(t, raddr), ours: dial(t, saddr)}
}

// do sends args to both servers and fails the test when the replies differ;
// it returns streamd's reply.
func (p *diffPair) do(args ...string) Value {
	p.t.Helper()
	want, err := p.redis.Do(args...)
	if err != nil {
		p.t.Fatalf("redis %q: %v", args, err)
	}
	got, err := p.ours.Do(args...)
	if err != nil {
		p.t.Fatalf("streamd %q: %v", args, err)
	}
	if !got.Equal(want) {
		p.t.Errorf("%q:\n streamd %s\n redis   %s", args, got, want)
	}
	return got
}

// xinfoField returns field name of an XINFO STREAM reply (RESP2 array of
// name, value pairs).
func xinfoField(t *testing.T, v Value, name string) Value {
	t.Helper()
	for i := 0; i+1 < len(v.Elems); i += 2 {
		if v.Elems[i].Str == name {
			return v.Elems[i+1]
		}
	}
	t.Fatalf("XINFO STREAM reply has no %q: %s", name, v)
	return Value{}
}

// TestRadixTreeNodesVsRedis compares XINFO STREAM's radix-tree-keys and
// radix-tree-nodes with redis-server's for streams of several shapes: one
// entry per node, small and default node sizes, IDs spread over bytes,
// nodes removed by XDEL and XTRIM, and an empty stream.
func TestRadixTreeNodesVsRedis(t *testing.T) {
	p := newDiffPair(t)
	compare := func(key string) {
		t.Helper()
		var vals [2]Value
		for i, c := range []*respConn{p.redis, p.ours} {
			v, err := c.Do("XINFO", "STREAM", key)
			if err != nil || v.Kind != '*' {
				t.Fatalf("XINFO STREAM %s: %v %v", key, v, err)
			}
			vals[i] = v
		}
		for _, f := range []string{"length", "radix-tree-keys", "radix-tree-nodes"} {
			want, got := xinfoField(t, vals[0], f), xinfoField(t, vals[1], f)
			if !got.Equal(want) {
				t.Errorf("%s %s: streamd %s, redis %s", key, f, got, want)
			}
		}
	}
	add := func(key string, ms, seq uint64) {
		p.do("XADD", key, fmt.Sprintf("%d-%d", ms, seq), "f", "v")
	}

	p.do("CONFIG", "SET", "stream-node-max-entries", "1")
	for _, ms := range []uint64{1, 2, 3, 255, 256, 257, 65536, 1 << 24, 1700000000000, 1700000000001} {
		add("one", ms, 0)
		add("one", ms, 1)
	}
	compare("one")
	p.do("XDEL", "one", "256-0", "256-1", "1-1")
	compare("one")

	p.do("CONFIG", "SET", "stream-node-max-entries", "3")
	for i := uint64(0); i < 40; i++ {
		add("three", 1000+i*37, i%4)
	}
	compare("three")
	p.do("XTRIM", "three", "MAXLEN", "~", "20")
	compare("three")

	p.do("CONFIG", "SET", "stream-node-max-entries", "100")
	for i := uint64(1); i <= 450; i++ {
		add("default", 1700000000000+i/3, i%3)
	}
	compare("default")
	p.do("XTRIM", "default", "MINID", "~", "1700000000100-0")
	compare("default")

	add("empty", 5, 5)
	p.do("XDEL", "empty", "5-5")
	compare("empty")
	p.do("XGROUP", "CREATE", "fresh", "g", "$", "MKSTREAM")
	compare("fresh")
}

// TestExpireOptionsVsRedis runs EXPIRE/PEXPIRE with every NX/XX/GT/LT
// combination on a key without a deadline and on one with a 100 s
// deadline, shorter and longer, and compares the answers and the TTL left
// with redis-server's.
func TestExpireOptionsVsRedis(t *testing.T) {
	p := newDiffPair(t)
	opts := [][]string{{}, {"NX"}, {"XX"}, {"GT"}, {"LT"}, {"XX", "GT"}, {"XX", "LT"}, {"lt", "xx"},
		{"GT", "XX"}, {"XX", "XX", "LT"}, {"NX", "XX"}, {"NX", "GT"}, {"NX", "LT"}, {"GT", "LT"},
		{"XX", "GT", "LT"}, {"NX", "NX"}, {"LT", "FOO"}}
	for _, withTTL := range []bool{false, true} {
		for _, secs := range []string{"50", "150", "-1"} {
			for _, cmd := range []string{"EXPIRE", "PEXPIRE"} {
				for _, o := range opts {
					p.do("DEL", "k")
					p.do("XADD", "k", "1-1", "f", "v")
					if withTTL {
						p.do("EXPIRE", "k", "100")
					}
					n := secs
					if cmd == "PEXPIRE" && secs != "-1" {
						n += "000"
					}
					args := append([]string{cmd, "k", n}, o...)
					got := p.do(args...)
					if got.Kind == '-' && !strings.Contains(got.Str, "FOO") && !strings.Contains(got.Str, "compatible") {
						t.Errorf("%q: unexpected error %s", args, got)
					}
					p.do("TTL", "k")
				}
			}
		}
	}
	p.do("EXPIRE", "missing", "10", "XX", "LT")
}

// readN reads the next n values in arrival order, pushes included.
func readN(t *testing.T, c *respConn, n int) []string {
	t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var out []string
	for i := 0; i < n; i++ {
		v, err := readValue(c.r)
		if err != nil {
			t.Fatalf("read %d of %d: %v (got %q)", i+1, n, err, out)
		}
		out = append(out, v.String())
	}
	return out
}

// sendOrdered sends each command after the previous one was answered and
// returns everything received, pushes included, in arrival order, up to
// the reply of a final PING.
func sendOrdered(t *testing.T, c *respConn, cmds [][]string) []string {
	t.Helper()
	var out []string
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for _, cmd := range append(cmds, []string{"PING"}) {
		if err := c.Send(cmd...); err != nil {
			t.Fatal(err)
		}
		for {
			v, err := readValue(c.r)
			if err != nil {
				t.Fatalf("%q: %v (got %q)", cmd, err, out)
			}
			out = append(out, v.String())
			if v.Kind != '>' {
				break
			}
		}
	}
	return out
}

// trackingClient connects a RESP3 client to addr with the key k holding one
// entry and tracked (default mode).
func trackingClient(t *testing.T, addr string) *respConn {
	t.Helper()
	c := dial(t, addr)
	mustDo(t, c, "HELLO", "3")
	mustDo(t, c, "FLUSHALL")
	mustDo(t, c, "XADD", "k", "1-1", "f", "v")
	mustDo(t, c, "CLIENT", "TRACKING", "on")
	mustDo(t, c, "XLEN", "k")
	return c
}

// TestTrackingPushOrderVsRedis checks where an invalidation caused by the
// tracking client's own write lands relative to replies: after the reply
// of the writing command (Redis's tracking_pending_keys), also for EXEC
// and FLUSHALL, compared with redis-server.
func TestTrackingPushOrderVsRedis(t *testing.T) {
	raddr := startRedis(t)
	_, saddr := startTestServer(t, nil)
	scripts := []struct {
		name string
		cmds [][]string
	}{
		{"own del", [][]string{{"DEL", "k"}}},
		{"own xadd", [][]string{{"XADD", "k", "2-1", "f", "v"}}},
		{"read after own write", [][]string{{"XADD", "k", "2-1", "f", "v"}, {"XLEN", "k"}, {"DEL", "k"}}},
		{"exec", [][]string{{"MULTI"}, {"XADD", "k", "2-1", "f", "v"}, {"XLEN", "k"}, {"EXEC"}}},
		{"flushall", [][]string{{"FLUSHALL"}}},
	}
	for _, sc := range scripts {
		var got [2][]string
		for i, addr := range []string{raddr, saddr} {
			c := trackingClient(t, addr)
			got[i] = sendOrdered(t, c, sc.cmds)
			c.Close()
		}
		if strings.Join(got[1], " | ") != strings.Join(got[0], " | ") {
			t.Errorf("%s:\n streamd %q\n redis   %q", sc.name, got[1], got[0])
		}
	}
}

// TestTrackingPushOrderPipelined sends writes of a tracking client
// pipelined (group-committed) and checks that each invalidation of its
// own write arrives after that write's reply, none is lost, and none is
// held past the batch.
func TestTrackingPushOrderPipelined(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := trackingClient(t, addr)
	var raw strings.Builder
	for _, cmd := range [][]string{{"XADD", "k", "2-1", "f", "v"}, {"XLEN", "k"}, {"XADD", "k", "3-1", "f", "v"}} {
		raw.WriteString(respCommand(cmd))
	}
	if err := c.SendRaw([]byte(raw.String())); err != nil {
		t.Fatal(err)
	}
	got := readN(t, c, 5) // 3 replies, 2 invalidations
	inv := `push["invalidate", ["k"]]`
	want := []string{`"2-1"`, "(integer) 2", `"3-1"`}
	// The n-th invalidation is caused by the n-th XADD: replies 1 and 3.
	after := []int{1, 3}
	var replies []string
	pushes := 0
	for _, v := range got {
		if v == inv {
			if pushes >= len(after) || len(replies) < after[pushes] {
				t.Fatalf("invalidation before its write's reply: %q", got)
			}
			pushes++
			continue
		}
		replies = append(replies, v)
	}
	if strings.Join(replies, " ") != strings.Join(want, " ") || pushes != 2 {
		t.Fatalf("got %q", got)
	}
}

// respCommand renders args as a RESP multibulk request.
func respCommand(args []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}
