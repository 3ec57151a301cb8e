package server

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisClaimNackCaps drives XREADGROUP CLAIM / MAXCOUNT / MAXSIZE,
// XREAD MAXCOUNT / MAXSIZE and XNACK through go-redis v9's typed API in
// RESP2 and RESP3, checking that its reply parsing works against streamd.
func TestGoRedisClaimNackCaps(t *testing.T) {
	_, addr := startTestServer(t, nil)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := newGoRedis(t, addr, proto)
		k := "gr" + string(rune('0'+proto))
		for _, id := range []string{"1-0", "2-0", "3-0"} {
			must(t, "XADD", c.XAdd(ctx, &redis.XAddArgs{Stream: k, ID: id, Values: []string{"f", id}}).Err())
		}
		must(t, "XGROUP CREATE", c.XGroupCreate(ctx, k, "g", "0").Err())
		res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{k, ">"},
			Count: 2, Block: -1}).Result()
		must(t, "XREADGROUP", err)
		wantEq(t, "first read", msgs(res[0].Messages), []string{"1-0:f=1-0", "2-0:f=2-0"})

		// XNACK FAIL 1-0: unowned, served first by CLAIM.
		n, err := c.XNack(ctx, &redis.XNackArgs{Stream: k, Group: "g", Mode: redis.XNackModeFail, IDs: []string{"1-0"}}).Result()
		must(t, "XNACK", err)
		wantEq(t, "XNACK", n, int64(1))
		rc := uint64(5)
		n, err = c.XNack(ctx, &redis.XNackArgs{Stream: k, Group: "g", Mode: redis.XNackModeSilent, IDs: []string{"3-0"},
			RetryCount: &rc, Force: true}).Result()
		must(t, "XNACK FORCE", err)
		wantEq(t, "XNACK FORCE", n, int64(1))
		pe, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: k, Group: "g", Start: "-", End: "+", Count: 10}).Result()
		must(t, "XPENDING", err)
		wantEq(t, "NACKed row", []any{pe[0].ID, pe[0].Consumer, pe[0].RetryCount}, []any{"1-0", "", int64(1)})
		wantEq(t, "FORCEd row", []any{pe[2].ID, pe[2].Consumer, pe[2].RetryCount}, []any{"3-0", "", int64(5)})

		res, err = c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c2", Streams: []string{k, ">"},
			Claim: time.Millisecond, MaxCount: 2, Block: -1}).Result()
		must(t, "XREADGROUP CLAIM", err)
		ms := res[0].Messages
		wantEq(t, "claimed", msgs(ms), []string{"1-0:f=1-0", "3-0:f=3-0"})
		if ms[0].DeliveredCount != 1 || ms[1].DeliveredCount != 5 || ms[0].MillisElapsedFromDelivery < 1000000 {
			t.Fatalf("RESP%d claim metadata %+v", proto, ms)
		}

		xr, err := c.XRead(ctx, &redis.XReadArgs{Streams: []string{k, "0"}, MaxCount: 2, Block: -1}).Result()
		must(t, "XREAD MAXCOUNT", err)
		wantEq(t, "XREAD MAXCOUNT 2", len(xr[0].Messages), 2)
		xr, err = c.XRead(ctx, &redis.XReadArgs{Streams: []string{k, "0"}, MaxSize: 1, Block: -1}).Result()
		must(t, "XREAD MAXSIZE", err)
		wantEq(t, "XREAD MAXSIZE 1", len(xr[0].Messages), 1)

		info, err := c.XInfoStreamFull(ctx, k, 10).Result()
		must(t, "XINFO STREAM FULL", err)
		wantEq(t, "pel-count", info.Groups[0].PelCount, int64(3))
	}
}
