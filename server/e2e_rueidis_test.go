package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"streamd/internal/testutil"
)

// TestRueidisClientSideCaching connects rueidis with its defaults: RESP3,
// HELLO 3 and CLIENT TRACKING ON OPTIN (it refuses to connect without it).
// Stream commands work through it, and a cached read (TYPE, EXISTS: rueidis
// caches no stream command) is invalidated by an XADD from another
// connection, so the next cached read sees the new state.
func TestRueidisClientSideCaching(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableRetry: true})
	if err != nil {
		t.Fatalf("rueidis connect: %v", err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	typeOf := func() rueidis.RedisResult {
		return c.DoCache(ctx, c.B().Type().Key("s").Cache(), time.Minute)
	}
	if v, err := typeOf().ToString(); err != nil || v != "none" {
		t.Fatalf("cached TYPE = %q, %v", v, err)
	}
	if !typeOf().IsCacheHit() {
		t.Fatal("second TYPE not served from the client-side cache")
	}

	other := dial(t, addr)
	if got := mustDo(t, other, "XADD", "s", "1-1", "f", "v"); got != `"1-1"` {
		t.Fatalf("XADD from another client = %s", got)
	}
	// The invalidate push drops the cached reply; poll until it is gone.
	testutil.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
		if v, err := typeOf().ToString(); err != nil || v != "stream" {
			return errors.New("cached TYPE still answers the old reply")
		}
		return nil
	})

	id, err := c.Do(ctx, c.B().Xadd().Key("s").Id("2-1").FieldValue().FieldValue("f", "w").Build()).ToString()
	if err != nil || id != "2-1" {
		t.Fatalf("XADD = %q, %v", id, err)
	}
	es, err := c.Do(ctx, c.B().Xrange().Key("s").Start("-").End("+").Build()).AsXRange()
	if err != nil || len(es) != 2 || es[1].ID != "2-1" || es[1].FieldValues["f"] != "w" {
		t.Fatalf("XRANGE = %+v, %v", es, err)
	}
	if err := c.Do(ctx, c.B().XgroupCreate().Key("s").Group("g").Id("0").Build()).Error(); err != nil {
		t.Fatalf("XGROUP CREATE: %v", err)
	}
	streamsRead, err := c.Do(ctx, c.B().Xreadgroup().Group("g", "c").Count(10).Streams().Key("s").Id(">").Build()).AsXRead()
	if err != nil || len(streamsRead["s"]) != 2 {
		t.Fatalf("XREADGROUP = %+v, %v", streamsRead, err)
	}
	if n, err := c.Do(ctx, c.B().Xack().Key("s").Group("g").Id("1-1", "2-1").Build()).AsInt64(); err != nil || n != 2 {
		t.Fatalf("XACK = %d, %v", n, err)
	}
}
