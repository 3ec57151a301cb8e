package state

import (
	"encoding/binary"
	"io"
	"maps"
	"sort"

	"streamd/pel"
	"streamd/streams"
)

// Snapshot format, version 2. Canonical: databases in order, keys sorted
// byte-wise, nodes by key, groups and consumers by name, pending entries by
// ID, so two equal states give byte-equal snapshots.
//
//	header   "STREAMD-SNAP" | version u32 (big-endian)
//	body     frames (snapshot_frame.go) carrying the records below
//	end      u32 0
//	trailer  records u64 | body length u64 | body CRC-32C u32
//
// Body records (uv = uvarint, v = zigzag varint, id = uv ms, uv seq,
// str = uv length + bytes); every tagged record counts in the trailer:
//
//	settings  tagSettings | v stream-node-max-entries | v stream-node-max-bytes | v lastNow
//	          | uv engine level (see level.go)
//	acl       tagACL | uv users | (str name | uv rules | str rule...)...
//	          (only when there are users: see acl.go)
//	database  tagDB | uv index | uv keys       (only databases with keys)
//	key       tagKey | str key | u8 has-deadline [| v deadline]
//	          | id last-id | v entries-added | id max-deleted-id | id first-id
//	          | uv tail node index + 1 (0 = no node) | uv nodes | uv groups
//	node      tagNodeBuf | id node key | uv entries | uv buffer length | buffer
//	          (the node's buffer as the stream keeps it, in the canonical form
//	          of streams/snapshot_buf.go; verified entry by entry on load)
//	group     tagGroup | str name | id last-delivered-id | v entries-read
//	          | uv consumers | (str name | v seen-ms | v active-ms)...
//	          | uv pending | (uv ms minus the previous pending ms | uv seq
//	          | uv owner index [| str owner when index = consumers]
//	          | v delivery-ms | v delivery-count)...
//	end       tagEnd
//
// A key's node and group records follow its key record. Records of later
// features (snapshot_idmp.go) are written only when not at their defaults.
//
// Version 1 (read, and written only by tests) differs in two records: the
// settings record has no engine level (level 0), and nodes are tagNode
// records that re-encode every entry:
//
//	node      tagNode | id node key | uv entries | uv blob length | blob
//	          blob, per entry: u8 flags (entryDeleted, entryMsDelta) | uv ms
//	          (minus the previous entry's ms, the node key's for the first,
//	          when entryMsDelta) | uv seq [| uv fields | str field...] (live)

// SnapshotMagic starts every snapshot.
const SnapshotMagic = "STREAMD-SNAP"

// SnapshotVersion is the format version WriteSnapshot writes; ReadSnapshot
// reads it and version 1.
const SnapshotVersion = 2

// snapshotVersion1 is the format of releases before node buffers.
const snapshotVersion1 = 1

// Record tags.
const (
	tagEnd      byte = 0
	tagSettings byte = 1
	tagDB       byte = 2
	tagKey      byte = 3
	tagNode     byte = 4
	tagGroup    byte = 5
	tagACL      byte = 6
	tagNodeBuf  byte = 7
)

// Node entry flags.
const (
	entryDeleted byte = 1 << iota
	entryMsDelta
)

// snapWriter encodes records into a frameWriter.
type snapWriter struct {
	f       *frameWriter
	version uint32
	b       []byte // the record being built
	blob    []byte // the node blob being built
	records uint64
}

// WriteSnapshot writes the whole state to w in the canonical snapshot
// format. It only reads the keyspace, so it may run alongside Queries (under
// the read lock) or on a Clone without any lock. It returns w's first error.
func (ks *Keyspace) WriteSnapshot(w io.Writer) error {
	return ks.writeSnapshot(w, SnapshotVersion)
}

// writeSnapshot writes the snapshot in format version (SnapshotVersion, or
// snapshotVersion1 for tests of the upgrade path: version 1 cannot hold an
// engine level above 0).
func (ks *Keyspace) writeSnapshot(w io.Writer, version uint32) error {
	sw := &snapWriter{f: newFrameWriter(w), version: version}
	var h [len(SnapshotMagic) + 4]byte
	copy(h[:], SnapshotMagic)
	binary.BigEndian.PutUint32(h[len(SnapshotMagic):], version)
	sw.f.raw(h[:])

	sw.start(tagSettings)
	sw.b = binary.AppendVarint(sw.b, int64(ks.nodeMax))
	sw.b = binary.AppendVarint(sw.b, ks.nodeMaxBytes)
	sw.b = binary.AppendVarint(sw.b, ks.lastNow)
	if version >= 2 {
		sw.b = binary.AppendUvarint(sw.b, uint64(ks.level))
	}
	sw.end()
	sw.writeACL(ks.acl)
	sw.writeIDMPDefaults(ks)

	var keys []string
	for i, d := range ks.dbs {
		if len(d.keys) == 0 {
			continue
		}
		keys = keys[:0]
		for k := range d.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sw.start(tagDB)
		sw.b = binary.AppendUvarint(sw.b, uint64(i))
		sw.b = binary.AppendUvarint(sw.b, uint64(len(keys)))
		sw.end()
		for _, k := range keys {
			deadline, has := d.expires[k]
			sw.key(k, d.keys[k], deadline, has)
			if sw.f.err != nil {
				return sw.f.err
			}
		}
	}
	sw.b = append(sw.b[:0], tagEnd)
	sw.f.write(sw.b)
	return sw.f.finish(sw.records)
}

// start begins a tagged record.
func (sw *snapWriter) start(tag byte) {
	sw.b = append(sw.b[:0], tag)
	sw.records++
}

// end writes the record built in b.
func (sw *snapWriter) end() { sw.f.write(sw.b) }

func appendID(b []byte, id streams.ID) []byte {
	b = binary.AppendUvarint(b, id.Ms)
	return binary.AppendUvarint(b, id.Seq)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// key writes a key record and its node and group records.
func (sw *snapWriter) key(name string, o *Object, deadline int64, hasDeadline bool) {
	s := o.Stream
	m := s.SnapshotMeta()
	sw.start(tagKey)
	sw.b = appendString(sw.b, name)
	if hasDeadline {
		sw.b = append(sw.b, 1)
		sw.b = binary.AppendVarint(sw.b, deadline)
	} else {
		sw.b = append(sw.b, 0)
	}
	sw.b = appendID(sw.b, m.LastID)
	sw.b = binary.AppendVarint(sw.b, m.EntriesAdded)
	sw.b = appendID(sw.b, m.MaxDeletedID)
	sw.b = appendID(sw.b, m.FirstID)
	sw.b = binary.AppendUvarint(sw.b, uint64(m.Tail+1))
	sw.b = binary.AppendUvarint(sw.b, uint64(s.NodeCount()))
	sw.b = binary.AppendUvarint(sw.b, uint64(o.Groups.Len()))
	sw.end()

	if sw.version >= 2 {
		s.SnapshotBuffers(func(key streams.ID, entries int, buf []byte) bool {
			sw.start(tagNodeBuf)
			sw.b = appendID(sw.b, key)
			sw.b = binary.AppendUvarint(sw.b, uint64(entries))
			sw.b = binary.AppendUvarint(sw.b, uint64(len(buf)))
			sw.end()
			sw.f.write(buf)
			return sw.f.err == nil
		})
	} else {
		s.SnapshotNodes(func(key streams.ID, entries []streams.Entry, deleted []bool) bool {
			sw.node(key, entries, deleted)
			return sw.f.err == nil
		})
	}
	for _, g := range o.Groups.All() {
		sw.start(tagGroup)
		sw.b = appendString(sw.b, g.Name)
		sw.b = appendID(sw.b, g.LastID)
		sw.b = binary.AppendVarint(sw.b, g.EntriesRead)
		cs := g.Consumers()
		sw.b = binary.AppendUvarint(sw.b, uint64(len(cs)))
		for _, c := range cs {
			sw.b = appendString(sw.b, c.Name)
			sw.b = binary.AppendVarint(sw.b, c.SeenMs)
			sw.b = binary.AppendVarint(sw.b, c.ActiveMs)
		}
		sw.b = binary.AppendUvarint(sw.b, uint64(g.PEL.Len()))
		var prevMs uint64
		g.PEL.Ascend(streams.MinID, func(n pel.NACK) bool {
			sw.b = binary.AppendUvarint(sw.b, n.ID.Ms-prevMs)
			sw.b = binary.AppendUvarint(sw.b, n.ID.Seq)
			prevMs = n.ID.Ms
			// Owners are consumers of the group (Group.Check); the name
			// is written out only if that ever does not hold.
			i := sort.Search(len(cs), func(i int) bool { return cs[i].Name >= n.Consumer })
			if i < len(cs) && cs[i].Name == n.Consumer {
				sw.b = binary.AppendUvarint(sw.b, uint64(i))
			} else {
				sw.b = binary.AppendUvarint(sw.b, uint64(len(cs)))
				sw.b = appendString(sw.b, n.Consumer)
			}
			sw.b = binary.AppendVarint(sw.b, n.DeliveryMs)
			sw.b = binary.AppendVarint(sw.b, n.DeliveryCount)
			if len(sw.b) >= frameMax {
				// Keep the record buffer small for big PELs.
				sw.f.write(sw.b)
				sw.b = sw.b[:0]
			}
			return true
		})
		sw.end()
		sw.nackZone(g)
		sw.groupConfig(g)
	}
	sw.idmp(o.IDMP)
	sw.ackLevel(o.AckLevel)
	sw.retention(o)
}

// node writes a version 1 node record.
func (sw *snapWriter) node(key streams.ID, entries []streams.Entry, deleted []bool) {
	blob := sw.blob[:0]
	prevMs := key.Ms
	for i, e := range entries {
		flags := byte(0)
		if deleted[i] {
			flags |= entryDeleted
		}
		ms := e.ID.Ms
		if ms >= prevMs {
			flags |= entryMsDelta
			ms -= prevMs
		}
		blob = append(blob, flags)
		blob = binary.AppendUvarint(blob, ms)
		blob = binary.AppendUvarint(blob, e.ID.Seq)
		prevMs = e.ID.Ms
		if !deleted[i] {
			blob = binary.AppendUvarint(blob, uint64(len(e.Fields)))
			for _, f := range e.Fields {
				blob = appendBytes(blob, f)
			}
		}
	}
	sw.blob = blob
	sw.start(tagNode)
	sw.b = appendID(sw.b, key)
	sw.b = binary.AppendUvarint(sw.b, uint64(len(entries)))
	sw.b = binary.AppendUvarint(sw.b, uint64(len(blob)))
	sw.end()
	sw.f.write(blob)
}

// Clone returns a copy of the keyspace that shares no mutable state with ks,
// so a snapshot can be written from it while ks keeps applying commands (the
// FSM clones under its lock and writes afterwards). It costs O(entries)
// memory copying for streams (entry headers; field bytes are shared, being
// never changed) and O(keys); consumer group PELs and the SCAN order are
// copy-on-write btree clones. Like WriteSnapshot, it only reads ks.
func (ks *Keyspace) Clone() *Keyspace {
	c := &Keyspace{nodeMax: ks.nodeMax, nodeMaxBytes: ks.nodeMaxBytes, level: ks.level, lastNow: ks.lastNow, counters: &Counters{}, acl: cloneACL(ks.acl),
		idmpDuration: ks.idmpDuration, idmpMaxSize: ks.idmpMaxSize}
	for i, d := range ks.dbs {
		nd := &database{
			keys:    make(map[string]*Object, len(d.keys)),
			expires: maps.Clone(d.expires),
			order:   d.order.Clone(),
		}
		for k, o := range d.keys {
			co := &Object{Stream: o.Stream.CloneForSnapshot(), Groups: o.Groups.Clone(), IDMP: o.IDMP.clone(), Ret: o.Ret.clone(), AckLevel: o.AckLevel}
			co.mem = keyMemory(k, co) // the copies' capacities differ
			nd.mem += co.mem
			nd.keys[k] = co
		}
		c.dbs[i] = nd
	}
	return c
}
