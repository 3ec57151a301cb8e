package server

import (
	"errors"
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func TestStreamCmdXADDPlans(t *testing.T) {
	base := wire.Base{DB: 3, Key: "s"}
	noTrim := wire.Trim{Limit: -1}
	tests := []struct {
		line string
		want wire.XAdd
	}{
		{"XADD s * f v", wire.XAdd{Base: base, Trim: noTrim, ID: streams.IDSpec{Auto: true}, Fields: bs("f", "v")}},
		{"XADD s 5-* f v a b", wire.XAdd{Base: base, Trim: noTrim,
			ID: streams.IDSpec{AutoSeq: true, ID: streams.ID{Ms: 5}}, Fields: bs("f", "v", "a", "b")}},
		{"XADD s 5 f v", wire.XAdd{Base: base, Trim: noTrim, ID: streams.IDSpec{ID: streams.ID{Ms: 5}}, Fields: bs("f", "v")}},
		{"XADD s 0-0 f v", wire.XAdd{Base: base, Trim: noTrim, ID: streams.IDSpec{}, Fields: bs("f", "v")}},
		{"XADD s nomkstream * f v", wire.XAdd{Base: base, NoMkStream: true, Trim: noTrim,
			ID: streams.IDSpec{Auto: true}, Fields: bs("f", "v")}},
		{"XADD s MAXLEN 10 * f v", wire.XAdd{Base: base,
			Trim: wire.Trim{Strategy: wire.TrimMaxLen, MaxLen: 10, Limit: -1}, ID: streams.IDSpec{Auto: true}, Fields: bs("f", "v")}},
		{"XADD s maxlen = 0 1-1 f v", wire.XAdd{Base: base,
			Trim: wire.Trim{Strategy: wire.TrimMaxLen, Limit: -1}, ID: streams.IDSpec{ID: streams.ID{Ms: 1, Seq: 1}}, Fields: bs("f", "v")}},
		{"XADD s MAXLEN ~ 10 LIMIT 5 NOMKSTREAM * f v", wire.XAdd{Base: base, NoMkStream: true,
			Trim: wire.Trim{Strategy: wire.TrimMaxLen, Approx: true, MaxLen: 10, Limit: 5}, ID: streams.IDSpec{Auto: true}, Fields: bs("f", "v")}},
		{"XADD s LIMIT 0 MINID ~ 7 * f v", wire.XAdd{Base: base,
			Trim: wire.Trim{Strategy: wire.TrimMinID, Approx: true, MinID: streams.ID{Ms: 7}, Limit: 0}, ID: streams.IDSpec{Auto: true}, Fields: bs("f", "v")}},
		// LIMIT's value is checked only when it is not 0 (Redis tests
		// args->limit, not whether LIMIT was given).
		{"XADD s MINID 7-1 * MAXLEN 5", wire.XAdd{Base: base,
			Trim: wire.Trim{Strategy: wire.TrimMinID, MinID: streams.ID{Ms: 7, Seq: 1}, Limit: -1}, ID: streams.IDSpec{Auto: true}, Fields: bs("MAXLEN", "5")}},
		// A trailing option word with no value is the ID.
		{"XADD s 1-1 maxlen 5", wire.XAdd{Base: base, Trim: noTrim, ID: streams.IDSpec{ID: streams.ID{Ms: 1, Seq: 1}}, Fields: bs("maxlen", "5")}},
	}
	for _, tt := range tests {
		p := mustPlan(t, tt.line)
		if !reflect.DeepEqual(p.Op, tt.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tt.line, p.Op, tt.want)
		}
	}
}

func TestStreamCmdXADDFormat(t *testing.T) {
	p := mustPlan(t, "XADD s NOMKSTREAM * f v")
	tests := []struct {
		res      any
		err      error
		resp2    string
		resp3    string
		describe string
	}{
		{streams.ID{Ms: 1, Seq: 2}, nil, "$3\r\n1-2\r\n", "$3\r\n1-2\r\n", "the ID"},
		{nil, nil, "$-1\r\n", "_\r\n", "NOMKSTREAM on a missing key"},
		{nil, streams.ErrIDTooSmall, "-" + streams.ErrIDTooSmall.Error() + "\r\n", "-" + streams.ErrIDTooSmall.Error() + "\r\n", "engine error"},
	}
	for _, tt := range tests {
		r := p.Format(tt.res, tt.err)
		if got := render(r, 2); got != tt.resp2 {
			t.Errorf("%s: RESP2 %q, want %q", tt.describe, got, tt.resp2)
		}
		if got := render(r, 3); got != tt.resp3 {
			t.Errorf("%s: RESP3 %q, want %q", tt.describe, got, tt.resp3)
		}
	}
}

func TestStreamCmdXTRIM(t *testing.T) {
	base := wire.Base{DB: 3, Key: "s"}
	plans := []struct {
		line string
		want wire.XTrim
	}{
		{"XTRIM s MAXLEN 5", wire.XTrim{Base: base, Trim: wire.Trim{Strategy: wire.TrimMaxLen, MaxLen: 5, Limit: -1}}},
		{"XTRIM s MAXLEN = 1000", wire.XTrim{Base: base, Trim: wire.Trim{Strategy: wire.TrimMaxLen, MaxLen: 1000, Limit: -1}}},
		{"XTRIM s maxlen ~ 1 limit 5", wire.XTrim{Base: base, Trim: wire.Trim{Strategy: wire.TrimMaxLen, Approx: true, MaxLen: 1, Limit: 5}}},
		{"XTRIM s MINID ~ 3-4 LIMIT 0", wire.XTrim{Base: base, Trim: wire.Trim{Strategy: wire.TrimMinID, Approx: true, MinID: streams.ID{Ms: 3, Seq: 4}, Limit: 0}}},
	}
	for _, tt := range plans {
		p := mustPlan(t, tt.line)
		if !reflect.DeepEqual(p.Op, tt.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tt.line, p.Op, tt.want)
		}
	}
	p := mustPlan(t, "XTRIM s MAXLEN 0")
	if got := render(p.Format(int64(3), nil), 2); got != ":3\r\n" {
		t.Errorf("format: %q", got)
	}
	if got := render(p.Format(nil, errors.New("ERR boom")), 3); got != "-ERR boom\r\n" {
		t.Errorf("format error: %q", got)
	}
}
