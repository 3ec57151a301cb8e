package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// go-redis v9's typed API for Redis 8.2's XDELEX, XACKDEL and the
// KEEPREF|DELREF|ACKED modes of XADD/XTRIM, against streamd in RESP2 and
// RESP3: what it sends is accepted, and its reply parsing works.
func TestGoRedisXDelExXAckDel(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			ctx := context.Background()
			c := newGoRedis(t, startStreamd(t), proto)
			for _, id := range []string{"1-0", "2-0", "3-0", "4-0"} {
				must(t, "XADD", c.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: id, Values: []string{"f", "v"}}).Err())
			}
			must(t, "XGROUP CREATE", c.XGroupCreate(ctx, "s", "g1", "0").Err())
			must(t, "XGROUP CREATE", c.XGroupCreate(ctx, "s", "g2", "0").Err())
			for _, g := range []string{"g1", "g2"} {
				must(t, "XREADGROUP", c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: g, Consumer: "c",
					Streams: []string{"s", ">"}, Count: 2}).Err())
			}

			res, err := c.XDelEx(ctx, "s", "ACKED", "1-0", "3-0", "9-0").Result()
			must(t, "XDELEX ACKED", err)
			wantEq(t, "XDELEX ACKED", res, []any{int64(2), int64(2), int64(2)})

			res, err = c.XAckDel(ctx, "s", "g1", "ACKED", "1-0", "3-0").Result()
			must(t, "XACKDEL ACKED", err)
			wantEq(t, "XACKDEL ACKED", res, []any{int64(2), int64(-1)})

			res, err = c.XAckDel(ctx, "s", "g1", "DELREF", "2-0").Result()
			must(t, "XACKDEL DELREF", err)
			wantEq(t, "XACKDEL DELREF", res, []any{int64(1)})
			p, err := c.XPending(ctx, "s", "g2").Result()
			must(t, "XPENDING", err)
			wantEq(t, "g2 pending after DELREF", p.Count, int64(1))

			res, err = c.XDelEx(ctx, "s", "KEEPREF", "1-0", "2-0").Result()
			must(t, "XDELEX KEEPREF", err)
			wantEq(t, "XDELEX KEEPREF", res, []any{int64(1), int64(-1)})
			res, err = c.XDelEx(ctx, "nokey", "DELREF", "1-0").Result()
			must(t, "XDELEX nokey", err)
			wantEq(t, "XDELEX nokey", res, []any{int64(-1)})

			// XADD with a mode; XTRIM*Mode.
			id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "5-0", Mode: "ACKED", MaxLen: 1,
				Values: []string{"f", "v"}}).Result()
			must(t, "XADD ACKED", err)
			wantEq(t, "XADD ACKED id", id, "5-0")
			wantEq(t, "XLEN", c.XLen(ctx, "s").Val(), int64(3)) // 3-0 unread by g1/g2: referenced
			n, err := c.XTrimMaxLenMode(ctx, "s", 0, "ACKED").Result()
			must(t, "XTRIM MAXLEN ACKED", err)
			wantEq(t, "XTRIM MAXLEN ACKED", n, int64(0))
			n, err = c.XTrimMinIDApproxMode(ctx, "s", "9-0", 0, "DELREF").Result()
			must(t, "XTRIM MINID ~ DELREF", err)
			wantEq(t, "XTRIM MINID ~ DELREF", n, int64(3))
			n, err = c.XTrimMaxLenApproxMode(ctx, "s", 0, 10, "KEEPREF").Result()
			must(t, "XTRIM MAXLEN ~ LIMIT KEEPREF", err)
			wantEq(t, "XTRIM MAXLEN ~ LIMIT KEEPREF", n, int64(0))
			n, err = c.XTrimMinIDMode(ctx, "s", "9-0", "KEEPREF").Result()
			must(t, "XTRIM MINID KEEPREF", err)
			wantEq(t, "XTRIM MINID KEEPREF", n, int64(0))
			p, err = c.XPending(ctx, "s", "g2").Result()
			must(t, "XPENDING", err)
			// 1-0 stays: XDELEX KEEPREF left it dangling, and trimming
			// only visits entries still in the stream.
			wantEq(t, "g2 pending after XTRIM DELREF", p.Count, int64(1))
		})
	}
}
