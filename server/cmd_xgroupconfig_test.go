package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
)

// TestXGroupConfigCommand: setting, reading (RESP2 flat array, RESP3 map),
// NONE, the errors in Redis's order (key, group, then arguments), XINFO
// GROUPS's extra fields only for a configured group, and HELP.
func TestXGroupConfigCommand(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"XADD", "s", "1-0", "f", "v"}, `"1-0"`},
		{[]string{"XGROUP", "CREATE", "s", "g", "0"}, "+OK"},
		{[]string{"XGROUP", "CREATE", "s", "plain", "0"}, "+OK"},
		{[]string{"XGROUP", "CONFIG", "s", "g"}, `["max-deliveries", (integer) 0, "dead-letter-key", (nil bulk), "visibility", (integer) 0]`},
		{[]string{"XGROUP", "CONFIG", "s", "g", "maxdeliveries", "3", "DEADLETTER", "dlq", "VISIBILITY", "30000"}, "+OK"},
		{[]string{"XGROUP", "CONFIG", "s", "g"}, `["max-deliveries", (integer) 3, "dead-letter-key", "dlq", "visibility", (integer) 30000]`},
		{[]string{"XGROUP", "CONFIG", "s", "g", "VISIBILITY", "NONE"}, "+OK"},
		{[]string{"XGROUP", "CONFIG", "s", "g"}, `["max-deliveries", (integer) 3, "dead-letter-key", "dlq", "visibility", (integer) 0]`},
		{[]string{"XINFO", "GROUPS", "s"}, `[["name", "g", "consumers", (integer) 0, "pending", (integer) 0, "last-delivered-id", "0-0", ` +
			`"entries-read", (nil bulk), "lag", (integer) 1, "max-deliveries", (integer) 3, "dead-letter-key", "dlq", "dead-lettered", (integer) 0, "visibility", (integer) 0], ` +
			`["name", "plain", "consumers", (integer) 0, "pending", (integer) 0, "last-delivered-id", "0-0", "entries-read", (nil bulk), "lag", (integer) 1]]`},
		{[]string{"XGROUP", "CONFIG", "nokey", "g", "VISIBILITY", "x"}, "(error) " + string(errXGroupNoKey)},
		{[]string{"XGROUP", "CONFIG", "nokey", "g"}, "(error) " + string(errXGroupNoKey)},
		{[]string{"XGROUP", "CONFIG", "s", "nog", "VISIBILITY", "x"}, "(error) NOGROUP No such consumer group 'nog' for key name 's'"},
		{[]string{"XGROUP", "CONFIG", "s", "nog"}, "(error) NOGROUP No such consumer group 'nog' for key name 's'"},
		{[]string{"XGROUP", "CONFIG", "s", "g", "VISIBILITY"}, "(error) ERR syntax error"},
		{[]string{"XGROUP", "CONFIG", "s", "g", "COLOR", "red"}, "(error) ERR syntax error"},
		{[]string{"XGROUP", "CONFIG", "s", "g", "VISIBILITY", "0"}, "(error) " + string(errGroupConfigVisibility)},
		{[]string{"XGROUP", "CONFIG", "s", "g", "VISIBILITY", "1.5"}, "(error) " + string(errGroupConfigVisibility)},
		{[]string{"XGROUP", "CONFIG", "s", "g", "MAXDELIVERIES", "-1"}, "(error) " + string(errGroupConfigMaxDeliveries)},
		{[]string{"XGROUP", "CONFIG", "s", "g", "DEADLETTER", "s"}, "(error) " + string(errGroupConfigSelf)},
		{[]string{"XGROUP", "CONFIG", "s"}, "(error) ERR wrong number of arguments for 'xgroup|config' command"},
		{[]string{"XGROUP", "CONFIG", "s", "g", "MAXDELIVERIES", "none", "DEADLETTER", "none"}, "+OK"},
		// Back to the defaults, but it dead-lettered nothing: Redis's shape.
		{[]string{"XINFO", "GROUPS", "s"}, `[["name", "g", "consumers", (integer) 0, "pending", (integer) 0, "last-delivered-id", "0-0", ` +
			`"entries-read", (nil bulk), "lag", (integer) 1], ` +
			`["name", "plain", "consumers", (integer) 0, "pending", (integer) 0, "last-delivered-id", "0-0", "entries-read", (nil bulk), "lag", (integer) 1]]`},
	})
	mustDo(t, c, "HELLO", "3")
	if got := mustDo(t, c, "XGROUP", "CONFIG", "s", "g"); got != `map{"max-deliveries": (integer) 0, "dead-letter-key": (null), "visibility": (integer) 0}` {
		t.Fatalf("RESP3: %s", got)
	}
	if got := mustDo(t, c, "XGROUP", "HELP"); !strings.Contains(got, "CONFIG <key> <groupname>") {
		t.Fatalf("HELP lacks CONFIG: %s", got)
	}
}

// TestXGroupConfigCrossSlot: in cluster mode the dead-letter stream must be
// in the stream's slot.
func TestXGroupConfigCrossSlot(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.ClusterEnabled = true })
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"XGROUP", "CREATE", "{q}s", "g", "$", "MKSTREAM"}, "+OK"},
		{[]string{"XGROUP", "CONFIG", "{q}s", "g", "DEADLETTER", "dlq"}, "(error) CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"XGROUP", "CONFIG", "{q}s", "g", "MAXDELIVERIES", "2", "DEADLETTER", "{q}dlq"}, "+OK"},
		{[]string{"XGROUP", "CONFIG", "{q}s", "g", "DEADLETTER", "NONE"}, "+OK"},
	})
}

// TestDeadLetterClaimReplies: XCLAIM leaves a dead-lettered entry out of
// its answer, XAUTOCLAIM lists it with the deleted IDs; the dead-letter
// stream gets the documented fields, and a client blocked on it wakes.
func TestDeadLetterClaimReplies(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	c, r := dial(t, addr), dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"XADD", "s", "1-0", "f", "v"}, `"1-0"`},
		{[]string{"XADD", "s", "2-0", "f", "w"}, `"2-0"`},
		{[]string{"XGROUP", "CREATE", "s", "g", "0"}, "+OK"},
		{[]string{"XGROUP", "CONFIG", "s", "g", "MAXDELIVERIES", "1", "DEADLETTER", "dlq"}, "+OK"},
		{[]string{"XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"}, `[["s", [["1-0", ["f", "v"]], ["2-0", ["f", "w"]]]]]`},
	})
	if err := r.Send("XREAD", "BLOCK", "0", "STREAMS", "dlq", "$"); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, c, 1)
	runSteps(t, c, []step{
		{[]string{"XCLAIM", "s", "g", "c2", "0", "1-0"}, `[]`},
		{[]string{"XAUTOCLAIM", "s", "g", "c2", "0", "0"}, `["0-0", [], ["2-0"]]`},
		{[]string{"XPENDING", "s", "g"}, `[(integer) 0, (nil bulk), (nil bulk), (nil array)]`},
	})
	got := receive(t, r)
	if !strings.HasPrefix(got, `[["dlq", [[`) || !strings.Contains(got, `["stream", "s", "id", "1-0", "group", "g", "consumer", "c1", "deliveries", "1", "f", "v"]`) {
		t.Fatalf("blocked XREAD on the dead-letter stream got %s", got)
	}
	runSteps(t, c, []step{
		{[]string{"XLEN", "dlq"}, "(integer) 2"},
	})
	if n := srv.stats.Delivery.DeadLettered.Load(); n != 2 {
		t.Fatalf("dead-lettered metric %d", n)
	}
}

// TestVisibilityRedeliveryBlocked: with VISIBILITY, a plain XREADGROUP ...
// > redelivers idle entries in the ordinary two-element shape, and a client
// blocked on the group wakes when one becomes due (nothing is written
// meanwhile); after MAXDELIVERIES the entry goes to the dead-letter stream.
func TestVisibilityRedeliveryBlocked(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	c, r := dial(t, addr), dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"XADD", "s", "1-0", "f", "v"}, `"1-0"`},
		{[]string{"XGROUP", "CREATE", "s", "g", "0"}, "+OK"},
		{[]string{"XGROUP", "CONFIG", "s", "g", "VISIBILITY", "200", "MAXDELIVERIES", "2", "DEADLETTER", "dlq"}, "+OK"},
		{[]string{"XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"}, `[["s", [["1-0", ["f", "v"]]]]]`},
	})
	start := time.Now()
	if err := r.Send("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "20000", "STREAMS", "s", ">"); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, r); got != `[["s", [["1-0", ["f", "v"]]]]]` {
		t.Fatalf("redelivery: %s", got)
	}
	if el := time.Since(start); el >= 15*time.Second {
		t.Fatalf("woken after %v: not by the visibility timer", el)
	}
	if got := mustDo(t, c, "XPENDING", "s", "g", "-", "+", "10"); !strings.HasPrefix(got, `[["1-0", "c2", (integer) `) || !strings.HasSuffix(got, `(integer) 2]]`) {
		t.Fatalf("XPENDING %s", got)
	}
	// Its third delivery would pass MAXDELIVERIES: dead-lettered once due.
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		mustDo(t, c, "XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", ">")
		if got := mustDo(t, c, "XLEN", "dlq"); got != "(integer) 1" {
			return fmt.Errorf("XLEN dlq %s", got)
		}
		return nil
	})
	runSteps(t, c, []step{
		{[]string{"XPENDING", "s", "g"}, `[(integer) 0, (nil bulk), (nil bulk), (nil array)]`},
	})
	if n := srv.stats.Delivery.VisibilityRedeliveries.Load(); n != 1 {
		t.Fatalf("visibility redeliveries metric %d", n)
	}
	if n := srv.stats.Delivery.DeadLettered.Load(); n != 1 {
		t.Fatalf("dead-lettered metric %d", n)
	}
}
