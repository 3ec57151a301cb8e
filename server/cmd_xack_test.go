package server

import (
	"errors"
	"reflect"
	"testing"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/xargs"
	"streamd/streams"
)

func TestStreamCmdXACK(t *testing.T) {
	p := mustPlan(t, "XACK s g 1-1 2")
	want := wire.XAck{Base: wire.Base{DB: 3, Key: "s"}, Group: "g", IDs: []streams.ID{{Ms: 1, Seq: 1}, {Ms: 2}}}
	if !reflect.DeepEqual(p.Op, want) {
		t.Errorf("op %#v", p.Op)
	}
	if r := p.Format(int64(2), nil); r != Int(2) {
		t.Errorf("format %#v", r)
	}
	// A missing key or group is 0 before the IDs are parsed.
	for _, line := range []string{"XACK s g bad", "XACK s g 1-1 +"} {
		p := mustPlan(t, line)
		if _, ok := p.Op.(wire.XInfoGroups); !ok {
			t.Fatalf("%q: op %#v", line, p.Op)
		}
		if r := p.Format(nil, errors.New("ERR no such key")); r != Int(0) {
			t.Errorf("%q no key: %#v", line, r)
		}
		if r := p.Format([]state.GroupInfo{{Name: "h"}}, nil); r != Int(0) {
			t.Errorf("%q no group: %#v", line, r)
		}
		if r := p.Format([]state.GroupInfo{{Name: "g"}}, nil); r != xargs.ErrInvalidID {
			t.Errorf("%q: %#v", line, r)
		}
	}
}

func TestStreamCmdXCLAIMPlans(t *testing.T) {
	base := wire.Base{DB: 3, Key: "s"}
	id := func(ms, seq uint64) streams.ID { return streams.ID{Ms: ms, Seq: seq} }
	last := id(9, 9)
	claim := func(f func(*wire.XClaim)) wire.XClaim {
		c := wire.XClaim{Base: base, Group: "g", Consumer: "c", IdleMs: -1, TimeMs: -1, RetryCount: -1}
		f(&c)
		return c
	}
	tests := []struct {
		line string
		want wire.XClaim
	}{
		{"XCLAIM s g c 100 1-1 2", claim(func(c *wire.XClaim) { c.MinIdleMs = 100; c.IDs = []streams.ID{id(1, 1), id(2, 0)} })},
		{"XCLAIM s g c -5 1-1", claim(func(c *wire.XClaim) { c.IDs = []streams.ID{id(1, 1)} })},
		{"XCLAIM s g c 0 1-1 JUSTID force", claim(func(c *wire.XClaim) {
			c.IDs = []streams.ID{id(1, 1)}
			c.JustID, c.Force = true, true
		})},
		{"XCLAIM s g c 0 1-1 IDLE 10 TIME 20", claim(func(c *wire.XClaim) { c.IDs = []streams.ID{id(1, 1)}; c.TimeMs = 20 })},
		{"XCLAIM s g c 0 1-1 TIME 20 idle 10", claim(func(c *wire.XClaim) { c.IDs = []streams.ID{id(1, 1)}; c.IdleMs = 10 })},
		{"XCLAIM s g c 0 1-1 IDLE -10 RETRYCOUNT -3", claim(func(c *wire.XClaim) { c.IDs = []streams.ID{id(1, 1)} })},
		{"XCLAIM s g c 0 1-1 RETRYCOUNT 0 LASTID 9-9", claim(func(c *wire.XClaim) {
			c.IDs = []streams.ID{id(1, 1)}
			c.RetryCount = 0
			c.LastID = &last
		})},
		// No IDs at all: the options start right after min-idle-time.
		{"XCLAIM s g c 0 FORCE", claim(func(c *wire.XClaim) { c.Force = true })},
	}
	for _, tt := range tests {
		p := mustPlan(t, tt.line)
		if !reflect.DeepEqual(p.Op, tt.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tt.line, p.Op, tt.want)
		}
	}
}

func TestStreamCmdXCLAIMFormat(t *testing.T) {
	es := []streams.Entry{{ID: streams.ID{Ms: 1, Seq: 1}, Fields: bs("f", "v")}, {ID: streams.ID{Ms: 2}}}
	full := render(mustPlan(t, "XCLAIM s g c 0 1-1 2-0").Format(es, nil), 2)
	if want := "*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$3\r\n2-0\r\n*-1\r\n"; full != want {
		t.Errorf("entries %q", full)
	}
	ids := render(mustPlan(t, "XCLAIM s g c 0 1-1 2-0 JUSTID").Format(es, nil), 3)
	if want := "*2\r\n$3\r\n1-1\r\n$3\r\n2-0\r\n"; ids != want {
		t.Errorf("justid %q", ids)
	}
}

// Every XCLAIM argument error waits for the key and group check.
func TestStreamCmdXCLAIMErrors(t *testing.T) {
	tests := []struct{ line, want string }{
		{"XCLAIM s g c 0 1-1 IDLE x", "ERR Invalid IDLE option argument for XCLAIM"},
		{"XCLAIM s g c 0 1-1 FOO", "ERR Unrecognized XCLAIM option 'FOO'"},
	}
	noGroup := ErrorReply("NOGROUP No such key 's' or consumer group 'g'")
	for _, tt := range tests {
		p := mustPlan(t, tt.line)
		if _, ok := p.Op.(wire.XInfoGroups); !ok {
			t.Fatalf("%q: op %#v", tt.line, p.Op)
		}
		if r := p.Format(nil, errors.New("ERR no such key")); r != noGroup {
			t.Errorf("%q no key: %#v", tt.line, r)
		}
		if r := p.Format([]state.GroupInfo{{Name: "x"}}, nil); r != noGroup {
			t.Errorf("%q no group: %#v", tt.line, r)
		}
		if r := p.Format([]state.GroupInfo{{Name: "a"}, {Name: "g"}}, nil); r != ErrorReply(tt.want) {
			t.Errorf("%q: %#v", tt.line, r)
		}
	}
}

func TestStreamCmdXAUTOCLAIM(t *testing.T) {
	base := wire.Base{DB: 3, Key: "s"}
	tests := []struct {
		line string
		want wire.XAutoClaim
	}{
		{"XAUTOCLAIM s g c 10 0", wire.XAutoClaim{Base: base, Group: "g", Consumer: "c", MinIdleMs: 10, Count: 100}},
		{"XAUTOCLAIM s g c -10 - JUSTID", wire.XAutoClaim{Base: base, Group: "g", Consumer: "c", Count: 100, JustID: true}},
		{"XAUTOCLAIM s g c 0 (5 count 3 justid COUNT 576460752303423487",
			wire.XAutoClaim{Base: base, Group: "g", Consumer: "c", Start: streams.ID{Ms: 5, Seq: 1}, Count: 576460752303423487, JustID: true}},
		{"XAUTOCLAIM s g c 0 +", wire.XAutoClaim{Base: base, Group: "g", Consumer: "c", Start: streams.MaxID, Count: 100}},
	}
	for _, tt := range tests {
		p := mustPlan(t, tt.line)
		if !reflect.DeepEqual(p.Op, tt.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tt.line, p.Op, tt.want)
		}
	}

	res := state.AutoClaimResult{
		Next:    streams.ID{Ms: 7},
		Entries: []streams.Entry{{ID: streams.ID{Ms: 1, Seq: 1}, Fields: bs("f", "v")}},
		Deleted: []streams.ID{{Ms: 2}},
	}
	got := render(mustPlan(t, "XAUTOCLAIM s g c 0 0").Format(res, nil), 2)
	if want := "*3\r\n$3\r\n7-0\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*1\r\n$3\r\n2-0\r\n"; got != want {
		t.Errorf("entries %q", got)
	}
	got = render(mustPlan(t, "XAUTOCLAIM s g c 0 0 JUSTID").Format(state.AutoClaimResult{Entries: res.Entries}, nil), 3)
	if want := "*3\r\n$3\r\n0-0\r\n*1\r\n$3\r\n1-1\r\n*0\r\n"; got != want {
		t.Errorf("justid %q", got)
	}
	noGroup := errors.New("NOGROUP No such key 's' or consumer group 'g'")
	if r := mustPlan(t, "XAUTOCLAIM s g c 0 0").Format(nil, noGroup); r != ErrorReply(noGroup.Error()) {
		t.Errorf("error %#v", r)
	}
}
