package resp

import (
	"bytes"
	"testing"
)

// TestEncoderChunks checks that an Encoder with a small Limit hands out
// chunks that together are exactly what AppendReply renders, each flushed
// once it reached the limit, in both protocols.
func TestEncoderChunks(t *testing.T) {
	var big Array
	for i := 0; i < 200; i++ {
		big = append(big, Array{BulkString("field"), Int(int64(i)), Map{{BulkString("k"), Set{Double(1.5)}}}})
	}
	replies := []Reply{OK, big, Map{{BulkString("a"), big}}, Push{big}, Array(nil), Bulk(bytes.Repeat([]byte("x"), 5000))}
	for _, proto := range []int{2, 3} {
		for _, r := range replies {
			want := AppendReply([]byte("prefix"), r, proto)
			var got []byte
			flushes := 0
			e := Encoder{Buf: []byte("prefix"), Proto: proto, Limit: 64, Flush: func(b []byte) ([]byte, bool) {
				if len(b) < 64 {
					t.Errorf("flushed %d bytes, under the limit", len(b))
				}
				got = append(got, b...)
				flushes++
				return b[:0], true
			}}
			e.Reply(r)
			got = append(got, e.Buf...)
			if !bytes.Equal(got, want) {
				t.Errorf("proto %d %T: chunks differ from AppendReply:\n got %q\nwant %q", proto, r, got, want)
			}
			if _, one := r.(Bulk); !one && len(want) > 1000 && flushes < 10 {
				t.Errorf("proto %d %T: %d bytes in %d flushes", proto, r, len(want), flushes)
			}
		}
	}
}

// TestEncoderStops checks that a failed Flush stops the encoder: nothing
// more is rendered or flushed.
func TestEncoderStops(t *testing.T) {
	var big Array
	for i := 0; i < 1000; i++ {
		big = append(big, BulkString("value"))
	}
	flushes := 0
	e := Encoder{Proto: 2, Limit: 100, Flush: func(b []byte) ([]byte, bool) {
		flushes++
		return nil, false
	}}
	e.Reply(big)
	if flushes != 1 || !e.Stopped() {
		t.Errorf("flushes = %d, stopped = %v; want 1 and true", flushes, e.Stopped())
	}
	if len(e.Buf) > 100 {
		t.Errorf("kept rendering after the flush failed: %d bytes", len(e.Buf))
	}
}
