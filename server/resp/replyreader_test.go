package resp

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReadReply reads one reply of every RESP2/RESP3 type, byte for byte,
// and refuses malformed or truncated ones.
func TestReadReply(t *testing.T) {
	good := []string{
		"+OK\r\n",
		"-ERR bad\r\n",
		":42\r\n",
		":-1\r\n",
		"$3\r\nabc\r\n",
		"$0\r\n\r\n",
		"$-1\r\n",
		"$4\r\na\r\nb\r\n", // CRLF inside a bulk
		"*-1\r\n",
		"*0\r\n",
		"*2\r\n$1\r\na\r\n*1\r\n:1\r\n",
		"_\r\n",
		",1.5\r\n",
		"#t\r\n",
		"(3492890328409238509324850943850943825024385\r\n",
		"!21\r\nSYNTAX invalid syntax\r\n",
		"=15\r\ntxt:Some string\r\n",
		"%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n%1\r\n$1\r\nk\r\n~2\r\n:1\r\n_\r\n",
		"~3\r\n+a\r\n+b\r\n#f\r\n",
		">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n",
		"|1\r\n+ttl\r\n:3600\r\n$5\r\nvalue\r\n", // attribute then its reply
		"*1\r\n|1\r\n+a\r\n+b\r\n:7\r\n",         // nested attribute
	}
	for _, g := range good {
		const next = "+NEXT\r\n"
		r := bufio.NewReaderSize(strings.NewReader(g+next), 16)
		got, err := NewReplyReader(r).ReadRaw(nil)
		if err != nil || string(got) != g {
			t.Errorf("ReadRaw(%q) = %q, %v", g, got, err)
			continue
		}
		rest, err := NewReplyReader(r).ReadRaw(nil)
		if err != nil || string(rest) != next {
			t.Errorf("after %q: next reply %q, %v", g, rest, err)
		}
	}
	bad := []string{
		"?what\r\n",
		"+OK\n",
		"$3\r\nabcd\r\n",
		"$x\r\n",
		"$-2\r\n",
		"!-1\r\n",
		"%-1\r\n",
		"*2\r\n:1\r\n",     // truncated
		"$10\r\nabc",       // truncated
		"*99999999999\r\n", // too many elements
		strings.Repeat("*1\r\n", DefaultReplyLimits.Depth+2) + ":1\r\n",
	}
	for _, b := range bad {
		if got, err := NewReplyReader(bufio.NewReader(strings.NewReader(b))).ReadRaw(nil); err == nil {
			t.Errorf("ReadRaw(%q) = %q, want an error", b, got)
		}
	}
	if _, err := NewReplyReader(bufio.NewReader(strings.NewReader(""))).ReadRaw(nil); !errors.Is(err, io.EOF) {
		t.Errorf("empty input: %v, want EOF", err)
	}
}

// TestReadValue reads replies as Values: kinds and nulls as sent, a map's
// keys and values alternating, an attribute dropped.
func TestReadValue(t *testing.T) {
	tests := []struct {
		in   string
		want Value
	}{
		{"+OK\r\n", Value{Kind: '+', Str: "OK"}},
		{":-7\r\n", Value{Kind: ':', Int: -7}},
		{"$-1\r\n", Value{Kind: '$', Nil: true}},
		{"*-1\r\n", Value{Kind: '*', Nil: true}},
		{"_\r\n", Value{Kind: '_', Nil: true}},
		{"=8\r\ntxt:a\r\nb\r\n", Value{Kind: '=', Str: "txt:a\r\nb"}},
		{"%1\r\n+a\r\n*2\r\n:1\r\n#t\r\n", Value{Kind: '%', Elems: []Value{{Kind: '+', Str: "a"},
			{Kind: '*', Elems: []Value{{Kind: ':', Int: 1}, {Kind: '#', Str: "t"}}}}}},
		{"|1\r\n+ttl\r\n:3600\r\n$2\r\nhi\r\n", Value{Kind: '$', Str: "hi"}},
	}
	for _, tt := range tests {
		got, err := NewReplyReader(bufio.NewReader(strings.NewReader(tt.in))).Read()
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("Read(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
		}
		if enc := AppendValue(nil, got); tt.in[0] != '|' && string(enc) != tt.in {
			t.Errorf("AppendValue(%#v) = %q, want %q", got, enc, tt.in)
		}
	}
}

// TestReplyLimits refuses a reply past each bound.
func TestReplyLimits(t *testing.T) {
	lim := ReplyLimits{Depth: 1, Line: 8, Elems: 2, Bulk: 3}
	for _, in := range []string{"*1\r\n*1\r\n*1\r\n:1\r\n", "+123456\r\n", "*3\r\n", "%3\r\n", "$4\r\nabcd\r\n"} {
		rr := NewReplyReader(bufio.NewReader(strings.NewReader(in)))
		rr.Limits = lim
		var pe ReplyProtocolError
		if _, err := rr.ReadRaw(nil); !errors.As(err, &pe) {
			t.Errorf("ReadRaw(%q) = %v, want a protocol error", in, err)
		}
	}
}
