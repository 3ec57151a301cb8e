package server

// End-to-end tests with redigo (github.com/gomodule/redigo, RESP2 only):
// replies decoded by redigo's own helpers (Values, Strings, StringMap,
// ScanStruct with a Scanner), a blocking XREADGROUP woken by another
// connection, XAUTOCLAIM's three-element reply, and error replies surfaced
// as redis.Error with Redis's text. Every scenario runs against streamd and
// against the reference redis-server, with the same assertions.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	redigo "github.com/gomodule/redigo/redis"

	"streamd/internal/testutil"
)

// redigoEntry is one stream entry decoded by redigo; it implements
// redigo.Scanner so ScanStruct can fill first-entry/last-entry fields.
type redigoEntry struct {
	ID     string
	Fields map[string]string
}

// RedisScan decodes [id, [field, value, ...]].
func (e *redigoEntry) RedisScan(src any) error {
	v, err := redigo.Values(src, nil)
	if err != nil {
		return err
	}
	if len(v) != 2 {
		return fmt.Errorf("entry of %d elements", len(v))
	}
	if e.ID, err = redigo.String(v[0], nil); err != nil {
		return err
	}
	e.Fields, err = redigo.StringMap(v[1], nil)
	return err
}

// redigoStreamInfo is XINFO STREAM as redigo's ScanStruct fills it.
type redigoStreamInfo struct {
	Length          int64       `redis:"length"`
	LastGeneratedID string      `redis:"last-generated-id"`
	MaxDeletedID    string      `redis:"max-deleted-entry-id"`
	EntriesAdded    int64       `redis:"entries-added"`
	RecordedFirstID string      `redis:"recorded-first-entry-id"`
	Groups          int64       `redis:"groups"`
	FirstEntry      redigoEntry `redis:"first-entry"`
	LastEntry       redigoEntry `redis:"last-entry"`
}

// redigoGroupInfo is one XINFO GROUPS element.
type redigoGroupInfo struct {
	Name            string `redis:"name"`
	Consumers       int64  `redis:"consumers"`
	Pending         int64  `redis:"pending"`
	LastDeliveredID string `redis:"last-delivered-id"`
	EntriesRead     int64  `redis:"entries-read"`
	Lag             int64  `redis:"lag"`
}

// redigoDial opens a redigo connection (closed at cleanup).
func redigoDial(t *testing.T, addr string) redigo.Conn {
	t.Helper()
	c, err := redigo.Dial("tcp", addr, redigo.DialConnectTimeout(2*time.Second),
		redigo.DialReadTimeout(10*time.Second), redigo.DialWriteTimeout(10*time.Second))
	if err != nil {
		t.Fatalf("redigo dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// redigoEntries decodes an XRANGE-shaped reply with redigo's helpers.
func redigoEntries(t *testing.T, reply any, err error) []redigoEntry {
	t.Helper()
	vs, err := redigo.Values(reply, err)
	if err != nil {
		t.Fatalf("entries: %v", err)
	}
	out := []redigoEntry{}
	for _, v := range vs {
		var e redigoEntry
		if err := e.RedisScan(v); err != nil {
			t.Fatalf("entry %v: %v", v, err)
		}
		out = append(out, e)
	}
	return out
}

func TestRedigoE2E(t *testing.T) {
	for _, target := range []string{"streamd", "redis-server"} {
		t.Run(target, func(t *testing.T) {
			var addr string
			if target == "streamd" {
				addr = startStreamd(t)
			} else {
				addr = startRedis(t)
			}
			t.Run("resp2-xinfo", func(t *testing.T) { redigoXInfo(t, addr) })
			t.Run("blocking", func(t *testing.T) { redigoBlocking(t, addr) })
			t.Run("xautoclaim", func(t *testing.T) { redigoXAutoClaim(t, addr) })
			t.Run("errors", func(t *testing.T) { redigoErrors(t, addr) })
		})
	}
}

// redigoXInfo: redigo speaks RESP2; XINFO STREAM and XINFO GROUPS decode
// through ScanStruct, XRANGE through Values/StringMap.
func redigoXInfo(t *testing.T, addr string) {
	c := redigoDial(t, addr)
	info, err := redigo.String(c.Do("CLIENT", "INFO"))
	must(t, "CLIENT INFO", err)
	if !slices.Contains(strings.Fields(info), "resp=2") {
		t.Fatalf("redigo's connection is not RESP2: %q", info)
	}
	for i := 1; i <= 3; i++ {
		id, err := redigo.String(c.Do("XADD", "rs", fmt.Sprintf("%d-1", i), "n", i, "bin", []byte{0, '\r', '\n', 0xff}))
		must(t, "XADD", err)
		wantEq(t, "XADD id", id, fmt.Sprintf("%d-1", i))
	}
	_, err = c.Do("XDEL", "rs", "1-1")
	must(t, "XDEL", err)
	ok, err := redigo.String(c.Do("XGROUP", "CREATE", "rs", "g", "0"))
	must(t, "XGROUP CREATE", err)
	wantEq(t, "XGROUP CREATE", ok, "OK")
	read, err := redigo.Values(c.Do("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "rs", ">"))
	must(t, "XREADGROUP", err)
	var stream string
	var entries any
	if _, err := redigo.Scan(read[0].([]any), &stream, &entries); err != nil {
		t.Fatalf("XREADGROUP reply: %v", err)
	}
	wantEq(t, "XREADGROUP stream", stream, "rs")
	wantEq(t, "XREADGROUP entries", redigoEntries(t, entries, nil),
		[]redigoEntry{{ID: "2-1", Fields: map[string]string{"n": "2", "bin": "\x00\r\n\xff"}}})

	var si redigoStreamInfo
	vs, err := redigo.Values(c.Do("XINFO", "STREAM", "rs"))
	must(t, "XINFO STREAM", err)
	must(t, "ScanStruct XINFO STREAM", redigo.ScanStruct(vs, &si))
	wantEq(t, "XINFO STREAM", si, redigoStreamInfo{Length: 2, LastGeneratedID: "3-1", MaxDeletedID: "1-1",
		EntriesAdded: 3, RecordedFirstID: "2-1", Groups: 1,
		FirstEntry: redigoEntry{ID: "2-1", Fields: map[string]string{"n": "2", "bin": "\x00\r\n\xff"}},
		LastEntry:  redigoEntry{ID: "3-1", Fields: map[string]string{"n": "3", "bin": "\x00\r\n\xff"}}})

	gs, err := redigo.Values(c.Do("XINFO", "GROUPS", "rs"))
	must(t, "XINFO GROUPS", err)
	var groups []redigoGroupInfo
	for _, g := range gs {
		kv, err := redigo.Values(g, nil)
		must(t, "XINFO GROUPS element", err)
		var gi redigoGroupInfo
		must(t, "ScanStruct XINFO GROUPS", redigo.ScanStruct(kv, &gi))
		groups = append(groups, gi)
	}
	wantEq(t, "XINFO GROUPS", groups, []redigoGroupInfo{{Name: "g", Consumers: 1, Pending: 1,
		LastDeliveredID: "2-1", EntriesRead: 2, Lag: 1}})

	// XPENDING's summary through Values/Scan, its consumers through Strings.
	p, err := redigo.Values(c.Do("XPENDING", "rs", "g"))
	must(t, "XPENDING", err)
	var count int64
	var lo, hi string
	var consumers []any
	if _, err := redigo.Scan(p, &count, &lo, &hi, &consumers); err != nil {
		t.Fatalf("XPENDING reply: %v", err)
	}
	cs, err := redigo.Strings(consumers[0], nil)
	must(t, "XPENDING consumer", err)
	wantEq(t, "XPENDING", []any{count, lo, hi, cs}, []any{int64(1), "2-1", "2-1", []string{"alice", "1"}})
	rng, err := c.Do("XRANGE", "rs", "-", "+", "COUNT", 1)
	wantEq(t, "XRANGE", redigoEntries(t, rng, err),
		[]redigoEntry{{ID: "2-1", Fields: map[string]string{"n": "2", "bin": "\x00\r\n\xff"}}})
}

// redigoBlocking: XREADGROUP BLOCK on one redigo connection parks until an
// XADD from another connection wakes it with the new entry.
func redigoBlocking(t *testing.T, addr string) {
	blocked, writer, probe := redigoDial(t, addr), redigoDial(t, addr), redigoDial(t, addr)
	_, err := writer.Do("XGROUP", "CREATE", "wake", "g", "$", "MKSTREAM")
	must(t, "XGROUP CREATE MKSTREAM", err)
	type result struct {
		v   []any
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := redigo.Values(redigo.DoWithTimeout(blocked, 30*time.Second,
			"XREADGROUP", "GROUP", "g", "bob", "BLOCK", 20000, "STREAMS", "wake", ">"))
		done <- result{v, err}
	}()
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		info, err := redigo.String(probe.Do("INFO", "clients"))
		if err != nil {
			return err
		}
		if !strings.Contains(info, "blocked_clients:1\r\n") {
			return errors.New("reader not blocked yet")
		}
		return nil
	})
	select {
	case r := <-done:
		t.Fatalf("XREADGROUP returned before any XADD: %v %v", r.v, r.err)
	default:
	}
	_, err = writer.Do("XADD", "wake", "5-5", "k", "v")
	must(t, "XADD", err)
	var r result
	select {
	case r = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("blocked XREADGROUP not woken by the XADD")
	}
	must(t, "blocked XREADGROUP", r.err)
	var stream string
	var entries any
	if _, err := redigo.Scan(r.v[0].([]any), &stream, &entries); err != nil {
		t.Fatalf("woken reply: %v", err)
	}
	wantEq(t, "woken XREADGROUP", []any{stream, redigoEntries(t, entries, nil)},
		[]any{"wake", []redigoEntry{{ID: "5-5", Fields: map[string]string{"k": "v"}}}})

	// A timed-out BLOCK gives redigo's ErrNil (a RESP2 null array).
	_, err = redigo.Values(blocked.Do("XREADGROUP", "GROUP", "g", "bob", "BLOCK", 10, "STREAMS", "wake", ">"))
	if !errors.Is(err, redigo.ErrNil) {
		t.Fatalf("timed-out XREADGROUP: err %v, want redigo.ErrNil", err)
	}
}

// redigoXAutoClaim: XAUTOCLAIM's reply is [next-id, entries, deleted-ids];
// a pending entry deleted from the stream is reported in the third element
// and dropped from the PEL.
func redigoXAutoClaim(t *testing.T, addr string) {
	c := redigoDial(t, addr)
	for i := 1; i <= 4; i++ {
		_, err := c.Do("XADD", "ac", fmt.Sprintf("%d-0", i), "i", i)
		must(t, "XADD", err)
	}
	_, err := c.Do("XGROUP", "CREATE", "ac", "g", "0")
	must(t, "XGROUP CREATE", err)
	_, err = c.Do("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "ac", ">")
	must(t, "XREADGROUP", err)
	_, err = c.Do("XDEL", "ac", "2-0")
	must(t, "XDEL", err)

	v, err := redigo.Values(c.Do("XAUTOCLAIM", "ac", "g", "bob", 0, "0-0", "COUNT", 2))
	must(t, "XAUTOCLAIM", err)
	wantEq(t, "XAUTOCLAIM reply length", len(v), 3)
	var next string
	var claimed, deleted any
	if _, err := redigo.Scan(v, &next, &claimed, &deleted); err != nil {
		t.Fatalf("XAUTOCLAIM reply: %v", err)
	}
	del, err := redigo.Strings(deleted, nil)
	must(t, "XAUTOCLAIM deleted", err)
	wantEq(t, "XAUTOCLAIM COUNT 2", []any{next, redigoEntries(t, claimed, nil), del},
		[]any{"3-0", []redigoEntry{{ID: "1-0", Fields: map[string]string{"i": "1"}}}, []string{"2-0"}})

	v, err = redigo.Values(c.Do("XAUTOCLAIM", "ac", "g", "bob", 0, next, "JUSTID"))
	must(t, "XAUTOCLAIM JUSTID", err)
	ids, err := redigo.Strings(v[1], nil)
	must(t, "XAUTOCLAIM JUSTID ids", err)
	del, err = redigo.Strings(v[2], nil)
	must(t, "XAUTOCLAIM JUSTID deleted", err)
	wantEq(t, "XAUTOCLAIM JUSTID", []any{string(v[0].([]byte)), ids, del}, []any{"0-0", []string{"3-0", "4-0"}, []string{}})
	p, err := redigo.Values(c.Do("XPENDING", "ac", "g"))
	must(t, "XPENDING", err)
	wantEq(t, "XPENDING count after the deleted entry left the PEL", p[0], int64(3))
}

// redigoErrors: error replies reach the caller as redigo.Error carrying
// Redis's text, and the connection stays usable.
func redigoErrors(t *testing.T, addr string) {
	c := redigoDial(t, addr)
	_, err := c.Do("XADD", "e", "5-5", "f", "v")
	must(t, "XADD", err)
	_, err = c.Do("XGROUP", "CREATE", "e", "g", "0")
	must(t, "XGROUP CREATE", err)
	cases := []struct {
		args []any
		want string
	}{
		{[]any{"XADD", "e", "1-1", "f", "v"}, "ERR The ID specified in XADD is equal or smaller than the target stream top item"},
		{[]any{"XADD", "e", "bad", "f", "v"}, "ERR Invalid stream ID specified as stream command argument"},
		{[]any{"XGROUP", "CREATE", "e", "g", "0"}, "BUSYGROUP Consumer Group name already exists"},
		{[]any{"XREADGROUP", "GROUP", "nope", "c", "STREAMS", "e", ">"}, "NOGROUP No such key 'e' or consumer group 'nope' in XREADGROUP with GROUP option"},
		{[]any{"XGROUP", "CREATE", "missing", "g", "0"}, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."},
		{[]any{"XLEN"}, "ERR wrong number of arguments for 'xlen' command"},
	}
	for _, tc := range cases {
		_, err := c.Do(tc.args[0].(string), tc.args[1:]...)
		var re redigo.Error
		if !errors.As(err, &re) {
			t.Fatalf("%v: err %T %v, want a redigo.Error", tc.args, err, err)
		}
		if string(re) != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, string(re), tc.want)
		}
	}
	if pong, err := redigo.String(c.Do("PING")); err != nil || pong != "PONG" {
		t.Fatalf("PING after the errors: %q %v", pong, err)
	}
	if c.Err() != nil {
		t.Fatalf("connection broken after error replies: %v", c.Err())
	}
}
