package xargs

import (
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/streams"
)

func TestRefDelete(t *testing.T) {
	tests := []struct {
		line string
		pos  int
		mode wire.RefMode
		ids  []string
		err  resp.Reply
	}{
		{"XDELEX s IDS 1 1-1", 2, wire.RefKeep, []string{"1-1"}, nil},
		{"XDELEX s acked ids 2 1 2", 2, wire.RefAcked, []string{"1", "2"}, nil},
		{"XDELEX s IDS 2 1 2 DelRef", 2, wire.RefDelete, []string{"1", "2"}, nil},
		{"XDELEX s IDS 1 x", 2, wire.RefKeep, []string{"x"}, nil}, // IDs parsed by the planner
		// An ID may look like an option: numids decides.
		{"XDELEX s IDS 2 ACKED IDS", 2, wire.RefKeep, []string{"ACKED", "IDS"}, nil},
		{"XACKDEL s g KEEPREF IDS 1 1-1", 3, wire.RefKeep, []string{"1-1"}, nil},
		{"XACKDEL s g IDS 1 1-1", 3, wire.RefKeep, []string{"1-1"}, nil},
		{"XDELEX s IDS 0 1-1", 2, 0, nil, ErrNumIDs},
		{"XDELEX s IDS 9223372036854775808 1-1", 2, 0, nil, ErrNumIDs},
		{"XDELEX s IDS 01 1-1", 2, 0, nil, ErrNumIDs},
		{"XDELEX s IDS 9223372036854775807 1-1", 2, 0, nil, ErrNumIDsMatch},
		{"XDELEX s IDS 2 1-1", 2, 0, nil, ErrNumIDsMatch},
		{"XDELEX s KEEPREF KEEPREF IDS 1 1", 2, 0, nil, resp.ErrSyntax},
		{"XDELEX s IDS 1 1 IDS 1 2", 2, 0, nil, resp.ErrSyntax},
		{"XDELEX s KEEPREF IDS", 2, 0, nil, resp.ErrSyntax},
		{"XDELEX s KEEPREF", 2, 0, nil, ErrIDSRequired},
		{"XACKDEL s g DELREF", 3, 0, nil, ErrIDSRequired},
	}
	for _, tt := range tests {
		mode, ids, r := RefDelete(fields(tt.line), tt.pos)
		if r != tt.err {
			t.Errorf("%q: error %v, want %v", tt.line, r, tt.err)
			continue
		}
		var got []string
		for _, id := range ids {
			got = append(got, string(id))
		}
		if mode != tt.mode || !reflect.DeepEqual(got, tt.ids) {
			t.Errorf("%q: mode %d ids %q, want %d %q", tt.line, mode, got, tt.mode, tt.ids)
		}
	}
}

// KEEPREF|DELREF|ACKED on XADD and XTRIM: in any position among the
// options, once; without a trimming strategy XADD logs none.
func TestAddTrimRefMode(t *testing.T) {
	tests := []struct {
		line string
		want wire.Trim
	}{
		{"XADD s ACKED MAXLEN 5 * f v", wire.Trim{Strategy: wire.TrimMaxLen, MaxLen: 5, Limit: -1, Ref: wire.RefAcked}},
		{"XADD s MINID ~ 5 LIMIT 3 delref * f v", wire.Trim{Strategy: wire.TrimMinID, MinID: streams.ID{Ms: 5}, Approx: true,
			Limit: 3, Ref: wire.RefDelete}},
		{"XADD s NOMKSTREAM KEEPREF MAXLEN 1 1-1 f v", wire.Trim{Strategy: wire.TrimMaxLen, MaxLen: 1, Limit: -1}},
		{"XADD s ACKED * f v", wire.Trim{Limit: -1}},
		{"XTRIM s MAXLEN ~ 0 ACKED", wire.Trim{Strategy: wire.TrimMaxLen, Approx: true, Limit: -1, Ref: wire.RefAcked}},
		{"XTRIM s DELREF MINID 1-1", wire.Trim{Strategy: wire.TrimMinID, MinID: streams.ID{Ms: 1, Seq: 1}, Limit: -1, Ref: wire.RefDelete}},
	}
	for _, tt := range tests {
		args := fields(tt.line)
		var got wire.Trim
		var r resp.Reply
		if isOpt(args[0], "XADD") {
			var op wire.XAdd
			op, r = XAdd(args)
			got = op.Trim
		} else {
			var op wire.XTrim
			op, r = XTrim(args)
			got = op.Trim
		}
		if r != nil || got != tt.want {
			t.Errorf("%q: %+v %v, want %+v", tt.line, got, r, tt.want)
		}
	}
	for line, want := range map[string]resp.Reply{
		"XADD s ACKED KEEPREF * f v":    ErrInvalidID,
		"XADD s ACKED ACKED * f v":      ErrInvalidID,
		"XTRIM s MAXLEN 1 ACKED ACKED":  resp.ErrSyntax,
		"XTRIM s ACKED DELREF MAXLEN 1": resp.ErrSyntax,
	} {
		if r := parse(fields(line)); r != want {
			t.Errorf("%q: %v, want %v", line, r, want)
		}
	}
}
