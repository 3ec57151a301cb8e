package resp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Limits of Redis's request parser (server.h, networking.c).
const (
	// InlineMaxSize is PROTO_INLINE_MAX_SIZE: the longest inline request,
	// and the longest "*N" / "$N" header line.
	InlineMaxSize = 64 << 10
	// maxMultibulkLen is the largest "*N" Redis accepts (INT_MAX).
	maxMultibulkLen = 1<<31 - 1
	// UnauthMultibulkMax and UnauthBulkMax are Redis's limits before a
	// client authenticates, so an anonymous client cannot make it buffer
	// much.
	UnauthMultibulkMax = 10
	UnauthBulkMax      = 16384
	// bulkChunk bounds how much is allocated ahead of the bytes actually
	// received, so a "$536870912" header alone does not allocate 512 MB.
	bulkChunk = 1 << 20
)

// ProtocolError is a malformed request: the server answers
// "-ERR Protocol error: <msg>" and closes the connection, as Redis does.
// Its value is the text after "Protocol error: ".
type ProtocolError string

// Error returns "Protocol error: " and the reason.
func (e ProtocolError) Error() string { return "Protocol error: " + string(e) }

// RequestReader parses client requests: RESP multibulk ("*N\r\n$len\r\n...")
// and inline commands (a line of space-separated, optionally quoted words),
// with Redis's limits and error texts.
//
// streamd has its own reader rather than redcon.ReadNextCommand because the
// latter re-scans the whole buffer each time more bytes of a large bulk
// arrive, enforces no length limits, and treats a line starting with "$" as
// a Tile38 command where Redis sees an inline command.
//
// A RequestReader is used by one goroutine at a time.
type RequestReader struct {
	r *bufio.Reader
	// maxBulk returns the current proto-max-bulk-len (CONFIG SET changes it).
	maxBulk func() int64
	// authed returns whether the client may send large requests.
	authed func() bool
	// argChunk and byteChunk are where ReadBuffered carves the argument
	// slices and bytes of small requests from (arena.go).
	argChunk  [][]byte
	byteChunk []byte
}

// NewRequestReader reads requests from r. maxBulk returns the current
// proto-max-bulk-len and authed whether the client has authenticated (an
// unauthenticated client gets Redis's smaller limits); both are called per
// request, so a CONFIG SET or an AUTH applies to the next one. maxBulk
// must return at least 1 MiB, the smallest proto-max-bulk-len Redis
// accepts: a request read whole from the buffer checks only its bulks
// longer than that against it.
func NewRequestReader(r io.Reader, maxBulk func() int64, authed func() bool) *RequestReader {
	return &RequestReader{r: bufio.NewReaderSize(r, 16<<10), maxBulk: maxBulk, authed: authed}
}

// Buffered reports whether request bytes are already waiting (pipelining).
func (rr *RequestReader) Buffered() int { return rr.r.Buffered() }

// ReadCommand returns the next non-empty request's arguments. Empty requests
// ("*0", "*-1", blank inline lines) are skipped as Redis skips them. The
// arguments are owned by the caller: never reused by the reader (small
// requests' share chunks with other requests, see arena.go).
func (rr *RequestReader) ReadCommand() ([][]byte, error) {
	for {
		b, err := rr.r.Peek(1)
		if err != nil {
			return nil, err
		}
		var args [][]byte
		if b[0] == '*' {
			var ok bool
			if args, ok = rr.ReadBuffered(); ok {
				return args, nil
			}
			args, err = rr.readMultibulk()
		} else {
			args, err = rr.readInline()
		}
		if err != nil {
			return nil, err
		}
		if len(args) > 0 {
			return args, nil
		}
	}
}

// Fast path limits: a request taken whole from the buffer has at most
// fastMaxArgs arguments (larger ones take the general path), and only a
// bulk longer than minProtoMaxBulkLen, the smallest proto-max-bulk-len
// CONFIG SET and the config file accept, needs the setting read.
const (
	fastMaxArgs        = 1024
	minProtoMaxBulkLen = 1 << 20
)

// ReadBuffered parses one multibulk request if all of it is already in the
// read buffer and it has the common well-formed shape ("\r\n" line ends,
// plain decimal lengths, within every limit); it then consumes it and
// returns its arguments, carved from chunks shared with other requests
// (each capped at its length, so an append to one cannot reach the next;
// see arena.go). Otherwise it consumes
// nothing and returns false, never blocking: ReadCommand's general path
// reads the request and gives Redis's exact errors.
func (rr *RequestReader) ReadBuffered() ([][]byte, bool) {
	b, _ := rr.r.Peek(rr.r.Buffered())
	if len(b) < 4 || b[0] != '*' {
		return nil, false
	}
	n, p, ok := parseLenCRLF(b, 1)
	if !ok || n <= 0 || n > fastMaxArgs {
		return nil, false
	}
	authed := true
	if n > UnauthMultibulkMax || len(b) > UnauthBulkMax {
		// Only a request that could exceed the unauthenticated limits
		// needs to know; the check costs a config read.
		authed = rr.authed()
		if n > UnauthMultibulkMax && !authed {
			return nil, false
		}
	}
	maxBulk := int64(-1) // read lazily: most arguments are far below any limit
	// where holds the first arguments' offsets, so that copying them does
	// not parse their lengths again.
	var where [16]struct{ at, size int }
	start, total := p, 0
	for i := 0; i < n; i++ {
		if p >= len(b) || b[p] != '$' {
			return nil, false
		}
		size, q, ok := parseLenCRLF(b, p+1)
		if !ok || q+size+2 > len(b) {
			return nil, false
		}
		if i < len(where) {
			where[i].at, where[i].size = q, size
		}
		if size > UnauthBulkMax && !authed {
			return nil, false
		}
		if size > minProtoMaxBulkLen {
			if maxBulk < 0 {
				maxBulk = rr.maxBulk()
			}
			if int64(size) > maxBulk {
				return nil, false
			}
		}
		p = q + size + 2 // Redis skips the two bytes after a bulk unchecked
		total += size
	}
	buf := rr.takeBytes(total)
	args := rr.takeArgs(n)
	off := 0
	for i, q := 0, start; i < n; i++ {
		var size, d int
		if i < len(where) {
			d, size = where[i].at, where[i].size
		} else {
			size, d, _ = parseLenCRLF(b, q+1)
		}
		copy(buf[off:], b[d:d+size])
		args[i] = buf[off : off+size : off+size]
		off += size
		q = d + size + 2
	}
	rr.r.Discard(p)
	return args, true
}

// parseLenCRLF parses the decimal length starting at b[i] (1 to 9 digits, no
// sign, no leading zero but in "0" itself) and the "\r\n" after it; it
// returns the length and the index after the "\n", or false if b holds
// anything else there or ends first (the general path then answers as Redis
// does).
func parseLenCRLF(b []byte, i int) (n, next int, ok bool) {
	j := i
	for ; j < len(b) && j-i < 10 && b[j] >= '0' && b[j] <= '9'; j++ {
		n = n*10 + int(b[j]-'0')
	}
	if j == i || j-i > 9 || (b[i] == '0' && j-i > 1) || j+1 >= len(b) || b[j] != '\r' || b[j+1] != '\n' {
		return 0, 0, false
	}
	return n, j + 2, true
}

// readUntil reads a line as Redis finds it in its query buffer: up to the
// first delim ('\r' for a multibulk or bulk header, '\n' for an inline
// request), returned without it. Redis looks for it with strchr, which
// stops at a NUL byte: a line with a NUL before its end is never found, so
// Redis waits for more bytes until over InlineMaxSize are buffered and then
// answers tooBig; so does readUntil (discarding them). Redis gives up on a
// line when over InlineMaxSize bytes are buffered with no end in them; it
// reads 16 KiB at a time, as this reader's buffer does, so a line whose end
// arrives in the read that crosses the limit is still taken (and then
// refused by its parser).
func (rr *RequestReader) readUntil(delim byte, tooBig string) ([]byte, error) {
	var line []byte
	for {
		frag, err := rr.r.ReadSlice(delim)
		if bytes.IndexByte(frag, 0) >= 0 {
			return nil, rr.discardStuck(len(line)+len(frag), tooBig)
		}
		if err == nil {
			if line == nil {
				line = frag
			} else {
				line = append(line, frag...)
			}
			return line[:len(line)-1], nil
		}
		line = append(line, frag...)
		if len(line) > InlineMaxSize {
			return nil, ProtocolError(tooBig)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

// discardStuck reads and drops bytes until more than InlineMaxSize have
// arrived since the start of a line Redis cannot find the end of (n so
// far), then answers tooBig, as Redis does; or ends with the connection.
func (rr *RequestReader) discardStuck(n int, tooBig string) error {
	for n <= InlineMaxSize {
		if _, err := rr.r.Peek(1); err != nil {
			return err
		}
		k, _ := rr.r.Discard(rr.r.Buffered())
		n += k
	}
	return ProtocolError(tooBig)
}

// header is a parsed "*N" or "$N" line: its first byte (0 for an empty
// line) and its length, if string2ll accepts the rest.
type header struct {
	kind byte
	n    int64
	ok   bool
}

// readHeader reads a "*N" or "$N" line as Redis does: up to the first
// '\r', then the byte after it, which Redis skips unchecked (it is the
// '\n' of a well-formed request).
func (rr *RequestReader) readHeader(tooBig string) (header, error) {
	line, err := rr.readUntil('\r', tooBig)
	if err != nil {
		return header{}, err
	}
	// Parse before reading on: line points into the read buffer.
	var h header
	if len(line) > 0 {
		h.kind = line[0]
		h.n, h.ok = ParseInt64(line[1:])
	}
	if _, err := rr.r.ReadByte(); err != nil {
		return header{}, unexpectedEOF(err)
	}
	return h, nil
}

func (rr *RequestReader) readInline() ([][]byte, error) {
	line, err := rr.readUntil('\n', "too big inline request")
	if err != nil {
		return nil, err
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	args, ok := SplitArgs(line)
	if !ok {
		return nil, ProtocolError("unbalanced quotes in request")
	}
	return args, nil
}

// readMultibulk reads a "*N" request as Redis's processMultibulkBuffer:
// lengths are parsed by string2ll (no '+', no leading zeros, no "-0", no
// spaces), N above INT_MAX is refused, N <= 0 is an empty request (skipped),
// a bulk length below 0 or above proto-max-bulk-len is refused, and before
// AUTH at most UnauthMultibulkMax arguments of at most UnauthBulkMax bytes
// are accepted.
func (rr *RequestReader) readMultibulk() ([][]byte, error) {
	h, err := rr.readHeader("too big mbulk count string")
	if err != nil {
		return nil, err
	}
	n := h.n
	if !h.ok || n > maxMultibulkLen {
		return nil, ProtocolError("invalid multibulk length")
	}
	if n <= 0 {
		return nil, nil
	}
	authed := rr.authed()
	if n > UnauthMultibulkMax && !authed {
		return nil, ProtocolError("unauthenticated multibulk length")
	}
	maxBulk := rr.maxBulk()
	// Like Redis, do not trust "*N" for the slice capacity.
	args := make([][]byte, 0, min(n, 1024))
	for i := int64(0); i < n; i++ {
		h, err := rr.readHeader("too big bulk count string")
		if err != nil {
			return nil, err
		}
		if h.kind != '$' {
			// Redis names the byte where '$' should be; an empty line
			// has its '\r' there, which an error reply shows as a space.
			got := " "
			if h.kind != 0 {
				got = string([]byte{h.kind})
			}
			return nil, ProtocolError("expected '$', got '" + got + "'")
		}
		size := h.n
		if !h.ok || size < 0 || size > maxBulk {
			return nil, ProtocolError("invalid bulk length")
		}
		if size > UnauthBulkMax && !authed {
			return nil, ProtocolError("unauthenticated bulk length")
		}
		arg, err := rr.readBulk(size)
		if err != nil {
			return nil, err
		}
		args = append(args, arg)
	}
	return args, nil
}

// readBulk reads size bytes and the CRLF after them, growing the buffer as
// bytes arrive.
func (rr *RequestReader) readBulk(size int64) ([]byte, error) {
	buf := make([]byte, 0, min(size, bulkChunk))
	for int64(len(buf)) < size {
		want := min(size-int64(len(buf)), bulkChunk)
		start := len(buf)
		buf = append(buf, make([]byte, want)...)
		if _, err := io.ReadFull(rr.r, buf[start:]); err != nil {
			return nil, unexpectedEOF(err)
		}
	}
	var crlf [2]byte
	if _, err := io.ReadFull(rr.r, crlf[:]); err != nil {
		return nil, unexpectedEOF(err)
	}
	// Redis skips the two bytes after a bulk without checking them.
	return buf, nil
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// SplitArgs is Redis's sdssplitargs: words separated by blanks; "double
// quoted" words with \n \r \t \b \a \\ \" and \xHH escapes; 'single quoted'
// words with only \' ; a closing quote must be followed by a blank or the
// end. ok is false on unbalanced quotes.
func SplitArgs(line []byte) (args [][]byte, ok bool) {
	i := 0
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i == len(line) {
			return args, true
		}
		var cur []byte
		inDQ, inSQ, done := false, false, false
		for !done {
			if inDQ {
				switch {
				case i == len(line):
					return nil, false
				case line[i] == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, hexVal(line[i+2])<<4|hexVal(line[i+3]))
					i += 3
				case line[i] == '\\' && i+1 < len(line):
					i++
					c := line[i]
					switch c {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					}
					cur = append(cur, c)
				case line[i] == '"':
					if i+1 < len(line) && !isBlank(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			} else if inSQ {
				switch {
				case i == len(line):
					return nil, false
				case line[i] == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				case line[i] == '\'':
					if i+1 < len(line) && !isBlank(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			} else {
				switch {
				case i == len(line):
					done = true
				case isBlank(line[i]):
					done = true
				case line[i] == '"':
					inDQ = true
				case line[i] == '\'':
					inSQ = true
				default:
					cur = append(cur, line[i])
				}
			}
			if i < len(line) {
				i++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return bytes.IndexByte([]byte("0123456789abcdefABCDEF"), c) >= 0
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
