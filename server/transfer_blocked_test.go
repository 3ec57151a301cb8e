package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"streamd/internal/testutil"
)

// TestClusterBlockedGroupReadAcrossTransfers: consumers blocked in
// XREADGROUP (on the leader and on followers) while a writer adds entries
// and RAFT TRANSFER moves the shard around never get NOGROUP — the group
// exists throughout. A woken read whose retry the shard refused (it is
// being handed over, or led elsewhere now) is routed again like a first
// try, not mistaken for a destroyed group.
func TestClusterBlockedGroupReadAcrossTransfers(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	ctx := context.Background()
	w := noRetryClient(t, leaderOf(nodes, 0).addr)
	must(t, "XGROUP CREATE", w.XGroupCreateMkStream(ctx, "s", "g", "$").Err())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	var mu sync.Mutex
	errs := map[string]int{}
	for k := range 6 {
		c := noRetryClient(t, nodes[k%3].addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: fmt.Sprint("c", k),
					Streams: []string{"s", ">"}, Count: 1, Block: 2 * time.Second, NoAck: true}).Result()
				switch {
				case errors.Is(err, redis.Nil):
				case err != nil:
					mu.Lock()
					errs[err.Error()]++
					mu.Unlock()
				default:
					reads.Add(int64(len(res[0].Messages)))
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			w.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}})
			time.Sleep(time.Millisecond) // a steady pace of wake-ups
		}
	}()
	for k := 0; k < 12; k++ {
		from := leaderOf(nodes, 0)
		to := followersOf(nodes, 0)[k%2]
		must(t, "transfer", from.node.TransferLeader(0, to.id))
		r0 := reads.Load()
		testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
			if reads.Load() < r0+20 {
				return errors.New("consumers not reading")
			}
			return nil
		})
	}
	close(stop)
	wg.Wait()
	for e, n := range errs {
		if strings.HasPrefix(e, "NOGROUP") {
			t.Errorf("%d blocked reads answered %q", n, e)
		}
	}
	t.Logf("%d entries read; errors %v", reads.Load(), errs)
}
