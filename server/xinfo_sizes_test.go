package server

import (
	"strings"
	"testing"
)

// xinfoSpecKeys are the RESP3 map keys, in order, of every XINFO form as
// Redis 8.8 replies (redis8-streams.md §7: STREAM plain 16 pairs, FULL 15,
// FULL group 8, FULL consumer 5, GROUPS 6, CONSUMERS 4; §3.6 and §4.2 for
// the IDMP fields and nacked-count).
var xinfoSpecKeys = map[string]string{
	"stream": "length radix-tree-keys radix-tree-nodes last-generated-id max-deleted-entry-id entries-added " +
		"recorded-first-entry-id idmp-duration idmp-maxsize pids-tracked iids-tracked iids-added iids-duplicates " +
		"groups first-entry last-entry",
	"full": "length radix-tree-keys radix-tree-nodes last-generated-id max-deleted-entry-id entries-added " +
		"recorded-first-entry-id idmp-duration idmp-maxsize pids-tracked iids-tracked iids-added iids-duplicates " +
		"entries groups",
	"full group":    "name last-delivered-id entries-read lag pel-count nacked-count pending consumers",
	"full consumer": "name seen-time active-time pel-count pending",
	"groups":        "name consumers pending last-delivered-id entries-read lag",
	"consumers":     "name pending idle inactive",
}

// checkSpecMap fails unless v is a RESP3 map with exactly form's keys, in
// the spec's order.
func checkSpecMap(t *testing.T, form string, v Value) {
	t.Helper()
	want := strings.Fields(xinfoSpecKeys[form])
	if v.Kind != '%' {
		t.Errorf("%s: kind %q, want a RESP3 map: %s", form, v.Kind, v)
		return
	}
	var keys []string
	for i := 0; i+1 < len(v.Elems); i += 2 {
		keys = append(keys, v.Elems[i].Str)
	}
	if len(keys) != len(want) || strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("%s: %d pairs %q, want %d %q", form, len(keys), keys, len(want), want)
	}
}

// TestXInfoMapSizesSpec: in RESP3 every XINFO form is a map of the spec's
// size and key order (§7), on a stream with IDMP state, two groups, an
// owned and a NACKed pending entry, and on a stream with no groups.
func TestXInfoMapSizesSpec(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	defer c.Close()
	if _, err := c.Do("HELLO", "3"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"XADD", "s", "IDMP", "p1", "i1", "*", "f", "v"},
		{"XADD", "s", "IDMPAUTO", "p2", "*", "f", "w"},
		{"XADD", "s", "*", "f", "x"},
		{"XGROUP", "CREATE", "s", "g1", "0"},
		{"XGROUP", "CREATE", "s", "g2", "$"},
		{"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "2", "STREAMS", "s", ">"},
		{"XGROUP", "CREATECONSUMER", "s", "g1", "c2"},
		{"XADD", "empty", "*", "f", "v"},
	} {
		mustDo(t, c, args...)
	}
	do := func(args ...string) Value {
		t.Helper()
		v, err := c.Do(args...)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return v
	}
	pending := do("XPENDING", "s", "g1", "-", "+", "1")
	if len(pending.Elems) != 1 {
		t.Fatalf("XPENDING: %s", pending)
	}
	if n := do("XNACK", "s", "g1", "FAIL", "IDS", "1", pending.Elems[0].Elems[0].Str); n.Int != 1 {
		t.Fatalf("XNACK: %s", n)
	}
	for _, key := range []string{"s", "empty"} {
		checkSpecMap(t, "stream", do("XINFO", "STREAM", key))
		full := do("XINFO", "STREAM", key, "FULL")
		checkSpecMap(t, "full", full)
		groups, _ := mapGet(full, "groups")
		if key == "s" && len(groups.Elems) != 2 {
			t.Fatalf("FULL groups: %s", groups)
		}
		nconsumers := 0
		for _, g := range groups.Elems {
			checkSpecMap(t, "full group", g)
			cs, _ := mapGet(g, "consumers")
			for _, cons := range cs.Elems {
				checkSpecMap(t, "full consumer", cons)
				nconsumers++
			}
		}
		if key == "s" && nconsumers != 2 {
			t.Errorf("FULL: %d consumers, want 2", nconsumers)
		}
		gs := do("XINFO", "GROUPS", key)
		for _, g := range gs.Elems {
			checkSpecMap(t, "groups", g)
		}
		if key == "s" {
			if len(gs.Elems) != 2 {
				t.Errorf("XINFO GROUPS: %s", gs)
			}
			cs := do("XINFO", "CONSUMERS", key, "g1")
			if len(cs.Elems) != 2 {
				t.Errorf("XINFO CONSUMERS: %s", cs)
			}
			for _, cons := range cs.Elems {
				checkSpecMap(t, "consumers", cons)
			}
		}
	}
	// The NACKed entry shows in the group's nacked-count.
	full := do("XINFO", "STREAM", "s", "FULL")
	groups, _ := mapGet(full, "groups")
	if n, _ := mapGet(groups.Elems[0], "nacked-count"); n.Int != 1 {
		t.Errorf("g1 nacked-count %s, want 1", n)
	}
	if n, _ := mapGet(full, "pids-tracked"); n.Int != 2 {
		t.Errorf("pids-tracked %s, want 2", n)
	}
}
