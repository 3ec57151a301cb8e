package server

import (
	"math"
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/server/xargs"
	"streamd/streams"
)

func TestStreamCmdXRANGEPlans(t *testing.T) {
	base := wire.Base{DB: 3, Key: "s"}
	max := uint64(math.MaxUint64)
	tests := []struct {
		line string
		want wire.XRange
	}{
		{"XRANGE s - +", wire.XRange{Base: base, Start: streams.MinID, End: streams.MaxID, Count: -1}},
		{"XRANGE s 5 7", wire.XRange{Base: base, Start: streams.ID{Ms: 5}, End: streams.ID{Ms: 7, Seq: max}, Count: -1}},
		{"XRANGE s (1 (3", wire.XRange{Base: base, Start: streams.ID{Ms: 1, Seq: 1}, End: streams.ID{Ms: 3, Seq: max - 1}, Count: -1}},
		{"XRANGE s - + COUNT 1 count 2", wire.XRange{Base: base, Start: streams.MinID, End: streams.MaxID, Count: 2}},
		{"XRANGE s 3 1", wire.XRange{Base: base, Start: streams.ID{Ms: 3}, End: streams.ID{Ms: 1, Seq: max}, Count: -1}},
		// XREVRANGE key end start: the wire bounds stay low..high.
		{"XREVRANGE s + - COUNT 1", wire.XRange{Base: base, Start: streams.MinID, End: streams.MaxID, Count: 1, Rev: true}},
		{"XREVRANGE s (3 (1", wire.XRange{Base: base, Start: streams.ID{Ms: 1, Seq: 1}, End: streams.ID{Ms: 3, Seq: max - 1}, Count: -1, Rev: true}},
		{"XREVRANGE s (18446744073709551615-18446744073709551615 (0-0",
			wire.XRange{Base: base, Start: streams.ID{Seq: 1}, End: streams.ID{Ms: max, Seq: max - 1}, Count: -1, Rev: true}},
	}
	for _, tt := range tests {
		p := mustPlan(t, tt.line)
		if !reflect.DeepEqual(p.Op, tt.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tt.line, p.Op, tt.want)
		}
	}
}

func TestStreamCmdXRANGEFormat(t *testing.T) {
	p := mustPlan(t, "XRANGE s - +")
	es := []streams.Entry{
		{ID: streams.ID{Ms: 1, Seq: 1}, Fields: bs("f", "v")},
		{ID: streams.ID{Ms: 2, Seq: 0}, Fields: bs("a", "1", "b", "")},
	}
	want := "*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n" +
		"*2\r\n$3\r\n2-0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$0\r\n\r\n"
	for _, proto := range []int{2, 3} {
		if got := render(p.Format(es, nil), proto); got != want {
			t.Errorf("RESP%d: %q", proto, got)
		}
		if got := render(p.Format([]streams.Entry(nil), nil), proto); got != "*0\r\n" {
			t.Errorf("RESP%d empty: %q", proto, got)
		}
	}
}

// COUNT 0 (or negative) answers a null array on an existing stream and an
// empty array on a missing key: the plan reads the key's type.
func TestStreamCmdXRANGECountZero(t *testing.T) {
	for _, line := range []string{"XRANGE s - + COUNT 0", "XREVRANGE s + - COUNT -5"} {
		p := mustPlan(t, line)
		if op, ok := p.Op.(wire.Type); !ok || op.Key != "s" || op.DB != 3 {
			t.Fatalf("%q: op %#v", line, p.Op)
		}
		tests := []struct {
			typ          string
			resp2, resp3 string
		}{
			{"stream", "*-1\r\n", "_\r\n"},
			{"none", "*0\r\n", "*0\r\n"},
		}
		for _, tt := range tests {
			r := p.Format(tt.typ, nil)
			if got := render(r, 2); got != tt.resp2 {
				t.Errorf("%q %s RESP2: %q", line, tt.typ, got)
			}
			if got := render(r, 3); got != tt.resp3 {
				t.Errorf("%q %s RESP3: %q", line, tt.typ, got)
			}
		}
	}
}

func TestStreamCmdXLENAndXDEL(t *testing.T) {
	p := mustPlan(t, "XLEN s")
	if !reflect.DeepEqual(p.Op, wire.XLen{Base: wire.Base{DB: 3, Key: "s"}}) {
		t.Errorf("xlen op %#v", p.Op)
	}
	if got := render(p.Format(int64(4), nil), 2); got != ":4\r\n" {
		t.Errorf("xlen format %q", got)
	}

	p = mustPlan(t, "XDEL s 1-1 2")
	want := wire.XDel{Base: wire.Base{DB: 3, Key: "s"}, IDs: []streams.ID{{Ms: 1, Seq: 1}, {Ms: 2}}}
	if !reflect.DeepEqual(p.Op, want) {
		t.Errorf("xdel op %#v", p.Op)
	}
	// Redis looks the key up before it parses the IDs: a bad ID on a
	// missing key is 0, on a stream the ID error.
	for _, line := range []string{"XDEL s bad", "XDEL s 1-1 -", "XDEL s 1 +"} {
		p := mustPlan(t, line)
		if _, ok := p.Op.(wire.Type); !ok {
			t.Fatalf("%q: op %#v", line, p.Op)
		}
		if r := p.Format("none", nil); r != Int(0) {
			t.Errorf("%q missing key: %#v", line, r)
		}
		if r := p.Format("stream", nil); r != xargs.ErrInvalidID {
			t.Errorf("%q stream: %#v", line, r)
		}
	}
}

func TestStreamCmdXSETID(t *testing.T) {
	base := wire.Base{DB: 3, Key: "s"}
	md := func(ms, seq uint64) *streams.ID { return &streams.ID{Ms: ms, Seq: seq} }
	plans := []struct {
		line string
		want wire.XSetID
	}{
		{"XSETID s 5", wire.XSetID{Base: base, LastID: streams.ID{Ms: 5}, EntriesAdded: -1}},
		{"XSETID s 5-5 ENTRIESADDED 100 MAXDELETEDID 2-0",
			wire.XSetID{Base: base, LastID: streams.ID{Ms: 5, Seq: 5}, EntriesAdded: 100, MaxDeletedID: md(2, 0)}},
		{"XSETID s 5-5 maxdeletedid 3-0 MAXDELETEDID 5-5 entriesadded 3 ENTRIESADDED 0",
			wire.XSetID{Base: base, LastID: streams.ID{Ms: 5, Seq: 5}, EntriesAdded: 0, MaxDeletedID: md(5, 5)}},
	}
	for _, tt := range plans {
		p := mustPlan(t, tt.line)
		if !reflect.DeepEqual(p.Op, tt.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tt.line, p.Op, tt.want)
		}
		if r := p.Format(nil, nil); r != OK {
			t.Errorf("%q: format %#v", tt.line, r)
		}
	}
}
