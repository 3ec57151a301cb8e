package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestACLDeletedUserBlockedReadGoRedis: a go-redis consumer limited to its
// streams (~orders* +@stream +@connection) reads with XREADGROUP BLOCK;
// ACL DELUSER of its user closes the connection, the blocked read
// included, as Redis does.
func TestACLDeletedUserBlockedReadGoRedis(t *testing.T) {
	_, addr := startTestServer(t, nil)
	probe := dial(t, addr)
	ctx := context.Background()
	admin := newGoRedis(t, addr, 3)
	must(t, "ACL SETUSER", admin.Do(ctx, "ACL", "SETUSER", "consumer", "on", ">pw", "~orders*", "+@stream", "+@connection").Err())
	must(t, "XGROUP CREATE", admin.XGroupCreateMkStream(ctx, "orders", "g", "$").Err())

	for _, proto := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, Username: "consumer", Password: "pw",
			DisableIdentity: true, MaxRetries: -1, PoolSize: 1, ReadTimeout: -1})
		t.Cleanup(func() { c.Close() })
		who, err := c.Do(ctx, "ACL", "WHOAMI").Result()
		if err == nil || !strings.Contains(err.Error(), "NOPERM") {
			t.Fatalf("ACL WHOAMI as consumer: %v %v, want NOPERM", who, err)
		}
		_, err = c.XAdd(ctx, &redis.XAddArgs{Stream: "audit", Values: []string{"f", "v"}}).Result()
		if err == nil || err.Error() != "NOPERM No permissions to access a key" {
			t.Fatalf("XADD audit: %v", err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1",
				Streams: []string{"orders", ">"}, Block: 0}).Result()
			done <- err
		}()
		waitBlocked(t, probe, 1)
		n, err := admin.Do(ctx, "ACL", "DELUSER", "consumer").Int()
		must(t, "ACL DELUSER", err)
		wantEq(t, "ACL DELUSER", n, 1)
		select {
		case err := <-done:
			if err == nil || errors.Is(err, redis.Nil) {
				t.Fatalf("RESP%d: blocked XREADGROUP of a deleted user ended with %v, want a closed connection", proto, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("RESP%d: the deleted user's blocked XREADGROUP is still waiting", proto)
		}
		waitBlocked(t, probe, 0)
		must(t, "ACL SETUSER again", admin.Do(ctx, "ACL", "SETUSER", "consumer", "on", ">pw", "~orders*", "+@stream", "+@connection").Err())
	}
}
