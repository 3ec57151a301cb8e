package resp

import (
	"bufio"
	"errors"
	"io"
	"strconv"
)

// ReplyLimits bounds what a ReplyReader accepts, so a peer cannot make it
// allocate or recurse without limit.
type ReplyLimits struct {
	// Depth is the deepest nesting of aggregates (and attributes).
	Depth int
	// Line is the longest line, type byte and CRLF included.
	Line int
	// Elems is the most elements of one aggregate (pairs for a map or an
	// attribute).
	Elems int64
	// Bulk is the longest bulk, verbatim or blob-error string.
	Bulk int64
}

// DefaultReplyLimits are the limits NewReplyReader uses: 64 levels, 64 KiB
// lines, 2^30 elements and 512 MiB bulks (Redis's proto-max-bulk-len
// ceiling).
var DefaultReplyLimits = ReplyLimits{Depth: 64, Line: 64 << 10, Elems: 1 << 30, Bulk: 512 << 20}

// ReplyReader reads RESP2 and RESP3 replies: one reply per call, either as
// its exact bytes (ReadRaw, for relaying) or as a Value (Read). A bulk is
// read in chunks as its bytes arrive, so a declared length alone allocates
// at most 1 MiB. A ReplyReader holds no state of its own besides its
// source and limits: several may read the same bufio.Reader in turn.
type ReplyReader struct {
	r *bufio.Reader
	// Limits are the bounds checked on each reply.
	Limits ReplyLimits
}

// NewReplyReader reads replies from r with DefaultReplyLimits.
func NewReplyReader(r *bufio.Reader) *ReplyReader {
	return &ReplyReader{r: r, Limits: DefaultReplyLimits}
}

// ReplyProtocolError is a malformed reply, or one past the reader's limits.
type ReplyProtocolError string

// Error returns "protocol error in reply: " and the reason.
func (e ReplyProtocolError) Error() string { return "protocol error in reply: " + string(e) }

// Value is one reply as it came off the wire.
//
// Kind is the RESP type byte: '+' simple string, '-' error, ':' integer,
// '$' bulk, '*' array, '_' null, '%' map, '~' set, ',' double, '#'
// boolean, '=' verbatim, '(' big number, '!' blob error, '>' push. A null
// is Kind '$' (RESP2 "$-1"), '*' (RESP2 "*-1") or '_' with Nil set.
type Value struct {
	Kind byte
	// Str is the text of every kind but integers, nulls and aggregates: a
	// double, big number or boolean ("t"/"f") as sent, a verbatim string
	// with its "txt:" format prefix.
	Str string
	// Int is an integer's value.
	Int int64
	// Elems are an array's, set's or push's elements; a map's keys and
	// values alternate (k1, v1, k2, v2, ...).
	Elems []Value
	// Nil marks a null.
	Nil bool
}

// Equal reports whether v and o have the same kind and value, recursively.
func (v Value) Equal(o Value) bool {
	if v.Kind != o.Kind || v.Nil != o.Nil || v.Str != o.Str || v.Int != o.Int || len(v.Elems) != len(o.Elems) {
		return false
	}
	for i := range v.Elems {
		if !v.Elems[i].Equal(o.Elems[i]) {
			return false
		}
	}
	return true
}

// AppendValue appends v's RESP bytes to b, in its own kind: what
// ReplyReader.Read reads back as v. Lines are written as they are (Read
// never returns one holding "\n").
func AppendValue(b []byte, v Value) []byte {
	switch v.Kind {
	case ':':
		b = append(b, ':')
		b = strconv.AppendInt(b, v.Int, 10)
		return append(b, '\r', '\n')
	case '_':
		return append(b, '_', '\r', '\n')
	case '$', '=', '!':
		if v.Nil {
			return append(b, v.Kind, '-', '1', '\r', '\n')
		}
		return AppendBulk(b, v.Kind, []byte(v.Str))
	case '*', '~', '>', '%':
		if v.Nil {
			return append(b, v.Kind, '-', '1', '\r', '\n')
		}
		n := len(v.Elems)
		if v.Kind == '%' {
			n /= 2
		}
		b = AppendHeader(b, v.Kind, n)
		for _, e := range v.Elems {
			b = AppendValue(b, e)
		}
		return b
	}
	b = append(b, v.Kind)
	b = append(b, v.Str...)
	return append(b, '\r', '\n')
}

// ReadRaw reads exactly one reply and appends its bytes to dst. An
// attribute (|) is read with the reply it annotates. A push (>) is a reply
// here too; a caller waiting for a command's reply skips it. At the end of
// the input before a reply starts, the error is io.EOF; in the middle of
// one, io.ErrUnexpectedEOF.
func (rr *ReplyReader) ReadRaw(dst []byte) ([]byte, error) {
	return rr.read(dst, 0, nil)
}

// Read reads exactly one reply as a Value. An attribute is read and
// dropped: the Value is the reply it annotates. Errors are as ReadRaw's.
func (rr *ReplyReader) Read() (Value, error) {
	var v Value
	_, err := rr.read(nil, 0, &v)
	if err != nil {
		return Value{}, err
	}
	return v, nil
}

// read appends one reply's bytes to dst and, when v is not nil, sets *v to
// its value.
func (rr *ReplyReader) read(dst []byte, depth int, v *Value) ([]byte, error) {
	if depth > rr.Limits.Depth {
		return dst, ReplyProtocolError("nested too deep")
	}
	start := len(dst)
	dst, err := rr.readLine(dst)
	if err != nil {
		return dst, err
	}
	t := dst[start]
	line := dst[start+1 : len(dst)-2]
	if v != nil {
		*v = Value{Kind: t}
	}
	switch t {
	case '+', '-', ',', '#', '(':
		if v != nil {
			v.Str = string(line)
		}
		return dst, nil
	case '_':
		if v != nil {
			v.Nil = true
		}
		return dst, nil
	case ':':
		n, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil {
			return dst, ReplyProtocolError("bad integer")
		}
		if v != nil {
			v.Int = n
		}
		return dst, nil
	case '$', '!', '=':
		n, ok := parseReplyLen(line)
		if !ok || n > rr.Limits.Bulk || (n < 0 && t != '$') {
			return dst, ReplyProtocolError("bad bulk length")
		}
		if n < 0 {
			if v != nil {
				v.Nil = true
			}
			return dst, nil
		}
		off := len(dst)
		if dst, err = readN(rr.r, dst, n+2); err != nil {
			return dst, err
		}
		if dst[len(dst)-2] != '\r' || dst[len(dst)-1] != '\n' {
			return dst, ReplyProtocolError("bulk not terminated by CRLF")
		}
		if v != nil {
			v.Str = string(dst[off : len(dst)-2])
		}
		return dst, nil
	case '*', '%', '~', '>', '|':
		n, ok := parseReplyLen(line)
		if !ok || n > rr.Limits.Elems || (n < 0 && t != '*') {
			return dst, ReplyProtocolError("bad aggregate length")
		}
		if n < 0 {
			if v != nil {
				v.Nil = true
			}
			return dst, nil
		}
		if t == '%' || t == '|' {
			n *= 2
		}
		keep := v != nil && t != '|' // an attribute's elements are dropped
		var elems []Value
		if keep {
			// Like the request reader, do not trust the count for the
			// capacity.
			elems = make([]Value, 0, min(n, 1024))
		}
		for range n {
			var e *Value
			if keep {
				elems = append(elems, Value{})
				e = &elems[len(elems)-1]
			}
			if dst, err = rr.read(dst, depth+1, e); err != nil {
				return dst, err
			}
		}
		if t == '|' {
			// The attribute annotates the reply that follows it.
			return rr.read(dst, depth+1, v)
		}
		if keep {
			v.Elems = elems
		}
		return dst, nil
	default:
		return dst, ReplyProtocolError("unknown reply type " + strconv.QuoteRune(rune(t)))
	}
}

// readLine appends one CRLF-terminated line (at least the type byte) of at
// most Limits.Line bytes.
func (rr *ReplyReader) readLine(dst []byte) ([]byte, error) {
	start := len(dst)
	for {
		frag, err := rr.r.ReadSlice('\n')
		if len(dst)-start+len(frag) > rr.Limits.Line {
			return dst, ReplyProtocolError("line too long")
		}
		dst = append(dst, frag...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(dst) > start {
				return dst, unexpectedEOF(err)
			}
			return dst, err
		}
	}
	if n := len(dst) - start; n < 3 || dst[len(dst)-2] != '\r' {
		return dst, ReplyProtocolError("line not terminated by CRLF")
	}
	return dst, nil
}

// readN appends n bytes read from r to dst, growing dst by at most
// bulkChunk bytes ahead of the bytes received.
func readN(r io.Reader, dst []byte, n int64) ([]byte, error) {
	for n > 0 {
		k := int(min(n, bulkChunk))
		off := len(dst)
		dst = append(dst, make([]byte, k)...)
		if _, err := io.ReadFull(r, dst[off:]); err != nil {
			return dst[:off], unexpectedEOF(err)
		}
		n -= int64(k)
	}
	return dst, nil
}

// parseReplyLen parses an aggregate or bulk length (-1 is null).
func parseReplyLen(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil && n >= -1
}
