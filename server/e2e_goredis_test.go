package server

// End-to-end tests with go-redis v9 (RESP2 and RESP3): its typed stream API
// against an in-process streamd, asserting the decoded values.

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// newGoRedis returns a go-redis client on addr speaking proto.
func newGoRedis(t *testing.T, addr string, proto int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, DisableIdentity: true,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// must fails the test on err.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantEq fails the test unless got equals want.
func wantEq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %#v, want %#v", what, got, want)
	}
}

// msgs renders messages as "id:k=v,..." for comparisons.
func msgs(ms []redis.XMessage) []string {
	out := []string{}
	for _, m := range ms {
		var kv []string
		for k, v := range m.Values {
			kv = append(kv, fmt.Sprintf("%s=%v", k, v))
		}
		if len(kv) > 1 {
			for i := range kv { // deterministic order for the comparison
				for j := i + 1; j < len(kv); j++ {
					if kv[j] < kv[i] {
						kv[i], kv[j] = kv[j], kv[i]
					}
				}
			}
		}
		out = append(out, m.ID+":"+strings.Join(kv, ","))
	}
	return out
}

func TestGoRedisE2E(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			addr := startStreamd(t)
			ctx := context.Background()
			c := newGoRedis(t, addr, proto)
			t.Run("basics", func(t *testing.T) { goRedisBasics(ctx, t, c) })
			t.Run("xadd-range", func(t *testing.T) { goRedisXAddRange(ctx, t, c) })
			t.Run("groups", func(t *testing.T) { goRedisGroups(ctx, t, c) })
			t.Run("info", func(t *testing.T) { goRedisInfo(ctx, t, c) })
			t.Run("blocking", func(t *testing.T) { goRedisBlocking(ctx, t, addr, proto) })
			t.Run("pipelines", func(t *testing.T) { goRedisPipelines(ctx, t, c) })
		})
	}
}

func goRedisBasics(ctx context.Context, t *testing.T, c *redis.Client) {
	pong, err := c.Ping(ctx).Result()
	must(t, "PING", err)
	wantEq(t, "PING", pong, "PONG")
	info, err := c.Info(ctx, "server").Result()
	must(t, "INFO", err)
	if !strings.Contains(info, "redis_version:") {
		t.Fatalf("INFO server lacks redis_version: %q", info)
	}
	id, err := c.ClientID(ctx).Result()
	must(t, "CLIENT ID", err)
	if id <= 0 {
		t.Fatalf("CLIENT ID = %d", id)
	}
}

func goRedisXAddRange(ctx context.Context, t *testing.T, c *redis.Client) {
	for i := 1; i <= 5; i++ {
		id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "r", ID: fmt.Sprintf("%d-1", i), Values: []string{"n", fmt.Sprint(i)}}).Result()
		must(t, "XADD", err)
		wantEq(t, "XADD id", id, fmt.Sprintf("%d-1", i))
	}
	auto, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "r", Values: map[string]any{"n": "6"}}).Result()
	must(t, "XADD *", err)
	if ms, err := strconv.ParseInt(strings.TrimSuffix(auto, "-0"), 10, 64); err != nil || ms < 1_000_000_000_000 {
		t.Fatalf("XADD * = %q", auto)
	}
	n, err := c.XLen(ctx, "r").Result()
	must(t, "XLEN", err)
	wantEq(t, "XLEN", n, int64(6))

	all, err := c.XRange(ctx, "r", "-", "+").Result()
	must(t, "XRANGE", err)
	wantEq(t, "XRANGE", msgs(all)[:2], []string{"1-1:n=1", "2-1:n=2"})
	two, err := c.XRangeN(ctx, "r", "(2-1", "+", 2).Result()
	must(t, "XRANGE N", err)
	wantEq(t, "XRANGE (2-1 + COUNT 2", msgs(two), []string{"3-1:n=3", "4-1:n=4"})
	rev, err := c.XRevRange(ctx, "r", "4", "3").Result()
	must(t, "XREVRANGE", err)
	wantEq(t, "XREVRANGE", msgs(rev), []string{"4-1:n=4", "3-1:n=3"})

	del, err := c.XDel(ctx, "r", "1-1", "9-9").Result()
	must(t, "XDEL", err)
	wantEq(t, "XDEL", del, int64(1))

	// Trimming through XADD and XTRIM.
	_, err = c.XAdd(ctx, &redis.XAddArgs{Stream: "r", MaxLen: 3, ID: "*", Values: []string{"n", "7"}}).Result()
	must(t, "XADD MAXLEN", err)
	n, _ = c.XLen(ctx, "r").Result()
	wantEq(t, "XLEN after MAXLEN 3", n, int64(3))
	_, err = c.XAdd(ctx, &redis.XAddArgs{Stream: "r", MinID: "5", ID: "*", Values: []string{"n", "8"}}).Result()
	must(t, "XADD MINID", err)
	first, _ := c.XRangeN(ctx, "r", "-", "+", 1).Result()
	if len(first) != 1 || first[0].ID == "4-1" {
		t.Fatalf("XADD MINID 5 left %v", msgs(first))
	}
	for i := 0; i < 250; i++ {
		_, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "big", ID: fmt.Sprintf("%d-1", i+1), Values: []string{"f", "v"}}).Result()
		must(t, "XADD big", err)
	}
	_, err = c.XAdd(ctx, &redis.XAddArgs{Stream: "big", MaxLen: 120, Approx: true, ID: "251-1", Values: []string{"f", "v"}}).Result()
	must(t, "XADD MAXLEN ~", err)
	n, _ = c.XLen(ctx, "big").Result()
	// ~ trims whole nodes of 100 entries: 251 → 151 (one node removed).
	wantEq(t, "XLEN after MAXLEN ~ 120", n, int64(151))
	trimmed, err := c.XTrimMaxLenApprox(ctx, "big", 10, 0).Result()
	must(t, "XTRIM MAXLEN ~", err)
	wantEq(t, "XTRIM MAXLEN ~ 10", trimmed, int64(100))
	trimmed, err = c.XTrimMaxLen(ctx, "big", 10).Result()
	must(t, "XTRIM MAXLEN", err)
	wantEq(t, "XTRIM MAXLEN 10", trimmed, int64(41))

	res, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "nomk", NoMkStream: true, Values: []string{"f", "v"}}).Result()
	if err != redis.Nil || res != "" {
		t.Fatalf("XADD NOMKSTREAM on a missing key = %q, %v; want redis.Nil", res, err)
	}
	ex, _ := c.Exists(ctx, "nomk").Result()
	wantEq(t, "EXISTS nomk", ex, int64(0))
}

func goRedisGroups(ctx context.Context, t *testing.T, c *redis.Client) {
	must(t, "XGROUP CREATE MKSTREAM", c.XGroupCreateMkStream(ctx, "g", "grp", "$").Err())
	created, err := c.XGroupCreateConsumer(ctx, "g", "grp", "idle-one").Result()
	must(t, "XGROUP CREATECONSUMER", err)
	wantEq(t, "CREATECONSUMER", created, int64(1))
	for i := 1; i <= 4; i++ {
		must(t, "XADD", c.XAdd(ctx, &redis.XAddArgs{Stream: "g", ID: fmt.Sprintf("%d-1", i), Values: []string{"n", fmt.Sprint(i)}}).Err())
	}
	got, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "grp", Consumer: "alice", Streams: []string{"g", ">"}, Count: 3}).Result()
	must(t, "XREADGROUP", err)
	if len(got) != 1 || got[0].Stream != "g" {
		t.Fatalf("XREADGROUP = %+v", got)
	}
	wantEq(t, "XREADGROUP", msgs(got[0].Messages), []string{"1-1:n=1", "2-1:n=2", "3-1:n=3"})

	acked, err := c.XAck(ctx, "g", "grp", "1-1", "9-9").Result()
	must(t, "XACK", err)
	wantEq(t, "XACK", acked, int64(1))

	p, err := c.XPending(ctx, "g", "grp").Result()
	must(t, "XPENDING", err)
	wantEq(t, "XPENDING", *p, redis.XPending{Count: 2, Lower: "2-1", Higher: "3-1", Consumers: map[string]int64{"alice": 2}})

	ext, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "g", Group: "grp", Start: "-", End: "+", Count: 10}).Result()
	must(t, "XPENDING ext", err)
	if len(ext) != 2 || ext[0].ID != "2-1" || ext[0].Consumer != "alice" || ext[0].RetryCount != 1 || ext[1].ID != "3-1" {
		t.Fatalf("XPENDING ext = %+v", ext)
	}

	claimed, err := c.XClaim(ctx, &redis.XClaimArgs{Stream: "g", Group: "grp", Consumer: "bob", MinIdle: 0, Messages: []string{"2-1"}}).Result()
	must(t, "XCLAIM", err)
	wantEq(t, "XCLAIM", msgs(claimed), []string{"2-1:n=2"})
	ids, err := c.XClaimJustID(ctx, &redis.XClaimArgs{Stream: "g", Group: "grp", Consumer: "bob", MinIdle: 0, Messages: []string{"3-1"}}).Result()
	must(t, "XCLAIM JUSTID", err)
	wantEq(t, "XCLAIM JUSTID", ids, []string{"3-1"})
	none, err := c.XClaim(ctx, &redis.XClaimArgs{Stream: "g", Group: "grp", Consumer: "bob", MinIdle: time.Hour, Messages: []string{"2-1"}}).Result()
	must(t, "XCLAIM min-idle", err)
	wantEq(t, "XCLAIM min-idle 1h", len(none), 0)

	ac, start, err := c.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: "g", Group: "grp", Consumer: "carol", Start: "0", Count: 1}).Result()
	must(t, "XAUTOCLAIM", err)
	wantEq(t, "XAUTOCLAIM", msgs(ac), []string{"2-1:n=2"})
	wantEq(t, "XAUTOCLAIM cursor", start, "3-1")
	acIDs, start, err := c.XAutoClaimJustID(ctx, &redis.XAutoClaimArgs{Stream: "g", Group: "grp", Consumer: "carol", Start: start, Count: 10}).Result()
	must(t, "XAUTOCLAIM JUSTID", err)
	wantEq(t, "XAUTOCLAIM JUSTID", acIDs, []string{"3-1"})
	wantEq(t, "XAUTOCLAIM JUSTID cursor", start, "0-0")

	p, err = c.XPending(ctx, "g", "grp").Result()
	must(t, "XPENDING", err)
	wantEq(t, "XPENDING after claims", p.Consumers, map[string]int64{"carol": 2})
}

func goRedisInfo(ctx context.Context, t *testing.T, c *redis.Client) {
	// The "g" stream from goRedisGroups: 4 entries, group grp with
	// consumers alice, bob, carol, idle-one; carol holds 2-1 and 3-1.
	s, err := c.XInfoStream(ctx, "g").Result()
	must(t, "XINFO STREAM", err)
	if s.Length != 4 || s.Groups != 1 || s.LastGeneratedID != "4-1" || s.EntriesAdded != 4 ||
		s.FirstEntry.ID != "1-1" || s.LastEntry.ID != "4-1" || s.RecordedFirstEntryID != "1-1" || s.MaxDeletedEntryID != "0-0" {
		t.Fatalf("XINFO STREAM = %+v", s)
	}
	groups, err := c.XInfoGroups(ctx, "g").Result()
	must(t, "XINFO GROUPS", err)
	wantEq(t, "XINFO GROUPS", groups, []redis.XInfoGroup{{Name: "grp", Consumers: 4, Pending: 2, LastDeliveredID: "3-1", EntriesRead: 3, Lag: 1}})
	cons, err := c.XInfoConsumers(ctx, "g", "grp").Result()
	must(t, "XINFO CONSUMERS", err)
	var names []string
	for _, cn := range cons {
		names = append(names, fmt.Sprintf("%s/%d", cn.Name, cn.Pending))
		if cn.Idle < 0 || cn.Idle > time.Minute {
			t.Fatalf("consumer %s idle %v", cn.Name, cn.Idle)
		}
	}
	wantEq(t, "XINFO CONSUMERS", names, []string{"alice/0", "bob/0", "carol/2", "idle-one/0"})
	for _, cn := range cons {
		// Redis 7.2: a consumer that never read has inactive -1.
		if cn.Name == "idle-one" && cn.Inactive != -1*time.Millisecond {
			t.Fatalf("never-active consumer inactive = %v, want -1ms", cn.Inactive)
		}
	}
	full, err := c.XInfoStreamFull(ctx, "g", 0).Result()
	must(t, "XINFO STREAM FULL", err)
	if full.Length != 4 || len(full.Entries) != 4 || len(full.Groups) != 1 {
		t.Fatalf("XINFO STREAM FULL = %+v", full)
	}
	g := full.Groups[0]
	if g.Name != "grp" || g.PelCount != 2 || len(g.Pending) != 2 || g.Pending[0].ID != "2-1" ||
		g.Pending[0].Consumer != "carol" || len(g.Consumers) != 4 || g.LastDeliveredID != "3-1" {
		t.Fatalf("XINFO STREAM FULL group = %+v", g)
	}
	for _, cn := range g.Consumers {
		if cn.SeenTime.IsZero() || time.Since(cn.SeenTime) > time.Minute {
			t.Fatalf("consumer %s seen-time %v", cn.Name, cn.SeenTime)
		}
		if cn.Name == "carol" && (cn.PelCount != 2 || len(cn.Pending) != 2) {
			t.Fatalf("carol = %+v", cn)
		}
	}
}

func goRedisBlocking(ctx context.Context, t *testing.T, addr string, proto int) {
	reader := newGoRedis(t, addr, proto)
	writer := newGoRedis(t, addr, proto)
	must(t, "XGROUP CREATE", writer.XGroupCreateMkStream(ctx, "b", "bg", "$").Err())

	type result struct {
		s   []redis.XStream
		err error
	}
	xread := make(chan result, 1)
	go func() {
		s, err := reader.XRead(ctx, &redis.XReadArgs{Streams: []string{"b", "$"}, Block: 0}).Result()
		xread <- result{s, err}
	}()
	waitBlockedClients(t, ctx, writer, 1)
	must(t, "XADD", writer.XAdd(ctx, &redis.XAddArgs{Stream: "b", ID: "1-1", Values: []string{"k", "v"}}).Err())
	select {
	case r := <-xread:
		must(t, "XREAD BLOCK", r.err)
		if len(r.s) != 1 || r.s[0].Stream != "b" {
			t.Fatalf("XREAD BLOCK = %+v", r.s)
		}
		wantEq(t, "XREAD BLOCK", msgs(r.s[0].Messages), []string{"1-1:k=v"})
	case <-time.After(10 * time.Second):
		t.Fatal("XREAD BLOCK not woken by XADD")
	}

	group := make(chan result, 1)
	go func() {
		s, err := reader.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "bg", Consumer: "w", Streams: []string{"b", ">"}, Block: 0}).Result()
		group <- result{s, err}
	}()
	// The group was created at $ before 1-1: 1-1 is delivered at once.
	select {
	case r := <-group:
		must(t, "XREADGROUP BLOCK", r.err)
		wantEq(t, "XREADGROUP immediate", msgs(r.s[0].Messages), []string{"1-1:k=v"})
	case <-time.After(10 * time.Second):
		t.Fatal("XREADGROUP BLOCK did not return the waiting entry")
	}
	go func() {
		s, err := reader.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "bg", Consumer: "w", Streams: []string{"b", ">"}, Block: 0}).Result()
		group <- result{s, err}
	}()
	waitBlockedClients(t, ctx, writer, 1)
	must(t, "XADD", writer.XAdd(ctx, &redis.XAddArgs{Stream: "b", ID: "2-1", Values: []string{"k", "w"}}).Err())
	select {
	case r := <-group:
		must(t, "XREADGROUP BLOCK", r.err)
		wantEq(t, "XREADGROUP BLOCK", msgs(r.s[0].Messages), []string{"2-1:k=w"})
	case <-time.After(10 * time.Second):
		t.Fatal("XREADGROUP BLOCK not woken by XADD")
	}

	// A timed-out block answers redis.Nil.
	_, err := reader.XRead(ctx, &redis.XReadArgs{Streams: []string{"b", "$"}, Block: 20 * time.Millisecond}).Result()
	if err != redis.Nil {
		t.Fatalf("XREAD BLOCK 20 timeout err = %v, want redis.Nil", err)
	}
}

// waitBlockedClients polls INFO clients until blocked_clients is n.
func waitBlockedClients(t *testing.T, ctx context.Context, c *redis.Client, n int) {
	t.Helper()
	want := fmt.Sprintf("blocked_clients:%d\r\n", n)
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		info, err := c.Info(ctx, "clients").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(info, want) {
			return fmt.Errorf("INFO clients has no %q: %q", want, info)
		}
		return nil
	})
}

func goRedisPipelines(ctx context.Context, t *testing.T, c *redis.Client) {
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: "p", ID: "1-1", Values: []string{"a", "1"}})
		p.XAdd(ctx, &redis.XAddArgs{Stream: "p", ID: "2-1", Values: []string{"b", "2"}})
		p.XLen(ctx, "p")
		p.XAdd(ctx, &redis.XAddArgs{Stream: "p", ID: "1-1", Values: []string{"c", "3"}})
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "equal or smaller") {
		t.Fatalf("pipeline error = %v, want the XADD ID error", err)
	}
	wantEq(t, "pipelined XLEN", cmds[2].(*redis.IntCmd).Val(), int64(2))
	wantEq(t, "pipelined XADD", cmds[1].(*redis.StringCmd).Val(), "2-1")

	cmds, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: "p", ID: "3-1", Values: []string{"c", "3"}})
		p.XRange(ctx, "p", "-", "+")
		return nil
	})
	must(t, "TxPipelined", err)
	wantEq(t, "tx XADD", cmds[0].(*redis.StringCmd).Val(), "3-1")
	wantEq(t, "tx XRANGE", msgs(cmds[1].(*redis.XMessageSliceCmd).Val()), []string{"1-1:a=1", "2-1:b=2", "3-1:c=3"})
}
