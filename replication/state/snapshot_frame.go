package state

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// The snapshot's framing: the body is cut into frames of at most
// frameMax bytes, each [payload length u32][CRC-32C of payload u32][payload],
// so the reader verifies every byte before it parses it (a flipped length or
// count can never make it allocate or build anything from garbage). A frame
// of length 0 ends the body; the trailer follows (see snapshot.go).

const (
	// frameMax is the largest frame payload.
	frameMax = 64 << 10
	// frameHeaderLen is the length of a frame header.
	frameHeaderLen = 8
	// trailerLen is the length of the trailer after the end frame.
	trailerLen = 20
)

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorruptSnapshot is matched (errors.Is) by every ReadSnapshot error
// that means the snapshot's bytes are wrong: truncated, checksum mismatch,
// unknown version, bad record. Other errors are the reader's I/O errors.
var ErrCorruptSnapshot = errors.New("corrupt snapshot")

// corruptError is a ReadSnapshot error about the snapshot's bytes; its text
// says what is wrong and where.
type corruptError struct{ msg string }

func (e *corruptError) Error() string        { return e.msg }
func (e *corruptError) Is(target error) bool { return target == ErrCorruptSnapshot }

func corruptf(format string, args ...any) error {
	return &corruptError{msg: fmt.Sprintf(format, args...)}
}

// frameWriter cuts the body into checksummed frames and keeps the body's
// length and CRC for the trailer. The first error sticks.
type frameWriter struct {
	w    io.Writer
	buf  []byte // frame header space, then the pending payload
	crc  uint32 // CRC-32C of the whole body so far
	size uint64 // body bytes so far
	err  error
}

func newFrameWriter(w io.Writer) *frameWriter {
	return &frameWriter{w: w, buf: make([]byte, frameHeaderLen, frameHeaderLen+frameMax)}
}

// raw writes p outside any frame (the header and trailer).
func (f *frameWriter) raw(p []byte) {
	if f.err == nil {
		_, f.err = f.w.Write(p)
	}
}

// write adds p to the body.
func (f *frameWriter) write(p []byte) {
	for len(p) > 0 && f.err == nil {
		n := min(len(p), frameHeaderLen+frameMax-len(f.buf))
		f.buf = append(f.buf, p[:n]...)
		p = p[n:]
		if len(f.buf) == frameHeaderLen+frameMax {
			f.flush()
		}
	}
}

// flush writes the pending payload as one frame.
func (f *frameWriter) flush() {
	payload := f.buf[frameHeaderLen:]
	if len(payload) == 0 || f.err != nil {
		return
	}
	sum := crc32.Checksum(payload, castagnoli)
	binary.BigEndian.PutUint32(f.buf[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(f.buf[4:8], sum)
	f.crc = crc32.Update(f.crc, castagnoli, payload)
	f.size += uint64(len(payload))
	f.raw(f.buf)
	f.buf = f.buf[:frameHeaderLen]
}

// finish writes the last frame, the end frame and the trailer.
func (f *frameWriter) finish(records uint64) error {
	f.flush()
	var t [4 + trailerLen]byte // end frame length 0, then the trailer
	binary.BigEndian.PutUint64(t[4:12], records)
	binary.BigEndian.PutUint64(t[12:20], f.size)
	binary.BigEndian.PutUint32(t[20:24], f.crc)
	f.raw(t[:])
	return f.err
}

// frameReader reads a framed body, verifying each frame before handing out
// its bytes. Offsets in its errors are byte offsets in the snapshot.
type frameReader struct {
	r     *bufio.Reader
	off   int64  // snapshot offset of the next unread byte of r
	cur   []byte // the unread part of the current frame's payload
	frame []byte // the current frame's buffer
	crc   uint32 // CRC-32C of the body read so far
	size  uint64 // body bytes read so far
	ended bool   // the end frame was read
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, frameHeaderLen+frameMax)}
}

// readRaw reads exactly len(p) bytes outside any frame.
func (f *frameReader) readRaw(p []byte, what string) error {
	n, err := io.ReadFull(f.r, p)
	f.off += int64(n)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return corruptf("snapshot truncated: %s cut short at byte %d", what, f.off)
	case err != nil:
		return fmt.Errorf("snapshot read at byte %d: %w", f.off, err)
	}
	return nil
}

// next reads the next frame. At the end frame it sets ended and returns an
// error: the parser asked for more bytes than the body holds.
func (f *frameReader) next() error {
	if f.ended {
		return corruptf("snapshot corrupt: body ends inside a record at byte %d", f.off)
	}
	start := f.off
	var h [frameHeaderLen]byte
	if err := f.readRaw(h[:4], "frame header"); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(h[:4])
	if n == 0 {
		f.ended = true
		return corruptf("snapshot corrupt: body ends inside a record at byte %d", start)
	}
	if n > frameMax {
		return corruptf("snapshot corrupt: frame at byte %d has bad length %d", start, n)
	}
	if err := f.readRaw(h[4:], "frame header"); err != nil {
		return err
	}
	if cap(f.frame) < int(n) {
		f.frame = make([]byte, frameMax)
	}
	f.frame = f.frame[:n]
	if err := f.readRaw(f.frame, "frame"); err != nil {
		return err
	}
	if crc32.Checksum(f.frame, castagnoli) != binary.BigEndian.Uint32(h[4:]) {
		return corruptf("snapshot checksum mismatch in frame at byte %d", start)
	}
	f.crc = crc32.Update(f.crc, castagnoli, f.frame)
	f.size += uint64(n)
	f.cur = f.frame
	return nil
}

// ReadByte returns the next body byte (io.ByteReader, for the varints).
func (f *frameReader) ReadByte() (byte, error) {
	if len(f.cur) == 0 {
		if err := f.next(); err != nil {
			return 0, err
		}
	}
	b := f.cur[0]
	f.cur = f.cur[1:]
	return b, nil
}

// peekByte returns the next body byte without consuming it (optional
// records: a reader looks at the next tag before deciding).
func (f *frameReader) peekByte() (byte, error) {
	if len(f.cur) == 0 {
		if err := f.next(); err != nil {
			return 0, err
		}
	}
	return f.cur[0], nil
}

// readFull fills p from the body.
func (f *frameReader) readFull(p []byte) error {
	for len(p) > 0 {
		if len(f.cur) == 0 {
			if err := f.next(); err != nil {
				return err
			}
		}
		n := copy(p, f.cur)
		p, f.cur = p[n:], f.cur[n:]
	}
	return nil
}

// readBytes returns the next n body bytes in a new slice. Large n grows the
// slice as bytes arrive, so a wrong length cannot allocate more than the
// snapshot holds.
func (f *frameReader) readBytes(n uint64) ([]byte, error) {
	const step = 1 << 20
	if n <= step {
		p := make([]byte, n)
		return p, f.readFull(p)
	}
	var p []byte
	for rem := n; rem > 0; {
		k := min(rem, step)
		p = slices.Grow(p, int(k))[:len(p)+int(k)]
		if err := f.readFull(p[len(p)-int(k):]); err != nil {
			return nil, err
		}
		rem -= k
	}
	return p, nil
}

// finish checks that the body is fully consumed and followed by the end
// frame and a trailer that matches it, and that nothing follows.
func (f *frameReader) finish(records uint64) error {
	if len(f.cur) > 0 {
		return corruptf("snapshot corrupt: %d unread bytes after the last record at byte %d", len(f.cur), f.off)
	}
	start := f.off
	var h [4]byte
	if err := f.readRaw(h[:], "end frame"); err != nil {
		return err
	}
	if n := binary.BigEndian.Uint32(h[:]); n != 0 {
		return corruptf("snapshot corrupt: frame at byte %d follows the last record", start)
	}
	var t [trailerLen]byte
	if err := f.readRaw(t[:], "trailer"); err != nil {
		return err
	}
	wantRecords := binary.BigEndian.Uint64(t[0:8])
	wantSize := binary.BigEndian.Uint64(t[8:16])
	wantCRC := binary.BigEndian.Uint32(t[16:20])
	switch {
	case wantCRC != f.crc:
		return corruptf("snapshot checksum mismatch: body CRC-32C %08x, trailer says %08x", f.crc, wantCRC)
	case wantSize != f.size:
		return corruptf("snapshot corrupt: body is %d bytes, trailer says %d", f.size, wantSize)
	case wantRecords != records:
		return corruptf("snapshot corrupt: %d records read, trailer says %d", records, wantRecords)
	}
	if _, err := f.r.ReadByte(); err == nil {
		return corruptf("snapshot corrupt: data after the trailer at byte %d", f.off)
	} else if err != io.EOF {
		return fmt.Errorf("snapshot read after the trailer: %w", err)
	}
	return nil
}
