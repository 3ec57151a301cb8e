package streams

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// Snapshot version 2 writes each node as its buffer (see node), so a restore
// verifies and keeps the bytes instead of rebuilding every entry. Equal
// streams must still give equal bytes, so a node is written in its
// canonical form, the one a node rebuilt entry by entry has (what
// Restorer.AddNode and node.rebuild make):
//
//   - the master holds the first live entry's field names (none when every
//     entry is deleted), see remaster;
//   - a tombstone is the flags byte flagDeleted alone, its ID and an item
//     count of 0 (XDEL and trims only set the flag of an entry in place, so
//     its old fields stay in the buffer until the node is rebuilt);
//   - a live entry has flagSameFields exactly when its field names are the
//     master's;
//   - every varint is in its shortest form.
//
// A node in this form is written as it is; any other (one with tombstones
// set in place) is rebuilt for the snapshot only. AddNodeBuffer accepts the
// canonical form only.

// SnapshotBuffers calls fn with every node in key order: its key, its
// number of entries (tombstones included) and its buffer in canonical form,
// until fn returns false. The buffer is the node's own when it is canonical:
// fn must not change or keep it.
func (s *Stream) SnapshotBuffers(fn func(key ID, entries int, buf []byte) bool) {
	s.nodes.Ascend(func(n *node) bool {
		if !n.canonical() {
			n = n.canonicalCopy()
		}
		return fn(n.key, n.count, n.buf)
	})
}

// canonical reports whether the node's buffer is in canonical form, given
// that its entries were written by add (which writes live entries and
// tombstones canonically): its tombstones were added as such, not set in
// place, and its master is the first live entry's field names.
func (n *node) canonical() bool {
	firstLive := n.live > 0
	for i, p := 0, int(n.marks[0]); i < n.count; i, p = i+1, n.next(p) {
		if n.deletedAt(p) {
			if n.buf[p] != flagDeleted {
				return false
			}
			_, d := n.id(p)
			if n.buf[d] != 0 { // fields kept from before the delete
				return false
			}
			continue
		}
		if firstLive {
			if n.buf[p]&flagSameFields == 0 {
				return false
			}
			firstLive = false
		}
		if n.live == n.count {
			return true // no tombstone to check further
		}
	}
	return n.live > 0 || n.nmaster == 0
}

// canonicalCopy returns n rebuilt entry by entry (the canonical form).
func (n *node) canonicalCopy() *node {
	offs := n.offsets(nil, 0, n.count)
	var names [][]byte
	for _, p := range offs {
		if !n.deletedAt(p) {
			names = fieldNames(n.entry(p).Fields)
			break
		}
	}
	r := newNode(n.key, names, len(n.buf))
	for _, p := range offs {
		e := n.entry(p)
		r.add(e.ID, e.Fields, n.deletedAt(p))
	}
	return r
}

// AddNodeBuffer appends a node given as the buffer SnapshotBuffers wrote
// (entries entries, tombstones included) after the previous node. The
// buffer is verified entry by entry, once: it must be in canonical form,
// hold exactly entries entries in ID order from key and nothing after them;
// anything else is an error wrapping ErrBadSnapshotNode, never a node that
// fails later. The node keeps buf (the caller must not change it).
func (r *Restorer) AddNodeBuffer(key ID, entries int, buf []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: node %s: %s", ErrBadSnapshotNode, key, fmt.Sprintf(format, args...))
	}
	if entries <= 0 || entries > len(buf)/3 || len(buf) > math.MaxUint32 {
		return bad("%d entries in %d bytes", entries, len(buf))
	}
	if r.last != nil && !r.last.key.Less(key) {
		return bad("after node %s", r.last.key)
	}
	v := bufVerifier{b: buf}
	nmaster := v.count()
	n := &node{key: key, last: key, buf: buf, nmaster: int(nmaster), count: entries}
	n.marks = make([]uint32, 0, (entries+markStride-1)/markStride)
	for i := 0; i < n.nmaster && v.err == nil; i++ {
		v.item()
	}
	if v.err != nil {
		return bad("master: %v", v.err)
	}
	firstLive := true
	for i := 0; i < entries; i++ {
		if i%markStride == 0 {
			n.marks = append(n.marks, uint32(v.p))
		}
		start := v.p
		flags := v.byte()
		ms := v.uvarint()
		seq := v.varint()
		if v.err != nil {
			return bad("entry %d: %v", i, v.err)
		}
		id := ID{key.Ms + ms, key.Seq + uint64(seq)}
		// The seq delta is modular (add writes int64(seq - key seq)); the
		// ms delta cannot wrap for an entry at or after the key.
		if id.Ms < key.Ms || id.Less(key) || (i > 0 && !n.last.Less(id)) {
			return bad("entry %d: ID after %s out of order", i, n.last)
		}
		n.last = id
		switch flags {
		case flagDeleted:
			if c := v.uvarint(); v.err == nil && c != 0 {
				return bad("entry %d: tombstone with %d fields", i, c)
			}
			n.lpBytes += lpTombstoneBytes(key, id)
		case flagSameFields:
			if nmaster == 0 {
				return bad("entry %d: same fields as an empty master", i)
			}
			for j := 0; j < n.nmaster; j++ {
				v.item()
			}
			n.live++
			firstLive = false
		case 0:
			if firstLive {
				return bad("entry %d: the first live entry's fields are not the master's", i)
			}
			items := v.count()
			if v.err == nil && (items == 0 || items%2 != 0) {
				return bad("entry %d: %d fields and values", i, items)
			}
			same := items == 2*nmaster
			p := n.masterStart()
			for j := 0; j < int(items) && v.err == nil; j++ {
				it := v.item()
				if j%2 == 0 && same && v.err == nil {
					var m []byte
					m, p = n.item(p)
					same = bytes.Equal(m, it)
				}
			}
			if same && v.err == nil {
				return bad("entry %d: the master's fields not marked as such", i)
			}
			n.live++
		default:
			return bad("entry %d: flags %#x", i, flags)
		}
		if v.err != nil {
			return bad("entry %d: %v", i, v.err)
		}
		if flags != flagDeleted {
			n.lpBytes += n.lpEntryAt(start)
		}
	}
	if v.p != len(buf) {
		return bad("%d bytes after entry %d", len(buf)-v.p, entries)
	}
	if n.live == 0 && nmaster != 0 {
		return bad("master fields with no live entry")
	}
	n.lpBytes += lpMasterBytes(n.masterNames())
	r.push(n)
	return nil
}

// bufVerifier reads a node buffer, checking every value; err is set at the
// first malformed one and later reads return zero.
type bufVerifier struct {
	b   []byte
	p   int
	err error
}

func (v *bufVerifier) fail(what string) {
	if v.err == nil {
		v.err = fmt.Errorf("%s at byte %d", what, v.p)
	}
}

func (v *bufVerifier) byte() byte {
	if v.err != nil || v.p >= len(v.b) {
		v.fail("cut short")
		return 0
	}
	v.p++
	return v.b[v.p-1]
}

// uvarint reads a uvarint in its shortest form.
func (v *bufVerifier) uvarint() uint64 {
	if v.err != nil {
		return 0
	}
	x, k := binary.Uvarint(v.b[v.p:])
	switch {
	case k <= 0:
		v.fail("bad varint")
		return 0
	case k > 1 && v.b[v.p+k-1] == 0:
		v.fail("varint not in shortest form")
		return 0
	}
	v.p += k
	return x
}

// varint reads a zigzag varint in its shortest form.
func (v *bufVerifier) varint() int64 {
	u := v.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// count reads a count that cannot exceed the bytes left (each counted
// thing takes at least one).
func (v *bufVerifier) count() uint64 {
	c := v.uvarint()
	if v.err == nil && c > uint64(len(v.b)-v.p) {
		v.fail(fmt.Sprintf("count %d", c))
		return 0
	}
	return c
}

// item reads a length-prefixed item.
func (v *bufVerifier) item() []byte {
	l := v.uvarint()
	if v.err == nil && l > uint64(len(v.b)-v.p) {
		v.fail(fmt.Sprintf("item of %d bytes", l))
	}
	if v.err != nil {
		return nil
	}
	e := v.p + int(l)
	it := v.b[v.p:e:e]
	v.p = e
	return it
}
