package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisIDMP drives idempotent production through go-redis's typed
// API (XAddArgs ProducerID/IdempotentID/IdempotentAuto, XCfgSet,
// XInfoStream's IDMP fields), in RESP2 and RESP3: its reply parsing must
// work against streamd.
func TestGoRedisIDMP(t *testing.T) {
	_, addr := startTestServer(t, nil)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := newGoRedis(t, addr, proto)
		key := fmt.Sprintf("idmp%d", proto)
		add := func(a *redis.XAddArgs) string {
			t.Helper()
			a.Stream = key
			id, err := c.XAdd(ctx, a).Result()
			must(t, "XAdd", err)
			return id
		}
		id1 := add(&redis.XAddArgs{ProducerID: "producer1", IdempotentID: "msg1", Values: []string{"f", "1"}})
		id2 := add(&redis.XAddArgs{ProducerID: "producer1", IdempotentID: "msg1", Values: []string{"f", "2"}})
		wantEq(t, "duplicate ID", id2, id1)
		id3 := add(&redis.XAddArgs{ProducerID: "producer1", IdempotentID: "msg2", Values: []string{"f", "3"}})
		if id3 == id1 {
			t.Fatalf("RESP%d: new iid got the old ID", proto)
		}
		a1 := add(&redis.XAddArgs{ProducerID: "producer1", IdempotentAuto: true, Values: []string{"a", "1", "b", "2"}})
		a2 := add(&redis.XAddArgs{ProducerID: "producer1", IdempotentAuto: true, Values: []string{"b", "2", "a", "1"}})
		wantEq(t, "IDMPAUTO duplicate", a2, a1)
		vals, err := c.XRange(ctx, key, "-", "+").Result()
		must(t, "XRange", err)
		wantEq(t, "XRange length", len(vals), 3)
		wantEq(t, "kept fields", vals[0].Values, map[string]any{"f": "1"})

		info, err := c.XInfoStream(ctx, key).Result()
		must(t, "XInfoStream", err)
		wantEq(t, "IDMP info", [6]int64{info.IDMPDuration, info.IDMPMaxSize, info.PIDsTracked, info.IIDsTracked,
			info.IIDsAdded, info.IIDsDuplicates}, [6]int64{100, 100, 1, 3, 3, 2})
		wantEq(t, "length", info.Length, int64(3))

		status, err := c.XCfgSet(ctx, &redis.XCfgSetArgs{Stream: key, Duration: 200, MaxSize: 500}).Result()
		must(t, "XCfgSet", err)
		wantEq(t, "XCfgSet", status, "OK")
		full, err := c.XInfoStreamFull(ctx, key, 0).Result()
		must(t, "XInfoStreamFull", err)
		wantEq(t, "FULL IDMP info", [6]int64{full.IDMPDuration, full.IDMPMaxSize, full.PIDsTracked, full.IIDsTracked,
			full.IIDsAdded, full.IIDsDuplicates}, [6]int64{200, 500, 0, 0, 3, 2})
		wantEq(t, "FULL entries", len(full.Entries), 3)

		if err := c.XCfgSet(ctx, &redis.XCfgSetArgs{Stream: key, Duration: 86401}).Err(); err == nil ||
			err.Error() != "ERR IDMP-DURATION must be between 1 and 86400 seconds" {
			t.Fatalf("RESP%d: XCfgSet out of range: %v", proto, err)
		}
	}
}
