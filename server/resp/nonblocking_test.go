package resp

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// chunkSource hands out its chunks one Read at a time, then errWait
// (a non-blocking socket with nothing to read) until more are added.
type chunkSource struct{ chunks [][]byte }

var errWait = errors.New("would block")

func (s *chunkSource) Read(p []byte) (int, error) {
	if len(s.chunks) == 0 {
		return 0, errWait
	}
	n := copy(p, s.chunks[0])
	if s.chunks[0] = s.chunks[0][n:]; len(s.chunks[0]) == 0 {
		s.chunks = s.chunks[1:]
	}
	return n, nil
}

// TestPartialEveryPrefix: every strict prefix of a well-formed request is
// Partial and ReadBuffered takes none of it; the whole request is taken by
// ReadBuffered, after which the buffer is empty and not Partial.
func TestPartialEveryPrefix(t *testing.T) {
	reqs := []string{
		"*1\r\n$4\r\nPING\r\n",
		"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\nf\r\n$10\r\n0123456789\r\n",
		"*2\r\n$0\r\n\r\n$3\r\nabc\r\n",
		"*20\r\n" + strings.Repeat("$2\r\nab\r\n", 20),
	}
	yes := func() bool { return true }
	maxBulk := func() int64 { return 512 << 20 }
	for _, req := range reqs {
		for cut := 1; cut < len(req); cut++ {
			src := &chunkSource{chunks: [][]byte{[]byte(req[:cut])}}
			rr := NewRequestReader(src, maxBulk, yes)
			if err := rr.Fill(); err != nil {
				t.Fatalf("Fill: %v", err)
			}
			if _, ok := rr.ReadBuffered(); ok {
				t.Fatalf("%q cut at %d: ReadBuffered took a partial request", req, cut)
			}
			if !rr.Partial() {
				t.Fatalf("%q cut at %d: not Partial", req, cut)
			}
			if err := rr.Fill(); err != errWait {
				t.Fatalf("Fill with nothing to read: %v", err)
			}
			src.chunks = append(src.chunks, []byte(req[cut:]))
			if err := rr.Fill(); err != nil {
				t.Fatalf("Fill: %v", err)
			}
			args, ok := rr.ReadBuffered()
			if !ok {
				t.Fatalf("%q cut at %d: whole request not taken", req, cut)
			}
			if !bytes.Equal(AppendCommand(nil, args...), []byte(req)) || rr.Buffered() != 0 || rr.Partial() {
				t.Fatalf("%q cut at %d: args %q, %d left", req, cut, args, rr.Buffered())
			}
		}
	}
}

// TestPartialRefuses: what only the general parser may judge is not
// Partial: inline requests, malformed headers, empty multibulks, too many
// arguments, a bulk larger than the buffer, and an unauthenticated
// client's oversized request.
func TestPartialRefuses(t *testing.T) {
	for _, tc := range []struct {
		in     string
		authed bool
	}{
		{"PING", true},
		{"*x", true},
		{"*01\r\n", true},
		{"*0\r\n", true},
		{"*-1\r\n", true},
		{"*1\rx", true},
		{"*1\r\nx", true},
		{"*1\r\n$a", true},
		{"*2000\r\n", true},
		{"*1\r\n$20000\r\n", true},
		{"*11\r\n", false},
		{"*1\r\n$16385\r\n", false},
		{"*1\r\n$1234567890\r\n", true},
	} {
		rr := NewRequestReader(&chunkSource{chunks: [][]byte{[]byte(tc.in)}},
			func() int64 { return 512 << 20 }, func() bool { return tc.authed })
		rr.Fill()
		if rr.Partial() {
			t.Errorf("%q (authed %v): Partial", tc.in, tc.authed)
		}
	}
}
