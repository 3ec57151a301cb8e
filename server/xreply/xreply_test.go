package xreply

import (
	"bytes"
	"errors"
	"testing"

	"streamd/replication/state"
	"streamd/server/resp"
	"streamd/streams"
)

// TestStreamReplyTypes: ID and Entry render exactly what the Bulk and
// Array values they replace would, in both protocols.
func TestStreamReplyTypes(t *testing.T) {
	id := streams.ID{Ms: 18446744073709551615, Seq: 7}
	cases := []struct {
		fast, slow resp.Reply
	}{
		{ID(id), resp.Bulk(id.String())},
		{ID(streams.ID{}), resp.Bulk("0-0")},
		{Entry{ID: id, Fields: [][]byte{[]byte("f"), {}, []byte("v\r\n")}},
			resp.Array{resp.Bulk(id.String()), resp.Array{resp.Bulk("f"), resp.Bulk(""), resp.Bulk("v\r\n")}}},
		{Entry{ID: id, Fields: [][]byte{}}, resp.Array{resp.Bulk(id.String()), resp.Array{}}},
		{Entry{ID: id}, resp.Array{resp.Bulk(id.String()), resp.NullArray{}}},
	}
	for _, c := range cases {
		for _, proto := range []int{2, 3} {
			got, want := resp.AppendReply(nil, c.fast, proto), resp.AppendReply(nil, c.slow, proto)
			if !bytes.Equal(got, want) {
				t.Errorf("RESP%d %#v: got %q want %q", proto, c.fast, got, want)
			}
		}
	}
}

// TestShapes pins a few replies' bytes: XREAD's per-stream arrays (a map
// in RESP3), XPENDING's summary with nothing pending, an engine error.
func TestShapes(t *testing.T) {
	kes := []state.KeyEntries{{Key: "s", Entries: []streams.Entry{{ID: streams.ID{Ms: 1}, Fields: [][]byte{[]byte("f"), []byte("v")}}}}}
	cases := []struct {
		r     resp.Reply
		proto int
		want  string
	}{
		{Read(kes, nil, 2), 2, "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
		{Read(kes, nil, 3), 3, "%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
		{Read(nil, nil, 2), 2, "*-1\r\n"},
		{PendingSummary(state.PendingSummary{}, nil), 2, "*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"},
		{Int(nil, errors.New("ERR x")), 2, "-ERR x\r\n"},
	}
	for _, c := range cases {
		if got := string(resp.AppendReply(nil, c.r, c.proto)); got != c.want {
			t.Errorf("RESP%d: got %q want %q", c.proto, got, c.want)
		}
	}
}
