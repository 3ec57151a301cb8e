package state

import (
	"encoding/binary"
	"math"
)

// Snapshot records of idempotent production (tags 14 and 15). Both are
// written only when they hold something other than the defaults, so a
// state that never used IDMP snapshots byte for byte as before them.
//
//	idmp          tagIDMP | v duration | v maxsize | v iids-added | v iids-duplicates
//	              | uv producers | (str pid | uv iids | (str iid | id | v recorded-ms)...)...
//	              after a key's group records; producers by pid, iids oldest first
//	idmpDefaults  tagIDMPDefaults | v stream-idmp-duration | v stream-idmp-maxsize
//	              after the settings (and ACL) record, before the databases
const (
	tagIDMP         byte = 14
	tagIDMPDefaults byte = 15
)

// writeIDMPDefaults writes the keyspace's IDMP settings when not Redis's.
func (sw *snapWriter) writeIDMPDefaults(ks *Keyspace) {
	if ks.idmpDuration == DefaultIDMPDuration && ks.idmpMaxSize == DefaultIDMPMaxSize {
		return
	}
	sw.start(tagIDMPDefaults)
	sw.b = binary.AppendVarint(sw.b, ks.idmpDuration)
	sw.b = binary.AppendVarint(sw.b, ks.idmpMaxSize)
	sw.end()
}

// idmp writes a key's IDMP record when it holds anything.
func (sw *snapWriter) idmp(m *IDMP) {
	if m.isDefault() {
		return
	}
	sw.start(tagIDMP)
	sw.b = binary.AppendVarint(sw.b, m.durationS)
	sw.b = binary.AppendVarint(sw.b, m.maxSize)
	sw.b = binary.AppendVarint(sw.b, m.added)
	sw.b = binary.AppendVarint(sw.b, m.duplicates)
	ps := m.sortedProducers()
	sw.b = binary.AppendUvarint(sw.b, uint64(len(ps)))
	for _, p := range ps {
		sw.b = appendString(sw.b, p.pid)
		sw.b = binary.AppendUvarint(sw.b, uint64(len(p.iids)))
		p.iidsOf(func(r *iidRec) {
			sw.b = appendString(sw.b, r.iid)
			sw.b = appendID(sw.b, r.id)
			sw.b = binary.AppendVarint(sw.b, r.atMs)
			if len(sw.b) >= frameMax {
				sw.f.write(sw.b)
				sw.b = sw.b[:0]
			}
		})
	}
	sw.end()
}

// peekTag reports whether the next record has tag t.
func (sr *snapReader) peekTag(t byte) bool {
	if sr.err != nil {
		return false
	}
	b, err := sr.f.peekByte()
	if err != nil {
		sr.fail(err)
		return false
	}
	return b == t
}

// readIDMPDefaults reads the keyspace's IDMP settings (the tag is read).
func (sr *snapReader) readIDMPDefaults(ks *Keyspace) {
	sr.records++
	d, s := sr.varint(), sr.varint()
	if sr.err == nil && !validIDMP(d, s) {
		sr.badf("IDMP settings %d, %d", d, s)
		return
	}
	ks.idmpDuration, ks.idmpMaxSize = d, s
}

func validIDMP(durationS, maxSize int64) bool {
	return durationS >= 1 && durationS <= MaxIDMPDuration && maxSize >= 1 && maxSize <= MaxIDMPMaxSize
}

// readIDMP reads a key's IDMP record, if one follows, into o.
func (sr *snapReader) readIDMP(key string, o *Object) {
	if !sr.peekTag(tagIDMP) {
		return
	}
	sr.tag(tagIDMP, "idmp")
	d, s := sr.varint(), sr.varint()
	added, dups := sr.varint(), sr.varint()
	np := sr.count("producer", math.MaxInt32)
	if sr.err == nil && (!validIDMP(d, s) || added < 0 || dups < 0) {
		sr.badf("key %q: IDMP settings %d, %d, counters %d, %d", key, d, s, added, dups)
	}
	var prods []restoredProducer
	for i := uint64(0); i < np && sr.err == nil; i++ {
		p := restoredProducer{pid: sr.string()}
		n := sr.count("iid", uint64(s))
		for j := uint64(0); j < n && sr.err == nil; j++ {
			iid := sr.string()
			id := sr.id()
			p.iids = append(p.iids, restoredIID{iid: iid, id: id, atMs: sr.varint()})
		}
		if sr.err == nil && (p.pid == "" || (len(prods) > 0 && prods[len(prods)-1].pid >= p.pid)) {
			sr.badf("key %q: IDMP producer %q out of order", key, p.pid)
		}
		prods = append(prods, p)
	}
	if sr.err != nil {
		return
	}
	m, ok := restoreIDMP(d, s, added, dups, prods)
	if !ok {
		sr.badf("key %q: bad IDMP producers", key)
		return
	}
	o.IDMP = m
}
