package resp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"runtime/metrics"
	"strings"
	"testing"
)

// Run with `make fuzz` (each target for FUZZTIME), or e.g.
// go test ./server/resp -run '^$' -fuzz '^FuzzRequestReader$' -fuzztime 60s.

// allocSlack bounds what reading n input bytes may allocate: a few times
// the input, plus room for one bulk chunk (a declared bulk gets at most
// bulkChunk ahead of its bytes; growing a buffer by it may copy, and the
// race detector's build allocates more), plus buffers. A declared length
// alone never allocates more.
func allocSlack(n int) uint64 { return uint64(64*n) + 4*bulkChunk + 256<<10 }

var allocSample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}

// heapAllocs returns the bytes allocated on the heap so far.
func heapAllocs() uint64 {
	metrics.Read(allocSample)
	return allocSample[0].Value.Uint64()
}

// chunkedReader returns at most n bytes per Read, so requests arrive split.
type chunkedReader struct {
	data []byte
	n    int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

// readRequests reads every request as a connection does (ReadCommand, then
// ReadBuffered while bytes are buffered) and returns them with the error
// that ended reading.
func readRequests(in []byte, chunk int, maxBulk int64, authed bool) ([][][]byte, error) {
	rr := NewRequestReader(&chunkedReader{data: in, n: chunk},
		func() int64 { return maxBulk }, func() bool { return authed })
	var out [][][]byte
	for {
		args, err := rr.ReadCommand()
		if err != nil {
			return out, err
		}
		out = append(out, args)
		for rr.Buffered() > 0 {
			more, ok := rr.ReadBuffered()
			if !ok {
				break
			}
			out = append(out, more)
		}
	}
}

func FuzzRequestReader(f *testing.F) {
	seeds := []string{
		"*1\r\n$4\r\nPING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
		"*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n*1\r\n$4\r\nPING\r\n",
		"PING\r\n",
		"ECHO 'a b' \"c\\x41\\n\"\n",
		"*0\r\n*-1\r\n\r\nPING\r\n",
		"*1\r\n$3\r\na\r\n\r\n",
		"*x\r\n",
		"*1\r\n+OK\r\n",
		"*1\r\n$-3\r\n",
		"*1\r\n$536870912\r\n",
		"*2147483647\r\n$1\r\na\r\n",
		"*99999999999999999999\r\n",
		"*11\r\n",
		"*1\r\n$20000\r\n",
		"ECHO \"a\r\n",
		"*1\r\n$2\r\nab",
		"*2\r\n$1\r\na\r\n",
		"*1\r\n$01\r\na\r\n",
		"*+1\r\n$+1\r\na\r\n",
		"\"unterminated",
		"set a 'it\\'s'\r\n",
		"*1\n$1\na\r\n",
		"*-0\r\n", "*00\r\n", "*-9223372036854775808\r\n", "*1\r\n$-0\r\n", "*1\r\n$00\r\n\r\n",
		"*1\rx$4\ryPINGzz", "*1\r\n\r\n", "*1\x00\r\n$1\r\na\r\n", "PING\x00\r\n", "*2\r\n$1\r\na\r\n$1\r\n\x00\r\n",
		// Inputs past the 64 KiB line limit are left to TestRequestReader:
		// as seeds they slow the fuzzer (minimizing them) for little gain.
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i*7), uint8(20), i%3 != 0)
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk, bulkExp uint8, authed bool) {
		// proto-max-bulk-len: 1 MiB (the least CONFIG SET accepts) .. 512 MiB.
		maxBulk := int64(minProtoMaxBulkLen) << (bulkExp % 10)
		before := heapAllocs()
		whole, werr := readRequests(in, len(in)+1, maxBulk, authed)
		if got := heapAllocs() - before; got > allocSlack(len(in)) {
			t.Fatalf("reading %d bytes allocated %d bytes", len(in), got)
		}
		// The commands and the error that ends reading do not depend on
		// how the bytes arrive (the buffered fast path and the general
		// path agree).
		split, serr := readRequests(in, int(chunk%64)+1, maxBulk, authed)
		if !reflect.DeepEqual(whole, split) || errText(werr) != errText(serr) {
			t.Fatalf("in %d-byte reads: %q, %v; whole: %q, %v", chunk%64+1, split, serr, whole, werr)
		}
		var pe ProtocolError
		if werr == nil || !(errors.Is(werr, io.EOF) || errors.Is(werr, io.ErrUnexpectedEOF) || errors.As(werr, &pe)) {
			t.Fatalf("reading ended with %v", werr)
		}
		if !authed && len(in) > 0 && in[0] == '*' && len(whole) > 0 {
			// The first request is a multibulk: Redis's limits before AUTH.
			if len(whole[0]) > UnauthMultibulkMax {
				t.Fatalf("unauthenticated multibulk of %d arguments accepted", len(whole[0]))
			}
			for _, a := range whole[0] {
				if len(a) > UnauthBulkMax {
					t.Fatalf("unauthenticated bulk of %d bytes accepted", len(a))
				}
			}
		}
		for _, args := range whole {
			if len(args) == 0 {
				t.Fatalf("an empty command was returned")
			}
			for _, a := range args {
				// An inline argument is bounded by the line instead.
				if int64(len(a)) > max(maxBulk, InlineMaxSize) {
					t.Fatalf("argument of %d bytes accepted (proto-max-bulk-len %d)", len(a), maxBulk)
				}
			}
			// Re-encoded as a multibulk, it reads back the same.
			enc := AppendCommand(nil, args...)
			back, err := readRequests(enc, len(enc)+1, 1<<30, true)
			if !errors.Is(err, io.EOF) || len(back) != 1 || !reflect.DeepEqual(back[0], args) {
				t.Fatalf("%q re-encoded as %q reads back as %q, %v", args, enc, back, err)
			}
		}
	})
}

// errText is err's text ("" for nil) for comparing two runs.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// smallReplyLimits are tight bounds for the fuzzer to run into.
var smallReplyLimits = ReplyLimits{Depth: 6, Line: 300, Elems: 40, Bulk: 2000}

func FuzzReplyReader(f *testing.F) {
	seeds := []string{
		"+OK\r\n", "-ERR bad\r\n", ":42\r\n", ":-1\r\n", "$3\r\nabc\r\n", "$0\r\n\r\n", "$-1\r\n",
		"$4\r\na\r\nb\r\n", "*-1\r\n", "*0\r\n", "*2\r\n$1\r\na\r\n*1\r\n:1\r\n", "_\r\n", ",1.5\r\n",
		",inf\r\n", "#t\r\n", "(3492890328409238509324850943850943825024385\r\n",
		"!21\r\nSYNTAX invalid syntax\r\n", "=15\r\ntxt:Some string\r\n",
		"%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n%1\r\n$1\r\nk\r\n~2\r\n:1\r\n_\r\n", "~3\r\n+a\r\n+b\r\n#f\r\n",
		">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n", "|1\r\n+ttl\r\n:3600\r\n$5\r\nvalue\r\n",
		"*1\r\n|1\r\n+a\r\n+b\r\n:7\r\n", "?what\r\n", "+OK\n", "$3\r\nabcd\r\n", "$x\r\n", "$-2\r\n",
		"!-1\r\n", "%-1\r\n", "*2\r\n:1\r\n", "$10\r\nabc", "*99999999999\r\n", "$536870912\r\n",
		"$536870913\r\n", "*1073741824\r\n", ":9223372036854775808\r\n", ":+5\r\n", "$+3\r\nabc\r\n",
		"+a\rb\r\n", "_x\r\n", strings.Repeat("*1\r\n", 70) + ":1\r\n", "+" + strings.Repeat("x", 400) + "\r\n",
		"+OK\r\n+NEXT\r\n", "",
	}
	for i, s := range seeds {
		f.Add([]byte(s), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, in []byte, small bool) {
		lim := DefaultReplyLimits
		if small {
			lim = smallReplyLimits
		}
		reader := func(b []byte) *ReplyReader {
			rr := NewReplyReader(bufio.NewReaderSize(bytes.NewReader(b), 16))
			rr.Limits = lim
			return rr
		}
		before := heapAllocs()
		v, verr := reader(in).Read()
		if got := heapAllocs() - before; got > allocSlack(len(in)) {
			t.Fatalf("reading %d bytes allocated %d bytes", len(in), got)
		}
		raw, rerr := reader(in).ReadRaw(nil)
		if (verr == nil) != (rerr == nil) {
			t.Fatalf("Read: %v; ReadRaw: %v", verr, rerr)
		}
		if verr != nil {
			var pe ReplyProtocolError
			if !errors.Is(verr, io.EOF) && !errors.Is(verr, io.ErrUnexpectedEOF) && !errors.As(verr, &pe) {
				t.Fatalf("unexpected error %v", verr)
			}
			return
		}
		if !bytes.HasPrefix(in, raw) {
			t.Fatalf("ReadRaw returned %q, not a prefix of the input", raw)
		}
		checkBounds(t, v, lim, 0)
		// Re-encoded, it reads back the same, and so do the raw bytes.
		enc := AppendValue(nil, v)
		back, err := reader(enc).Read()
		if err != nil || !back.Equal(v) {
			t.Fatalf("%#v re-encoded as %q reads back as %#v, %v", v, enc, back, err)
		}
		if again, err := reader(raw).Read(); err != nil || !again.Equal(v) {
			t.Fatalf("raw %q reads back as %#v, %v; want %#v", raw, again, err, v)
		}
	})
}

// checkBounds fails if v breaks lim at nesting level depth.
func checkBounds(t *testing.T, v Value, lim ReplyLimits, depth int) {
	t.Helper()
	if depth > lim.Depth {
		t.Fatalf("value nested %d deep accepted (limit %d)", depth, lim.Depth)
	}
	switch v.Kind {
	case '$', '=', '!':
		if int64(len(v.Str)) > lim.Bulk {
			t.Fatalf("bulk of %d bytes accepted (limit %d)", len(v.Str), lim.Bulk)
		}
	case '+', '-', ',', '#', '(':
		if len(v.Str)+3 > lim.Line {
			t.Fatalf("line of %d bytes accepted (limit %d)", len(v.Str)+3, lim.Line)
		}
	case '%':
		if int64(len(v.Elems)) > 2*lim.Elems || len(v.Elems)%2 != 0 {
			t.Fatalf("map of %d keys and values accepted (limit %d pairs)", len(v.Elems), lim.Elems)
		}
	case '*', '~', '>':
		if int64(len(v.Elems)) > lim.Elems {
			t.Fatalf("aggregate of %d elements accepted (limit %d)", len(v.Elems), lim.Elems)
		}
	}
	for _, e := range v.Elems {
		checkBounds(t, e, lim, depth+1)
	}
}
