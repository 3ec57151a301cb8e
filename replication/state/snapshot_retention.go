package state

import (
	"encoding/binary"
	"math"
)

// Snapshot record of retention (tag 17; 18 is reserved for retention too).
// It is written only for a stream whose retention state is not the
// default, so a state that never used retention snapshots byte for byte as
// before it.
//
//	retention  tagRetention | v maxlen (-1 none) | v maxage-ms (0 none) | u8 keepref
//	           | v group-idle-expire-ms (0 none) | v groups-expired | id needed-below
//	           | uv activities | (str group | v last-activity-ms)...
//	           after a key's IDMP record; activities of existing groups, by name
const tagRetention byte = 17

// retention writes a key's retention record when it holds anything.
func (sw *snapWriter) retention(o *Object) {
	r := o.Ret
	if r.isDefault() {
		return
	}
	sw.start(tagRetention)
	sw.b = binary.AppendVarint(sw.b, r.maxLen)
	sw.b = binary.AppendVarint(sw.b, r.maxAgeMs)
	if r.keepRef {
		sw.b = append(sw.b, 1)
	} else {
		sw.b = append(sw.b, 0)
	}
	sw.b = binary.AppendVarint(sw.b, r.idleMs)
	sw.b = binary.AppendVarint(sw.b, r.expired)
	sw.b = appendID(sw.b, r.neededBelow)
	gs := o.Groups.All()
	n := 0
	for _, g := range gs {
		if _, ok := r.activityMs[g.Name]; ok {
			n++
		}
	}
	sw.b = binary.AppendUvarint(sw.b, uint64(n))
	for _, g := range gs {
		if at, ok := r.activityMs[g.Name]; ok {
			sw.b = appendString(sw.b, g.Name)
			sw.b = binary.AppendVarint(sw.b, at)
		}
	}
	sw.end()
}

// readRetention reads a key's retention record, if one follows, into o
// (after its groups).
func (sr *snapReader) readRetention(key string, o *Object) {
	if !sr.peekTag(tagRetention) {
		return
	}
	sr.tag(tagRetention, "retention")
	r := newRetention()
	r.maxLen, r.maxAgeMs = sr.varint(), sr.varint()
	keepRef := sr.byte()
	r.keepRef = keepRef == 1
	r.idleMs, r.expired = sr.varint(), sr.varint()
	r.neededBelow = sr.id()
	n := sr.count("group activity", math.MaxInt32)
	if sr.err == nil && (r.maxLen < -1 || r.maxAgeMs < 0 || keepRef > 1 || r.idleMs < 0 || r.expired < 0 ||
		(r.idleMs == 0 && n > 0)) {
		sr.badf("key %q: retention settings %d, %d, %d, %d, %d, %d activities", key, r.maxLen, r.maxAgeMs,
			keepRef, r.idleMs, r.expired, n)
	}
	if r.idleMs > 0 {
		r.activityMs = make(map[string]int64, n)
	}
	prev := ""
	for i := uint64(0); i < n && sr.err == nil; i++ {
		g := sr.string()
		at := sr.varint()
		grp := o.Groups.Get(g)
		if sr.err == nil && (grp == nil || (i > 0 && g <= prev)) {
			sr.badf("key %q: retention activity of group %q (unknown or out of order)", key, g)
		}
		if sr.err != nil {
			break
		}
		r.activityMs[grp.Name] = at // the group's string (memory.go)
		prev = g
	}
	if sr.err != nil {
		return
	}
	if r.isDefault() {
		sr.badf("key %q: default retention record", key)
		return
	}
	o.Ret = r
}
