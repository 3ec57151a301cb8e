package server

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// XDELEX, XACKDEL and XTRIM … ACKED sent to a follower of a 3-node cluster
// run at the leader and answer as on a single node.
func TestClusterXDelExXAckDel(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	ctx := context.Background()
	fs := followersOf(nodes, 0)
	f, other := newGoRedis(t, fs[0].addr, 2), newGoRedis(t, fs[1].addr, 3)
	for _, id := range []string{"1-0", "2-0", "3-0"} {
		must(t, "XADD", f.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: id, Values: []string{"f", "v"}}).Err())
	}
	must(t, "XGROUP CREATE", f.XGroupCreate(ctx, "s", "g", "0").Err())
	must(t, "XREADGROUP", f.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c",
		Streams: []string{"s", ">"}, Count: 2}).Err())

	res, err := f.XAckDel(ctx, "s", "g", "ACKED", "1-0", "3-0").Result()
	must(t, "XACKDEL via follower", err)
	wantEq(t, "XACKDEL", res, []any{int64(1), int64(-1)})
	res, err = other.XDelEx(ctx, "s", "ACKED", "2-0", "3-0").Result()
	must(t, "XDELEX via the other follower", err)
	wantEq(t, "XDELEX", res, []any{int64(2), int64(2)})
	n, err := f.XTrimMaxLenMode(ctx, "s", 0, "DELREF").Result()
	must(t, "XTRIM DELREF", err)
	wantEq(t, "XTRIM DELREF", n, int64(2))
	p, err := other.XPending(ctx, "s", "g").Result()
	must(t, "XPENDING", err)
	wantEq(t, "pending", p.Count, int64(0))
}
