package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// XCFGSET's retention options sent to a follower of a 3-node cluster run
// at the leader; the leader's sweep expires an idle group and every node's
// XINFO STREAM shows the same retention fields.
func TestClusterRetentionGroupExpiry(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	ctx := context.Background()
	f := newGoRedis(t, followersOf(nodes, 0)[0].addr, 2)
	for _, id := range []string{"1-0", "2-0", "3-0"} {
		must(t, "XADD", f.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: id, Values: []string{"f", "v"}}).Err())
	}
	must(t, "XGROUP CREATE", f.XGroupCreate(ctx, "s", "g", "0").Err())
	must(t, "XCFGSET", f.Do(ctx, "XCFGSET", "s", "MAXLEN", "1", "GROUP-IDLE-EXPIRE", "300").Err())
	// Until g expires it holds the entries; then the sweep trims to one.
	testutil.Eventually(t, 15*time.Second, 20*time.Millisecond, func() error {
		for _, cn := range nodes {
			c := newGoRedis(t, cn.addr, 3)
			res, err := c.Do(ctx, "XINFO", "STREAM", "s").Result()
			c.Close()
			if err != nil {
				return err
			}
			m, _ := res.(map[any]any)
			if m["groups-expired"] != int64(1) || m["retention-held"] != int64(0) || m["length"] != int64(1) ||
				m["retention-maxlen"] != int64(1) || m["group-idle-expire"] != int64(300) {
				return fmt.Errorf("%s: XINFO STREAM %v", cn.id, m)
			}
		}
		return nil
	})
}
