package resp

import "bufio"

// Methods for an event loop that owns many connections (server/loop_linux.go):
// it reads a connection only when it is readable, through a source whose
// Read never blocks, and takes only the requests already whole in the
// buffer (ReadBuffered); anything else is left to ReadCommand on the
// connection's own goroutine.

// Fill reads once from the underlying reader into the buffer unless it is
// full, and returns that read's error (nil when it brought bytes or the
// buffer was full).
func (rr *RequestReader) Fill() error {
	n := rr.r.Buffered()
	if n >= rr.r.Size() {
		return nil
	}
	_, err := rr.r.Peek(n + 1)
	if err == bufio.ErrBufferFull {
		return nil
	}
	return err
}

// SetAuthed replaces the function that says whether the client may send
// large requests (see NewRequestReader).
func (rr *RequestReader) SetAuthed(authed func() bool) { rr.authed = authed }

// Partial reports whether the buffered bytes are the start of a request
// ReadBuffered would take once the rest of it arrives: a well-formed
// multibulk so far, within the fast path's limits, whose known part
// already fits in the buffer. False for an empty buffer and for anything
// the general path must judge (inline requests, malformed or empty
// multibulks, requests larger than the buffer).
func (rr *RequestReader) Partial() bool {
	b, _ := rr.r.Peek(rr.r.Buffered())
	if len(b) == 0 || b[0] != '*' {
		return false
	}
	n, p, st := prefixLenCRLF(b, 1)
	switch {
	case st == lenShort:
		return true
	case st == lenBad || n <= 0 || n > fastMaxArgs || n > UnauthMultibulkMax && !rr.authed():
		return false
	}
	for i := 0; i < n; i++ {
		if p >= len(b) {
			return true
		}
		if b[p] != '$' {
			return false
		}
		size, q, st := prefixLenCRLF(b, p+1)
		switch {
		case st == lenShort:
			return true
		case st == lenBad, q+size+2 > rr.r.Size(), size > UnauthBulkMax && !rr.authed():
			return false
		}
		p = q + size + 2
		if p > len(b) {
			return true
		}
	}
	return false // whole: ReadBuffered would have taken it
}

// States of prefixLenCRLF.
const (
	lenOK = iota
	lenShort
	lenBad
)

// prefixLenCRLF is parseLenCRLF on a buffer that may end early: lenShort
// when b ends before the length and its "\r\n" are whole, lenBad when they
// are not what parseLenCRLF accepts.
func prefixLenCRLF(b []byte, i int) (n, next, state int) {
	j := i
	for ; j < len(b) && j-i < 10 && b[j] >= '0' && b[j] <= '9'; j++ {
		n = n*10 + int(b[j]-'0')
	}
	switch {
	case j-i > 9 || j > i+1 && b[i] == '0':
		return 0, 0, lenBad
	case j == len(b):
		return 0, 0, lenShort
	case j == i || b[j] != '\r':
		return 0, 0, lenBad
	case j+1 == len(b):
		return 0, 0, lenShort
	case b[j+1] != '\n':
		return 0, 0, lenBad
	}
	return n, j + 2, lenOK
}
