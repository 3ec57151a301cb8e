package state

import (
	"encoding/binary"
	"io"
	"math"

	"streamd/groups"
	"streamd/pel"
	"streamd/streams"
)

// ReadSnapshot reads a snapshot written by WriteSnapshot and returns the
// keyspace it holds. It returns a keyspace only when the whole snapshot is
// read and verified: header, every frame's checksum, every record, the end
// frame and the trailer (record count, body length, body CRC-32C), with
// nothing after it. Errors about the bytes match ErrCorruptSnapshot and say
// what is wrong and where ("snapshot truncated: frame cut short at byte
// 1234", "snapshot checksum mismatch in frame at byte 16", "snapshot has
// unknown version 7"); other errors are r's.
func ReadSnapshot(r io.Reader) (*Keyspace, error) {
	sr := &snapReader{f: newFrameReader(r)}
	var h [len(SnapshotMagic) + 4]byte
	if err := sr.f.readRaw(h[:], "header"); err != nil {
		return nil, err
	}
	if string(h[:len(SnapshotMagic)]) != SnapshotMagic {
		return nil, corruptf("not a streamd snapshot: bad magic %q", h[:len(SnapshotMagic)])
	}
	sr.version = binary.BigEndian.Uint32(h[len(SnapshotMagic):])
	if sr.version != SnapshotVersion && sr.version != snapshotVersion1 {
		return nil, corruptf("snapshot has unknown version %d (this build reads versions %d and %d)", sr.version, snapshotVersion1, SnapshotVersion)
	}
	ks, err := sr.body()
	if err != nil {
		return nil, err
	}
	if err := sr.f.finish(sr.records); err != nil {
		return nil, err
	}
	return ks, nil
}

// snapReader decodes the body records.
type snapReader struct {
	f       *frameReader
	version uint32
	records uint64
	err     error // first decoding error; later reads return zero values
}

// fail records err (the first one wins).
func (sr *snapReader) fail(err error) {
	if sr.err == nil {
		sr.err = err
	}
}

func (sr *snapReader) badf(format string, args ...any) {
	args = append(args, sr.f.off)
	sr.fail(corruptf("snapshot corrupt: "+format+" (near byte %d)", args...))
}

func (sr *snapReader) byte() byte {
	if sr.err != nil {
		return 0
	}
	b, err := sr.f.ReadByte()
	if err != nil {
		sr.fail(err)
	}
	return b
}

func (sr *snapReader) uvarint() uint64 {
	var x uint64
	var shift uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		b := sr.byte()
		if sr.err != nil {
			return 0
		}
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				break
			}
			return x | uint64(b)<<shift
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	sr.badf("varint overflows 64 bits")
	return 0
}

func (sr *snapReader) varint() int64 {
	u := sr.uvarint()
	// Zigzag, as binary.AppendVarint writes it.
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (sr *snapReader) id() streams.ID {
	ms := sr.uvarint()
	return streams.ID{Ms: ms, Seq: sr.uvarint()}
}

// count reads a count and checks it against a bound.
func (sr *snapReader) count(what string, limit uint64) uint64 {
	n := sr.uvarint()
	if n > limit {
		sr.badf("%s count %d", what, n)
		return 0
	}
	return n
}

func (sr *snapReader) bytes() []byte {
	n := sr.uvarint()
	if sr.err != nil {
		return nil
	}
	if n > math.MaxInt32 {
		sr.badf("string length %d", n)
		return nil
	}
	p, err := sr.f.readBytes(n)
	if err != nil {
		sr.fail(err)
	}
	return p
}

func (sr *snapReader) string() string { return string(sr.bytes()) }

// tag reads a record tag and checks it is want.
func (sr *snapReader) tag(want byte, what string) {
	if t := sr.byte(); sr.err == nil && t != want {
		sr.badf("expected a %s record, found tag %d", what, t)
	}
	if sr.err == nil {
		sr.records++
	}
}

// body reads the records up to the end tag.
func (sr *snapReader) body() (*Keyspace, error) {
	ks := New()
	sr.tag(tagSettings, "settings")
	nodeMax := sr.varint()
	if sr.err == nil && (nodeMax < 0 || nodeMax > math.MaxInt32) {
		sr.badf("stream-node-max-entries %d", nodeMax)
	}
	ks.nodeMax = int(nodeMax)
	ks.nodeMaxBytes = sr.varint()
	ks.lastNow = sr.varint()
	if sr.version >= 2 {
		level := sr.uvarint()
		if sr.err == nil && level > CurrentLevel {
			sr.badf("engine level %d (this build runs level %d)", level, CurrentLevel)
		}
		ks.level = int64(level)
	}
	prevDB := -1
	idmpDefaults := false
	for sr.err == nil {
		t := sr.byte()
		if sr.err != nil || t == tagEnd {
			break
		}
		if t == tagACL && prevDB == -1 && ks.acl == nil {
			sr.readACL(ks)
			continue
		}
		if t == tagIDMPDefaults && prevDB == -1 && !idmpDefaults {
			idmpDefaults = true
			sr.readIDMPDefaults(ks)
			continue
		}
		if t != tagDB {
			sr.badf("expected a database record, found tag %d", t)
			break
		}
		sr.records++
		i := sr.uvarint()
		if sr.err == nil && (i >= NumDatabases || int(i) <= prevDB) {
			sr.badf("database %d after database %d", i, prevDB)
		}
		prevDB = int(i)
		n := sr.count("key", math.MaxInt64)
		if sr.err == nil && n == 0 {
			sr.badf("database %d with no keys", i)
		}
		var prev string
		for k := uint64(0); k < n && sr.err == nil; k++ {
			name := sr.key(ks.dbs[i])
			if sr.err == nil && k > 0 && name <= prev {
				sr.badf("key %q after key %q in database %d", name, prev, i)
			}
			prev = name
		}
	}
	if sr.err != nil {
		return nil, sr.err
	}
	return ks, nil
}

// key reads a key record with its nodes and groups into d and returns the
// key.
func (sr *snapReader) key(d *database) string {
	sr.tag(tagKey, "key")
	name := sr.string()
	var deadline int64
	has := sr.byte()
	switch {
	case sr.err != nil:
	case has == 1:
		deadline = sr.varint()
	case has != 0:
		sr.badf("deadline flag %d for key %q", has, name)
	}
	var m streams.SnapshotMeta
	m.LastID = sr.id()
	m.EntriesAdded = sr.varint()
	m.MaxDeletedID = sr.id()
	m.FirstID = sr.id()
	m.Tail = int(sr.count("tail", math.MaxInt32)) - 1
	nodes := sr.count("node", math.MaxInt32)
	ngroups := sr.count("group", math.MaxInt32)
	if sr.err != nil {
		return ""
	}
	rs := streams.NewRestorer(m)
	for i := uint64(0); i < nodes && sr.err == nil; i++ {
		if sr.version >= 2 {
			sr.nodeBuf(rs)
		} else {
			sr.node(rs)
		}
	}
	if sr.err != nil {
		return ""
	}
	s, err := rs.Finish()
	if err != nil {
		sr.badf("key %q: %v", name, err)
		return ""
	}
	if _, dup := d.keys[name]; dup {
		sr.badf("key %q twice", name)
		return ""
	}
	o := &Object{Stream: s}
	for i := uint64(0); i < ngroups && sr.err == nil; i++ {
		if g := sr.group(name, o); g != nil {
			sr.nackZone(name, g)
			sr.groupConfig(name, g)
		}
	}
	sr.readIDMP(name, o)
	sr.readAckLevel(name, o)
	sr.readRetention(name, o)
	if sr.err != nil {
		return ""
	}
	d.add(name, o)
	if has == 1 {
		d.expires[name] = deadline
	}
	return name
}

// nodeBuf reads a version 2 node record into rs: the buffer is verified
// and kept as the node's.
func (sr *snapReader) nodeBuf(rs *streams.Restorer) {
	sr.tag(tagNodeBuf, "node")
	key := sr.id()
	n := sr.count("node entry", math.MaxInt32)
	buf := sr.bytes()
	if sr.err != nil {
		return
	}
	if err := rs.AddNodeBuffer(key, int(n), buf); err != nil {
		sr.badf("%v", err)
	}
}

// node reads a version 1 node record into rs. Its fields share one buffer,
// the blob, capped so that an append to a field never reaches its
// neighbour.
func (sr *snapReader) node(rs *streams.Restorer) {
	sr.tag(tagNode, "node")
	key := sr.id()
	n := sr.uvarint()
	blob := sr.bytes()
	if sr.err != nil {
		return
	}
	// Every entry takes at least 3 bytes (flags, ms, seq).
	if n == 0 || n > uint64(len(blob))/3 {
		sr.badf("node %s: %d entries in %d bytes", key, n, len(blob))
		return
	}
	entries := make([]streams.Entry, n)
	deleted := make([]bool, n)
	d := blobDecoder{b: blob}
	prevMs := key.Ms
	var slab [][]byte
	for i := range entries {
		flags := d.byte()
		ms := d.uvarint()
		if flags&entryMsDelta != 0 {
			ms += prevMs
			if ms < prevMs {
				d.bad = true
			}
		}
		entries[i].ID = streams.ID{Ms: ms, Seq: d.uvarint()}
		prevMs = ms
		if flags&^(entryDeleted|entryMsDelta) != 0 {
			d.bad = true
		}
		if flags&entryDeleted != 0 {
			deleted[i] = true
			continue
		}
		nf := d.uvarint()
		if nf > uint64(len(d.b)) { // every field takes at least a byte
			d.bad = true
		}
		if d.bad {
			break
		}
		// The field slices of a node's entries share slabs (one
		// allocation per node, not per entry), capped per entry.
		if uint64(cap(slab)-len(slab)) < nf {
			slab = make([][]byte, 0, max(nf, 2*(n-uint64(i))))
		}
		fields := slab[len(slab) : len(slab)+int(nf) : len(slab)+int(nf)]
		slab = slab[:len(slab)+int(nf)]
		for j := range fields {
			fields[j] = d.bytes()
		}
		entries[i].Fields = fields
	}
	if d.bad || len(d.b) > 0 {
		sr.badf("node %s: bad entry data", key)
		return
	}
	if err := rs.AddNode(key, entries, deleted); err != nil {
		sr.badf("%v", err)
	}
}

// blobDecoder decodes a node blob; bad is set on any malformed value.
type blobDecoder struct {
	b   []byte
	bad bool
}

func (d *blobDecoder) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *blobDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *blobDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

// group reads a group record into o and returns the group (nil on error).
func (sr *snapReader) group(key string, o *Object) *groups.Group {
	sr.tag(tagGroup, "group")
	name := sr.string()
	lastID := sr.id()
	entriesRead := sr.varint()
	if sr.err != nil {
		return nil
	}
	if n := o.Groups.Len(); n > 0 && o.Groups.All()[n-1].Name >= name {
		sr.badf("key %q: group %q out of order", key, name)
		return nil
	}
	g := o.Groups.Create(name, lastID, entriesRead)
	nc := sr.count("consumer", math.MaxInt32)
	var names []string
	for i := uint64(0); i < nc && sr.err == nil; i++ {
		cname := sr.string()
		seen := sr.varint()
		active := sr.varint()
		if sr.err != nil {
			return nil
		}
		if len(names) > 0 && names[len(names)-1] >= cname {
			sr.badf("key %q group %q: consumer %q out of order", key, name, cname)
			return nil
		}
		c := g.CreateConsumer(cname, seen)
		c.ActiveMs = active
		names = append(names, cname)
	}
	np := sr.count("pending", math.MaxInt64)
	var prev streams.ID
	for i := uint64(0); i < np && sr.err == nil; i++ {
		ms := sr.uvarint() + prev.Ms
		id := streams.ID{Ms: ms, Seq: sr.uvarint()}
		owner := sr.count("owner index", uint64(len(names)))
		var cname string
		if owner < uint64(len(names)) {
			cname = names[owner]
		} else {
			cname = sr.string()
		}
		n := pel.NACK{ID: id, Consumer: cname, DeliveryMs: sr.varint(), DeliveryCount: sr.varint()}
		if sr.err != nil {
			return nil
		}
		if (i > 0 && !prev.Less(id)) || id.Ms < prev.Ms {
			sr.badf("key %q group %q: pending %s after %s", key, name, id, prev)
			return nil
		}
		g.PEL.Put(n)
		prev = id
	}
	if sr.err != nil {
		return nil
	}
	return g
}
