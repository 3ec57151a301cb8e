package server

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

// crlf turns a readable "a|b|" reply into "a\r\nb\r\n".
func crlf(s string) string { return strings.ReplaceAll(s, "|", "\r\n") }

func TestStreamCmdXPENDINGPlans(t *testing.T) {
	base := wire.Base{DB: 3, Key: "s"}
	max := ^uint64(0)
	tests := []struct {
		line string
		want wire.XPending
	}{
		{"XPENDING s g", wire.XPending{Base: base, Group: "g", Summary: true, IdleMs: -1}},
		{"XPENDING s g - + 10", wire.XPending{Base: base, Group: "g", IdleMs: -1, End: streams.MaxID, Count: 10}},
		{"XPENDING s g (1 (5 -5 c", wire.XPending{Base: base, Group: "g", IdleMs: -1,
			Start: streams.ID{Ms: 1, Seq: 1}, End: streams.ID{Ms: 5, Seq: max - 1}, Consumer: "c"}},
		// Redis ignores an argument after the consumer.
		{"XPENDING s g - + 10 c extra", wire.XPending{Base: base, Group: "g", IdleMs: -1, End: streams.MaxID, Count: 10, Consumer: "c"}},
		{"XPENDING s g idle 5 - + 1", wire.XPending{Base: base, Group: "g", IdleMs: 5, End: streams.MaxID, Count: 1}},
		{"XPENDING s g IDLE 0 1 2 3 c", wire.XPending{Base: base, Group: "g", IdleMs: 0,
			Start: streams.ID{Ms: 1}, End: streams.ID{Ms: 2, Seq: max}, Count: 3, Consumer: "c"}},
	}
	for _, tt := range tests {
		p := mustPlan(t, tt.line)
		if !reflect.DeepEqual(p.Op, tt.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tt.line, p.Op, tt.want)
		}
	}
}

// The consumer named "" is a real consumer to Redis; the wire's "" means
// all of them, so the plan reads them all and keeps that consumer's.
func TestStreamCmdXPENDINGEmptyConsumer(t *testing.T) {
	p := mustPlan(t, "XPENDING s g - + 2 ''")
	op := p.Op.(wire.XPending)
	if op.Consumer != "" || op.Count != math.MaxInt64 || op.Summary {
		t.Fatalf("op %#v", op)
	}
	all := []state.PendingEntry{
		{ID: streams.ID{Ms: 1}, Consumer: "a", IdleMs: 1, Deliveries: 1},
		{ID: streams.ID{Ms: 2}, Consumer: "", IdleMs: 2, Deliveries: 1},
		{ID: streams.ID{Ms: 3}, Consumer: "", IdleMs: 3, Deliveries: 2},
		{ID: streams.ID{Ms: 4}, Consumer: "", IdleMs: 4, Deliveries: 3},
	}
	got := render(p.Format(all, nil), 2)
	if want := crlf("*2|*4|$3|2-0|$0||:2|:1|*4|$3|3-0|$0||:3|:2|"); got != want {
		t.Errorf("got %q want %q", got, want)
	}
	if got := render(p.Format(all[:1], nil), 2); got != "*0\r\n" {
		t.Errorf("none of its own %q", got)
	}
}

func TestStreamCmdXPENDINGFormat(t *testing.T) {
	sum := mustPlan(t, "XPENDING s g")
	tests := []struct {
		res          state.PendingSummary
		resp2, resp3 string
	}{
		{state.PendingSummary{}, crlf("*4|:0|$-1|$-1|*-1|"), crlf("*4|:0|_|_|_|")},
		{state.PendingSummary{Count: 3, Min: streams.ID{Ms: 1, Seq: 1}, Max: streams.ID{Ms: 3},
			Consumers: []state.ConsumerPending{{Name: "a", Count: 2}, {Name: "b", Count: 0}, {Name: "c", Count: 1}}},
			crlf("*4|:3|$3|1-1|$3|3-0|*2|*2|$1|a|$1|2|*2|$1|c|$1|1|"),
			crlf("*4|:3|$3|1-1|$3|3-0|*2|*2|$1|a|$1|2|*2|$1|c|$1|1|")},
	}
	for _, tt := range tests {
		r := sum.Format(tt.res, nil)
		if got := render(r, 2); got != tt.resp2 {
			t.Errorf("RESP2 %q want %q", got, tt.resp2)
		}
		if got := render(r, 3); got != tt.resp3 {
			t.Errorf("RESP3 %q want %q", got, tt.resp3)
		}
	}
	noGroup := errors.New("NOGROUP No such key 's' or consumer group 'g'")
	if r := sum.Format(nil, noGroup); r != ErrorReply(noGroup.Error()) {
		t.Errorf("error %#v", r)
	}
	ext := mustPlan(t, "XPENDING s g - + 10")
	got := render(ext.Format([]state.PendingEntry{{ID: streams.ID{Ms: 1, Seq: 1}, Consumer: "c", IdleMs: 6384, Deliveries: 3}}, nil), 2)
	if want := crlf("*1|*4|$3|1-1|$1|c|:6384|:3|"); got != want {
		t.Errorf("extended %q", got)
	}
	if got := render(ext.Format([]state.PendingEntry(nil), nil), 3); got != "*0\r\n" {
		t.Errorf("extended empty %q", got)
	}
}

func TestStreamCmdXINFOStreamPlans(t *testing.T) {
	base := wire.Base{DB: 3, Key: "s"}
	tests := []struct {
		line string
		want wire.XInfoStream
	}{
		{"XINFO STREAM s", wire.XInfoStream{Base: base, Count: 10}},
		{"XINFO stream s full", wire.XInfoStream{Base: base, Full: true, Count: 10}},
		{"XINFO STREAM s FULL COUNT 0", wire.XInfoStream{Base: base, Full: true, Count: 0}},
		{"XINFO STREAM s FULL count 3", wire.XInfoStream{Base: base, Full: true, Count: 3}},
		{"XINFO STREAM s FULL COUNT -1", wire.XInfoStream{Base: base, Full: true, Count: 10}},
	}
	for _, tt := range tests {
		p := mustPlan(t, tt.line)
		if !reflect.DeepEqual(p.Op, tt.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tt.line, p.Op, tt.want)
		}
	}
	// Argument errors come after the key lookup ("ERR no such key").
	errs := []struct{ line, want string }{
		{"XINFO STREAM s FULL garbage", "ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP."},
		{"XINFO stream s FOO", "ERR unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP."},
		{"XINFO STREAM s FULL COUNT 1 x", "ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP."},
		{"XINFO STREAM s FULL LIMIT 1", "ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP."},
		{"XINFO STREAM s FULL COUNT x", "ERR value is not an integer or out of range"},
	}
	for _, tt := range errs {
		p := mustPlan(t, tt.line)
		if _, ok := p.Op.(wire.Type); !ok {
			t.Fatalf("%q: op %#v", tt.line, p.Op)
		}
		if r := p.Format("none", nil); r != ErrorReply("ERR no such key") {
			t.Errorf("%q no key: %#v", tt.line, r)
		}
		if r := p.Format("stream", nil); r != ErrorReply(tt.want) {
			t.Errorf("%q: %#v", tt.line, r)
		}
	}
}

func TestStreamCmdXINFOStreamFormat(t *testing.T) {
	// Bytes as redis-server sends them (7.0.15 has no active-time/inactive;
	// those fields are 7.2's, placed where 7.2 puts them).
	entry := &streams.Entry{ID: streams.ID{Ms: 1, Seq: 1}, Fields: bs("f", "v")}
	last := &streams.Entry{ID: streams.ID{Ms: 3, Seq: 1}, Fields: bs("f", "v")}
	si := state.StreamInfo{StreamHeader: state.StreamHeader{Length: 3, RadixTreeKeys: 1, RadixTreeNodes: 2,
		LastGeneratedID: streams.ID{Ms: 5}, MaxDeletedEntryID: streams.ID{Ms: 4}, EntriesAdded: 7,
		RecordedFirstEntryID: streams.ID{Ms: 1, Seq: 1},
		IDMP:                 state.IDMPInfo{Duration: 100, MaxSize: 50, PidsTracked: 2, IidsTracked: 3, IidsAdded: 9, IidsDuplicates: 4}},
		FirstEntry: entry, LastEntry: last}
	want2 := crlf("*32|$6|length|:3|$15|radix-tree-keys|:1|$16|radix-tree-nodes|:2|$17|last-generated-id|$3|5-0|" +
		"$20|max-deleted-entry-id|$3|4-0|$13|entries-added|:7|$23|recorded-first-entry-id|$3|1-1|" +
		"$13|idmp-duration|:100|$12|idmp-maxsize|:50|$12|pids-tracked|:2|$12|iids-tracked|:3|$10|iids-added|:9|$15|iids-duplicates|:4|$6|groups|:0|" +
		"$11|first-entry|*2|$3|1-1|*2|$1|f|$1|v|$10|last-entry|*2|$3|3-1|*2|$1|f|$1|v|")
	p := mustPlan(t, "XINFO STREAM s")
	if got := render(p.Format(si, nil), 2); got != want2 {
		t.Errorf("RESP2\n got %q\nwant %q", got, want2)
	}
	empty := state.StreamInfo{StreamHeader: state.StreamHeader{RadixTreeNodes: 1,
		IDMP: state.IDMPInfo{Duration: 100, MaxSize: 100}}, Groups: 1}
	want3 := crlf("%16|$6|length|:0|$15|radix-tree-keys|:0|$16|radix-tree-nodes|:1|$17|last-generated-id|$3|0-0|" +
		"$20|max-deleted-entry-id|$3|0-0|$13|entries-added|:0|$23|recorded-first-entry-id|$3|0-0|" +
		"$13|idmp-duration|:100|$12|idmp-maxsize|:100|$12|pids-tracked|:0|$12|iids-tracked|:0|$10|iids-added|:0|$15|iids-duplicates|:0|$6|groups|:1|" +
		"$11|first-entry|_|$10|last-entry|_|")
	if got := render(p.Format(empty, nil), 3); got != want3 {
		t.Errorf("RESP3 empty\n got %q\nwant %q", got, want3)
	}
	if r := p.Format(nil, errors.New("ERR no such key")); r != ErrorReply("ERR no such key") {
		t.Errorf("error %#v", r)
	}
}

func TestStreamCmdXINFOFullFormat(t *testing.T) {
	er := int64(3)
	lag := int64(0)
	fi := state.StreamFullInfo{
		StreamHeader: state.StreamHeader{Length: 1, RadixTreeKeys: 1, RadixTreeNodes: 2,
			LastGeneratedID: streams.ID{Ms: 1, Seq: 1}, EntriesAdded: 1, RecordedFirstEntryID: streams.ID{Ms: 1, Seq: 1},
			IDMP: state.IDMPInfo{Duration: 100, MaxSize: 100}},
		Entries: []streams.Entry{{ID: streams.ID{Ms: 1, Seq: 1}, Fields: bs("f", "v")}},
		Groups: []state.GroupFull{
			{Name: "g", PelCount: 1,
				Pending: []state.PendingFull{{ID: streams.ID{Ms: 1, Seq: 1}, Consumer: "c", DeliveryTimeMs: 100, DeliveryCount: 3}},
				Consumers: []state.ConsumerFull{{Name: "c", SeenTimeMs: 100, ActiveTimeMs: 90, PelCount: 1,
					Pending: []state.ConsumerPendingFull{{ID: streams.ID{Ms: 1, Seq: 1}, DeliveryTimeMs: 100, DeliveryCount: 3}}}}},
			{Name: "g4", LastDeliveredID: streams.ID{Ms: 5}, EntriesRead: &er, Lag: &lag},
		},
	}
	want := crlf("%15|$6|length|:1|$15|radix-tree-keys|:1|$16|radix-tree-nodes|:2|$17|last-generated-id|$3|1-1|" +
		"$20|max-deleted-entry-id|$3|0-0|$13|entries-added|:1|$23|recorded-first-entry-id|$3|1-1|" +
		"$13|idmp-duration|:100|$12|idmp-maxsize|:100|$12|pids-tracked|:0|$12|iids-tracked|:0|$10|iids-added|:0|$15|iids-duplicates|:0|" +
		"$7|entries|*1|*2|$3|1-1|*2|$1|f|$1|v|" +
		"$6|groups|*2|" +
		"%8|$4|name|$1|g|$17|last-delivered-id|$3|0-0|$12|entries-read|_|$3|lag|_|$9|pel-count|:1|$12|nacked-count|:0|" +
		"$7|pending|*1|*4|$3|1-1|$1|c|:100|:3|" +
		"$9|consumers|*1|%5|$4|name|$1|c|$9|seen-time|:100|$11|active-time|:90|$9|pel-count|:1|" +
		"$7|pending|*1|*3|$3|1-1|:100|:3|" +
		"%8|$4|name|$2|g4|$17|last-delivered-id|$3|5-0|$12|entries-read|:3|$3|lag|:0|$9|pel-count|:0|$12|nacked-count|:0|" +
		"$7|pending|*0|$9|consumers|*0|")
	p := mustPlan(t, "XINFO STREAM s FULL")
	if got := render(p.Format(fi, nil), 3); got != want {
		t.Errorf("RESP3\n got %q\nwant %q", got, want)
	}
	// RESP2 flattens every map into an array of twice its length.
	got2 := render(p.Format(fi, nil), 2)
	if !strings.HasPrefix(got2, "*30\r\n") || !strings.Contains(got2, "*16\r\n$4\r\nname\r\n$1\r\ng\r\n") ||
		!strings.Contains(got2, "*10\r\n$4\r\nname\r\n$1\r\nc\r\n") {
		t.Errorf("RESP2 %q", got2)
	}
}

func TestStreamCmdXINFOGroupsConsumers(t *testing.T) {
	er := int64(3)
	p := mustPlan(t, "XINFO GROUPS s")
	if !reflect.DeepEqual(p.Op, wire.XInfoGroups{Base: wire.Base{DB: 3, Key: "s"}}) {
		t.Errorf("op %#v", p.Op)
	}
	gs := []state.GroupInfo{
		{Name: "g", Consumers: 2, Pending: 1, LastDeliveredID: streams.ID{Ms: 1}, EntriesRead: &er},
	}
	want := crlf("*1|*12|$4|name|$1|g|$9|consumers|:2|$7|pending|:1|$17|last-delivered-id|$3|1-0|" +
		"$12|entries-read|:3|$3|lag|$-1|")
	if got := render(p.Format(gs, nil), 2); got != want {
		t.Errorf("groups\n got %q\nwant %q", got, want)
	}
	if got := render(p.Format([]state.GroupInfo(nil), nil), 3); got != "*0\r\n" {
		t.Errorf("no groups %q", got)
	}

	p = mustPlan(t, "XINFO CONSUMERS s g")
	if !reflect.DeepEqual(p.Op, wire.XInfoConsumers{Base: wire.Base{DB: 3, Key: "s"}, Group: "g"}) {
		t.Errorf("op %#v", p.Op)
	}
	cs := []state.ConsumerInfo{{Name: "c", Pending: 1, IdleMs: 15, InactiveMs: -1}}
	want = crlf("*1|%4|$4|name|$1|c|$7|pending|:1|$4|idle|:15|$8|inactive|:-1|")
	if got := render(p.Format(cs, nil), 3); got != want {
		t.Errorf("consumers\n got %q\nwant %q", got, want)
	}
	noGroup := errors.New("NOGROUP No such consumer group 'g' for key name 's'")
	if r := p.Format(nil, noGroup); r != ErrorReply(noGroup.Error()) {
		t.Errorf("error %#v", r)
	}
}
