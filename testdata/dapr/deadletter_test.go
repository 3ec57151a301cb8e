package dapr

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dapr/components-contrib/pubsub"

	"streamd/internal/testutil"
)

// TestDaprDeadLetterByVisibility: a Dapr subscription with its reclaim loop
// off (processingTimeout 0: no XPENDING, no XCLAIM from the client) on a
// group the operator set up with XGROUP CONFIG VISIBILITY + MAXDELIVERIES +
// DEADLETTER. A message its handler keeps failing comes back through
// Dapr's own plain XREADGROUP ... > (streamd's visibility redelivery),
// three deliveries in all, then lands in the dead-letter stream with its
// origin and payload, acknowledged; the good messages are delivered once.
func TestDaprDeadLetterByVisibility(t *testing.T) {
	addr := startStreamd(t, "")
	p := startProxy(t, addr)
	check := newClient(t, addr, "")
	ctx := context.Background()
	// The operator's setup, before Dapr subscribes (Dapr's own XGROUP
	// CREATE then answers BUSYGROUP, which it ignores).
	if err := check.XGroupCreateMkStream(ctx, "jobs", "V", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := check.Do(ctx, "XGROUP", "CONFIG", "jobs", "V", "VISIBILITY", "200", "MAXDELIVERIES", "3", "DEADLETTER", "jobs-dlq").Err(); err != nil {
		t.Fatal(err)
	}
	pub := newComponent(t, map[string]string{"redisHost": addr, "consumerID": "pub"})
	sub := newComponent(t, map[string]string{"redisHost": p.addr(), "consumerID": "V", "processingTimeout": "0"})
	r := &receiver{fail: func(m *pubsub.NewMessage, _ int) error {
		if string(m.Data) == "bad" {
			return errors.New("handler failure")
		}
		return nil
	}}
	subscribe(t, sub, "jobs", r)
	want := []string{"ok-1", "bad", "ok-2"}
	for _, m := range want {
		publish(t, pub, "jobs", []byte(m), nil)
	}
	r.waitAll(t, 10*time.Second, want)
	testutil.Eventually(t, 20*time.Second, 20*time.Millisecond, func() error {
		n, err := check.XLen(ctx, "jobs-dlq").Result()
		if err != nil || n != 1 {
			return fmt.Errorf("XLEN jobs-dlq = %d, %v", n, err)
		}
		return nil
	})
	msgs, err := check.XRange(ctx, "jobs-dlq", "-", "+").Result()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("XRANGE jobs-dlq = %v, %v", msgs, err)
	}
	v := msgs[0].Values
	if v["stream"] != "jobs" || v["group"] != "V" || v["consumer"] != "V" || v["deliveries"] != "3" || v["data"] != "bad" {
		t.Fatalf("dead letter %v", v)
	}
	orig, err := check.XRange(ctx, "jobs", v["id"].(string), v["id"].(string)).Result()
	if err != nil || len(orig) != 1 || orig[0].Values["data"] != "bad" {
		t.Fatalf("dead letter id %v names %v, %v", v["id"], orig, err)
	}
	pending, err := check.XPending(ctx, "jobs", "V").Result()
	if err != nil || pending.Count != 0 {
		t.Fatalf("XPENDING jobs V = %+v, %v; want nothing pending", pending, err)
	}
	if got := r.counts(); got["bad"] != 3 || got["ok-1"] != 1 || got["ok-2"] != 1 {
		t.Fatalf("deliveries %v, want bad 3 times, the others once", got)
	}
	for _, name := range []string{"XCLAIM", "XAUTOCLAIM", "XPENDING"} {
		if cs := p.commands(name); len(cs) != 0 {
			t.Fatalf("Dapr sent %v: the redelivery was meant to need no client-side claim", cs)
		}
	}
	if len(p.commands("XREADGROUP")) < 3 {
		t.Fatalf("Dapr read %d times", len(p.commands("XREADGROUP")))
	}
}
