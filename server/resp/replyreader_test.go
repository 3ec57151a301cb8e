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
