package streams

import (
	"bytes"
	"encoding/binary"
)

// node is one node of the stream, Redis's listpack: its entries packed in
// one byte buffer, in ID order, appended only at the end, with deleted
// entries kept as tombstones (a flag) until the whole node goes. key is the
// ID of the first entry appended (Redis's master ID), the node's key in the
// tree.
//
// The buffer holds the master entry's field names, then the entries:
//
//	master  uvarint(n) | n × (uvarint(len) field)
//	entry   flags | uvarint(ms - key.Ms) | varint(seq - key.Seq) | data
//	data    same fields as the master: n × (uvarint(len) value)
//	        else: uvarint(items) | items × (uvarint(len) bytes)
//
// Bytes once written are never changed except an entry's flags byte, and
// the buffer is only appended to (or replaced by a new one), so the value
// slices Entry carries may alias it.
type node struct {
	key     ID
	last    ID       // the last entry's ID, deleted or not
	buf     []byte   // master, then entries
	marks   []uint32 // offset of entries 0, markStride, 2×markStride, ...
	count   int      // entries, live or deleted
	live    int      // entries not deleted (Redis's "count" field)
	nmaster int      // master field names
	lpBytes int64    // Redis's listpack size for the node, less its count fields
}

// Entry flag bits.
const (
	flagDeleted    = 1
	flagSameFields = 2
)

// markStride is how many entries lie between two offsets of node.marks.
const markStride = 16

// newNode returns an empty node keyed by id whose master holds the field
// names names, its buffer sized for sizeHint bytes.
func newNode(id ID, names [][]byte, sizeHint int) *node {
	n := &node{key: id, last: id, nmaster: len(names)}
	n.buf = make([]byte, 0, max(sizeHint, 16))
	n.buf = binary.AppendUvarint(n.buf, uint64(n.nmaster))
	for _, f := range names {
		n.buf = appendItem(n.buf, f)
	}
	n.lpBytes = lpMasterBytes(names)
	return n
}

func appendItem(b, item []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(item)))
	return append(b, item...)
}

// sameFields reports whether fields names the master's fields in order.
func (n *node) sameFields(fields [][]byte) bool {
	if len(fields) != 2*n.nmaster {
		return false
	}
	p := n.masterStart()
	for i := 0; i < n.nmaster; i++ {
		var f []byte
		f, p = n.item(p)
		if !bytes.Equal(f, fields[2*i]) {
			return false
		}
	}
	return true
}

// masterStart returns the offset of the first master field name.
func (n *node) masterStart() int {
	_, k := binary.Uvarint(n.buf)
	return k
}

// item reads the length-prefixed item at p, capped so that appending to it
// never writes into the buffer, and returns it and the offset after it.
func (n *node) item(p int) ([]byte, int) {
	l, k := binary.Uvarint(n.buf[p:])
	p += k
	e := p + int(l)
	return n.buf[p:e:e], e
}

// skipItem returns the offset after the length-prefixed item at p.
func (n *node) skipItem(p int) int {
	l, k := binary.Uvarint(n.buf[p:])
	return p + k + int(l)
}

// add appends an entry (deleted: a tombstone without fields, as a snapshot
// restores them).
func (n *node) add(id ID, fields [][]byte, deleted bool) {
	if n.count%markStride == 0 {
		n.marks = append(n.marks, uint32(len(n.buf)))
	}
	var flags byte
	same := !deleted && n.sameFields(fields)
	if same {
		flags |= flagSameFields
	}
	if deleted {
		flags |= flagDeleted
		fields = nil
	}
	n.buf = append(n.buf, flags)
	n.buf = binary.AppendUvarint(n.buf, id.Ms-n.key.Ms)
	n.buf = binary.AppendVarint(n.buf, int64(id.Seq-n.key.Seq))
	if same {
		for i := 1; i < len(fields); i += 2 {
			n.buf = appendItem(n.buf, fields[i])
		}
	} else {
		n.buf = binary.AppendUvarint(n.buf, uint64(len(fields)))
		for _, f := range fields {
			n.buf = appendItem(n.buf, f)
		}
	}
	n.count++
	if !deleted {
		n.live++
		n.lpBytes += lpEntryBytes(n.key, id, fields, same)
	} else {
		n.lpBytes += lpTombstoneBytes(n.key, id)
	}
	n.last = id
}

// id decodes the ID of the entry at p and returns the offset of its data.
func (n *node) id(p int) (ID, int) {
	p++ // flags
	ms, k := binary.Uvarint(n.buf[p:])
	p += k
	seq, k := binary.Varint(n.buf[p:])
	return ID{n.key.Ms + ms, n.key.Seq + uint64(seq)}, p + k
}

// next returns the offset of the entry after the one at p.
func (n *node) next(p int) int {
	flags := n.buf[p]
	_, p = n.id(p)
	items := n.nmaster
	if flags&flagSameFields == 0 {
		c, k := binary.Uvarint(n.buf[p:])
		p += k
		items = int(c)
	}
	for i := 0; i < items; i++ {
		p = n.skipItem(p)
	}
	return p
}

// deletedAt reports whether the entry at p is a tombstone.
func (n *node) deletedAt(p int) bool { return n.buf[p]&flagDeleted != 0 }

// entry decodes the entry at p (a tombstone has nil Fields). Its values
// alias the buffer; field names of same-fields entries alias the master.
func (n *node) entry(p int) Entry { return n.entryIn(p, nil) }

// entryIn is entry taking the Fields slice from *slab when slab is not nil
// (one allocation for many entries; each entry's Fields is capped).
func (n *node) entryIn(p int, slab *[][]byte) Entry {
	flags := n.buf[p]
	id, p := n.id(p)
	e := Entry{ID: id}
	if flags&flagDeleted != 0 {
		return e
	}
	items := 2 * n.nmaster
	if flags&flagSameFields == 0 {
		c, k := binary.Uvarint(n.buf[p:])
		p += k
		items = int(c)
	}
	if slab == nil || items > 64 {
		e.Fields = make([][]byte, items)
	} else {
		if cap(*slab)-len(*slab) < items {
			// Small first (short ranges), larger as the range goes on.
			*slab = make([][]byte, 0, min(max(2*cap(*slab), 16, items), 256))
		}
		l := len(*slab)
		*slab = (*slab)[:l+items]
		e.Fields = (*slab)[l : l+items : l+items]
	}
	if flags&flagSameFields != 0 {
		m := n.masterStart()
		for i := 0; i < n.nmaster; i++ {
			e.Fields[2*i], m = n.item(m)
			e.Fields[2*i+1], p = n.item(p)
		}
		return e
	}
	for i := range e.Fields {
		e.Fields[i], p = n.item(p)
	}
	return e
}

// seek returns the ordinal and offset of the first entry with ID >= id
// (count and the buffer's length if there is none).
func (n *node) seek(id ID) (int, int) {
	// The last mark whose entry is < id; entries before it are all < id.
	lo, hi := 0, len(n.marks)
	for lo < hi {
		m := (lo + hi) / 2
		if e, _ := n.id(int(n.marks[m])); e.Less(id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, int(n.marks[0])
	}
	i, p := (lo-1)*markStride, int(n.marks[lo-1])
	for ; i < n.count; i, p = i+1, n.next(p) {
		if e, _ := n.id(p); !e.Less(id) {
			break
		}
	}
	return i, p
}

// offsets appends the offsets of entries [from, to) to dst.
func (n *node) offsets(dst []int, from, to int) []int {
	k := from / markStride
	i, p := k*markStride, int(n.marks[k])
	for ; i < to; i, p = i+1, n.next(p) {
		if i >= from {
			dst = append(dst, p)
		}
	}
	return dst
}

// markDeleted tombstones the entry at p and reports whether it was live.
func (n *node) markDeleted(p int) bool {
	if n.deletedAt(p) {
		return false
	}
	id, _ := n.id(p)
	n.lpBytes -= n.lpEntryAt(p)
	n.lpBytes += lpTombstoneBytes(n.key, id)
	n.buf[p] |= flagDeleted
	n.live--
	return true
}

// lpEntryAt is lpEntryBytes for the live entry at p, read from the buffer.
func (n *node) lpEntryAt(p int) int64 {
	same := n.buf[p]&flagSameFields != 0
	id, p := n.id(p)
	var items int
	var b int64
	var item []byte
	if same {
		items = 2 * n.nmaster
		for i := 0; i < n.nmaster; i++ {
			item, p = n.item(p)
			b += lpStrElem(item)
		}
	} else {
		c, k := binary.Uvarint(n.buf[p:])
		p += k
		items = int(c)
		for i := 0; i < items; i++ {
			item, p = n.item(p)
			b += lpStrElem(item)
		}
	}
	return b + lpEntryFixed(n.key, id, items, same)
}

// clone returns a copy of n sharing no mutable state with it.
func (n *node) clone() *node {
	c := *n
	c.buf = append([]byte(nil), n.buf...)
	c.marks = append([]uint32(nil), n.marks...)
	return &c
}

// seal trims the buffer's spare capacity once no more appends come.
func (n *node) seal() {
	if cap(n.buf)-len(n.buf) > len(n.buf)/16 {
		n.buf = append([]byte(nil), n.buf...)
	}
	if cap(n.marks) > len(n.marks) {
		n.marks = append([]uint32(nil), n.marks...)
	}
}

// rebuild keeps the first k entries in a new buffer (slices aliasing the
// old one stay as they were) whose master holds names.
func (n *node) rebuild(k int, names [][]byte) {
	offs := n.offsets(nil, 0, k)
	r := newNode(n.key, names, len(n.buf))
	for _, p := range offs {
		e := n.entry(p)
		r.add(e.ID, e.Fields, n.deletedAt(p))
	}
	*n = *r
}

// masterNames returns the master's field names.
func (n *node) masterNames() [][]byte {
	names := make([][]byte, n.nmaster)
	p := n.masterStart()
	for i := range names {
		names[i], p = n.item(p)
	}
	return names
}

// remaster keeps the master's field names those of the first live entry
// (none when there is none). Redis keeps the first appended entry's names
// even once it is deleted; a snapshot does not hold a deleted entry's
// fields, so here the master follows what a restored node can know, and
// every replica sizes the node (stream-node-max-bytes) the same. It is
// called when the entry at offset at was deleted or appended.
func (n *node) remaster(at int) {
	var first [][]byte
	for i, p := 0, int(n.marks[0]); i < n.count; i, p = i+1, n.next(p) {
		if p < at && !n.deletedAt(p) {
			return // the first live entry is before at: unchanged
		}
		if !n.deletedAt(p) {
			first = fieldNames(n.entry(p).Fields)
			break
		}
	}
	old := n.masterNames()
	same := len(old) == len(first)
	for i := 0; same && i < len(old); i++ {
		same = bytes.Equal(old[i], first[i])
	}
	if !same {
		n.rebuild(n.count, first)
	}
}

// fieldNames returns the field names of fields (its even positions), or
// none when fields is not made of pairs.
func fieldNames(fields [][]byte) [][]byte {
	if len(fields)%2 != 0 {
		return nil
	}
	names := make([][]byte, len(fields)/2)
	for i := range names {
		names[i] = fields[2*i]
	}
	return names
}
