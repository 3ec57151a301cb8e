package server

import (
	"strings"
	"testing"

	"streamd/config"
)

// TestDumpRestoreBrokerSettings: DUMP carries a stream's issue #15
// settings (ACKLEVEL, retention, GROUP-IDLE-EXPIRE, each group's XGROUP
// CONFIG): RESTORE under another key and on a fresh server shows the same
// XINFO STREAM, XINFO GROUPS and XGROUP CONFIG as the source.
func TestDumpRestoreBrokerSettings(t *testing.T) {
	_, addrA := startTestServer(t, nil)
	_, addrB := startTestServer(t, nil)
	a, b := dial(t, addrA), dial(t, addrB)
	for _, cmd := range [][]string{
		{"XADD", "s", "1-1", "f", "v"}, {"XADD", "s", "2-1", "f", "v"},
		{"XGROUP", "CREATE", "s", "g", "0"}, {"XGROUP", "CREATE", "s", "h", "$"},
		{"XCFGSET", "s", "ACKLEVEL", "LEADER"},
		{"XCFGSET", "s", "MAXLEN", "100", "MAXAGE", "100000000000", "RETENTION-POLICY", "KEEPREF", "GROUP-IDLE-EXPIRE", "600000"},
		{"XGROUP", "CONFIG", "s", "g", "MAXDELIVERIES", "3", "DEADLETTER", "dlq", "VISIBILITY", "5000"},
	} {
		if got := mustDo(t, a, cmd...); strings.HasPrefix(got, "(error)") {
			t.Fatalf("%q: %s", cmd, got)
		}
	}
	v, err := a.Do("DUMP", "s")
	if err != nil || v.Kind != '$' || v.Nil {
		t.Fatalf("DUMP s: %v %v", v, err)
	}
	if got := mustDo(t, a, "RESTORE", "r", "0", v.Str); got != "+OK" {
		t.Fatalf("RESTORE r: %s", got)
	}
	if got := mustDo(t, b, "RESTORE", "s", "0", v.Str); got != "+OK" {
		t.Fatalf("RESTORE on a fresh server: %s", got)
	}
	views := func(c *respConn, key string) []string {
		return []string{mustDo(t, c, "XINFO", "STREAM", key), mustDo(t, c, "XINFO", "GROUPS", key),
			mustDo(t, c, "XGROUP", "CONFIG", key, "g")}
	}
	want := views(a, "s")
	for _, f := range []string{"acklevel", "leader", "retention-maxlen", "100", "retention-policy", "keepref",
		"group-idle-expire", "600000"} {
		if !strings.Contains(want[0], f) {
			t.Fatalf("source XINFO STREAM lacks %q: %s", f, want[0])
		}
	}
	for _, f := range []string{"max-deliveries", "dead-letter-key", "dlq", "5000"} {
		if !strings.Contains(want[1], f) || !strings.Contains(want[2], f) {
			t.Fatalf("source XINFO GROUPS / XGROUP CONFIG lack %q: %s / %s", f, want[1], want[2])
		}
	}
	for _, side := range []struct {
		name string
		c    *respConn
		key  string
	}{{"other key", a, "r"}, {"fresh server", b, "s"}} {
		got := views(side.c, side.key)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: %s\nwant %s", side.name, got[i], want[i])
			}
		}
	}
}

// TestRestoreDeadLetterCrossSlot: in cluster mode RESTORE answers CROSSSLOT
// when a group of the payload dead-letters into a key of another slot than
// the key restored, as XGROUP CONFIG does; within the slot it restores.
func TestRestoreDeadLetterCrossSlot(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.ClusterEnabled = true })
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"XGROUP", "CREATE", "{q}s", "g", "$", "MKSTREAM"}, "+OK"},
		{[]string{"XGROUP", "CREATE", "{q}s", "h", "$"}, "+OK"},
		{[]string{"XGROUP", "CONFIG", "{q}s", "g", "DEADLETTER", "{q}dlq"}, "+OK"},
	})
	v, err := c.Do("DUMP", "{q}s")
	if err != nil || v.Kind != '$' || v.Nil {
		t.Fatalf("DUMP: %v %v", v, err)
	}
	runSteps(t, c, []step{
		{[]string{"RESTORE", "{q}r", "0", v.Str}, "+OK"},
		{[]string{"RESTORE", "{other}r", "0", v.Str}, "(error) CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"EXISTS", "{other}r"}, "(integer) 0"},
		{[]string{"XGROUP", "CONFIG", "{q}s", "g", "DEADLETTER", "NONE"}, "+OK"},
	})
	v, err = c.Do("DUMP", "{q}s")
	if err != nil || v.Kind != '$' || v.Nil {
		t.Fatalf("DUMP: %v %v", v, err)
	}
	runSteps(t, c, []step{{[]string{"RESTORE", "{other}r", "0", v.Str}, "+OK"}})
}
