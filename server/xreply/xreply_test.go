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

// TestStreamedListsMatchValues: the lists rendered piece by piece
// (EntryList, a FULL group's and consumer's PELs) give exactly the bytes of
// the reply values they replace, whole and through a chunking encoder.
func TestStreamedListsMatchValues(t *testing.T) {
	var es []streams.Entry
	var gp []state.PendingFull
	var cp []state.ConsumerPendingFull
	slowEs, slowGp, slowCp := resp.Array{}, resp.Array{}, resp.Array{}
	for i := 0; i < 300; i++ {
		id := streams.ID{Ms: uint64(1700000000000 + i), Seq: uint64(i % 3)}
		fields := [][]byte{[]byte("f"), bytes.Repeat([]byte("v"), i%7)}
		if i%50 == 49 {
			fields = nil
		}
		es = append(es, streams.Entry{ID: id, Fields: fields})
		inner := resp.Reply(resp.NullArray{})
		if fields != nil {
			inner = resp.Array{resp.Bulk(fields[0]), resp.Bulk(fields[1])}
		}
		slowEs = append(slowEs, resp.Array{resp.Bulk(id.String()), inner})
		gp = append(gp, state.PendingFull{ID: id, Consumer: "consumer-1", DeliveryTimeMs: int64(i) * 1000, DeliveryCount: int64(i % 4)})
		slowGp = append(slowGp, resp.Array{resp.Bulk(id.String()), resp.Bulk("consumer-1"), resp.Int(int64(i) * 1000), resp.Int(int64(i % 4))})
		cp = append(cp, state.ConsumerPendingFull{ID: id, DeliveryTimeMs: -int64(i), DeliveryCount: 1})
		slowCp = append(slowCp, resp.Array{resp.Bulk(id.String()), resp.Int(-int64(i)), resp.Int(1)})
	}
	cases := []struct {
		name       string
		fast, slow resp.Reply
	}{
		{"entries", Entries(es), slowEs},
		{"no entries", Entries(nil), resp.Array{}},
		{"group PEL", groupPending(gp), slowGp},
		{"consumer PEL", consumerPending(cp), slowCp},
	}
	for _, c := range cases {
		for _, proto := range []int{2, 3} {
			want := resp.AppendReply(nil, c.slow, proto)
			if got := resp.AppendReply(nil, c.fast, proto); !bytes.Equal(got, want) {
				t.Errorf("%s RESP%d whole: got %q want %q", c.name, proto, got, want)
			}
			var got []byte
			e := resp.Encoder{Proto: proto, Limit: 100, Flush: func(b []byte) ([]byte, bool) {
				got = append(got, b...)
				return b[:0], true
			}}
			e.Reply(resp.Array{c.fast})
			got = append(got, e.Buf...)
			if want := resp.AppendReply(nil, resp.Array{c.slow}, proto); !bytes.Equal(got, want) {
				t.Errorf("%s RESP%d chunked: got %q want %q", c.name, proto, got, want)
			}
		}
	}
}
