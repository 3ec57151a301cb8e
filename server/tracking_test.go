package server

import (
	"strings"
	"testing"
)

// pushesAfterPing returns the pushes c received since the last call, up to
// a PING's reply. A writer's invalidations are written before its own reply
// returns, so once the writer's command has answered, a PING on c sees them.
func pushesAfterPing(t *testing.T, c *respConn) []string {
	t.Helper()
	if got := mustDo(t, c, "PING"); got != "+PONG" {
		t.Fatalf("PING: %s", got)
	}
	var out []string
	for _, p := range c.Pushes {
		out = append(out, p.String())
	}
	c.Pushes = nil
	return out
}

func invalidate(key string) string { return `push["invalidate", ["` + key + `"]]` }

func TestTrackingDefaultMode(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, o := dial(t, addr), dial(t, addr)
	mustDo(t, c, "HELLO", "3")
	runSteps(t, c, []step{
		{[]string{"CLIENT", "TRACKINGINFO"}, `map{"flags": set{"off"}, "redirect": (integer) -1, "prefixes": []}`},
		{[]string{"CLIENT", "TRACKING", "on"}, "+OK"},
		{[]string{"CLIENT", "TRACKINGINFO"}, `map{"flags": set{"on"}, "redirect": (integer) 0, "prefixes": []}`},
		{[]string{"XLEN", "k"}, "(integer) 0"},
		{[]string{"XRANGE", "j", "-", "+"}, "[]"},
	})
	mustDo(t, o, "XADD", "k", "1-1", "f", "v")
	if got := pushesAfterPing(t, c); strings.Join(got, " ") != invalidate("k") {
		t.Fatalf("pushes %q", got)
	}
	// Invalidated keys are forgotten until read again.
	mustDo(t, o, "XADD", "k", "2-1", "f", "v")
	if got := pushesAfterPing(t, c); len(got) != 0 {
		t.Fatalf("second write pushed %q", got)
	}
	// A write that changes nothing (XDEL of a missing ID) is no touch.
	mustDo(t, o, "XDEL", "j", "1-1")
	if got := pushesAfterPing(t, c); len(got) != 0 {
		t.Fatalf("no-op write pushed %q", got)
	}
	// Own writes are reported too (no NOLOOP).
	mustDo(t, c, "XLEN", "k")
	mustDo(t, c, "DEL", "k")
	if got := pushesAfterPing(t, c); strings.Join(got, " ") != invalidate("k") {
		t.Fatalf("own write pushes %q", got)
	}
	// FLUSHALL: invalidate with null.
	mustDo(t, o, "FLUSHALL")
	if got := pushesAfterPing(t, c); strings.Join(got, " ") != `push["invalidate", (null)]` {
		t.Fatalf("flush pushes %q", got)
	}
	mustDo(t, c, "CLIENT", "TRACKING", "off")
	mustDo(t, c, "XLEN", "k")
	mustDo(t, o, "XADD", "k", "3-1", "f", "v")
	if got := pushesAfterPing(t, c); len(got) != 0 {
		t.Fatalf("pushes after TRACKING off: %q", got)
	}
}

func TestTrackingOptInOptOut(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, o := dial(t, addr), dial(t, addr)
	mustDo(t, c, "HELLO", "3")
	runSteps(t, c, []step{
		{[]string{"CLIENT", "CACHING", "yes"}, "(error) ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"},
		{[]string{"CLIENT", "TRACKING", "on", "OPTIN"}, "+OK"},
		{[]string{"CLIENT", "CACHING", "no"}, "(error) ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."},
		{[]string{"CLIENT", "CACHING", "maybe"}, "(error) ERR syntax error"},
		{[]string{"CLIENT", "TRACKING", "on", "OPTOUT"}, "(error) ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."},
		{[]string{"XLEN", "a"}, "(integer) 0"},
		{[]string{"CLIENT", "CACHING", "yes"}, "+OK"},
		{[]string{"CLIENT", "TRACKINGINFO"}, `map{"flags": set{"on", "optin", "caching-yes"}, "redirect": (integer) 0, "prefixes": []}`},
		{[]string{"XLEN", "b"}, "(integer) 0"},
	})
	mustDo(t, o, "XADD", "a", "1-1", "f", "v")
	mustDo(t, o, "XADD", "b", "1-1", "f", "v")
	if got := pushesAfterPing(t, c); strings.Join(got, " ") != invalidate("b") {
		t.Fatalf("OPTIN pushes %q", got)
	}
	runSteps(t, c, []step{
		{[]string{"CLIENT", "TRACKING", "off"}, "+OK"},
		{[]string{"CLIENT", "TRACKING", "on", "OPTOUT"}, "+OK"},
		{[]string{"CLIENT", "CACHING", "yes"}, "(error) ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."},
		{[]string{"CLIENT", "CACHING", "no"}, "+OK"},
		{[]string{"XLEN", "a"}, "(integer) 1"},
		{[]string{"XLEN", "b"}, "(integer) 1"},
	})
	mustDo(t, o, "XADD", "a", "2-1", "f", "v")
	mustDo(t, o, "XADD", "b", "2-1", "f", "v")
	if got := pushesAfterPing(t, c); strings.Join(got, " ") != invalidate("b") {
		t.Fatalf("OPTOUT pushes %q", got)
	}
}

func TestTrackingBcastNoLoop(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, o := dial(t, addr), dial(t, addr)
	mustDo(t, c, "HELLO", "3")
	runSteps(t, c, []step{
		{[]string{"CLIENT", "TRACKING", "on", "PREFIX", "a"}, "(error) ERR PREFIX option requires BCAST mode to be enabled"},
		{[]string{"CLIENT", "TRACKING", "on", "BCAST", "OPTIN"}, "(error) ERR OPTIN and OPTOUT are not compatible with BCAST"},
		{[]string{"CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"}, "(error) ERR You can't specify both OPTIN mode and OPTOUT mode"},
		{[]string{"CLIENT", "TRACKING", "on", "REDIRECT", "99999"}, "(error) ERR The client ID you want redirect to does not exist"},
		{[]string{"CLIENT", "TRACKING", "on", "FOO"}, "(error) ERR syntax error"},
		{[]string{"CLIENT", "TRACKING", "maybe"}, "(error) ERR syntax error"},
		{[]string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "b", "NOLOOP"}, "+OK"},
		{[]string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab"}, "(error) ERR Prefix 'ab' overlaps with an existing prefix 'a'. Prefixes for a single client must not overlap."},
		{[]string{"CLIENT", "TRACKINGINFO"}, `map{"flags": set{"on", "bcast", "noloop"}, "redirect": (integer) 0, "prefixes": ["a", "b"]}`},
	})
	mustDo(t, o, "XADD", "a1", "1-1", "f", "v")
	mustDo(t, o, "XADD", "c1", "1-1", "f", "v")
	mustDo(t, o, "XADD", "b1", "1-1", "f", "v")
	mustDo(t, c, "XADD", "a2", "1-1", "f", "v") // NOLOOP: not told
	if got := strings.Join(pushesAfterPing(t, c), " "); got != invalidate("a1")+" "+invalidate("b1") {
		t.Fatalf("BCAST pushes %q", got)
	}
}

func TestTrackingRedirect(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, target, o := dial(t, addr), dial(t, addr), dial(t, addr)
	mustDo(t, target, "HELLO", "3")
	id := strings.TrimPrefix(mustDo(t, target, "CLIENT", "ID"), "(integer) ")
	mustDo(t, c, "CLIENT", "TRACKING", "on", "REDIRECT", id)
	mustDo(t, c, "XLEN", "k")
	mustDo(t, o, "XADD", "k", "1-1", "f", "v")
	if got := strings.Join(pushesAfterPing(t, target), " "); got != invalidate("k") {
		t.Fatalf("redirect target pushes %q", got)
	}
	if got := pushesAfterPing(t, c); len(got) != 0 {
		t.Fatalf("tracking client itself got %q", got)
	}
}
