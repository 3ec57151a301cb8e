package state

import (
	"encoding/binary"
	"math"

	"streamd/groups"
	"streamd/pel"
)

// The NACK zone record (Redis 8.8 XNACK): a group's zone order is state
// (FIFO by NACK time, not a function of the entries), so it is written
// right after the group's record, only when the zone is not empty; a state
// without NACKed entries snapshots byte-identically to one before XNACK.
//
//	nack zone  tagNackZone | uv count | (id)...   (zone order, oldest NACK first)
//
// The NACKed entries themselves are in the group record (owner "", delivery
// time 0). Tag 13 is reserved for this feature too.
const tagNackZone byte = 12

// nackZone writes g's NACK zone record if the zone is not empty.
func (sw *snapWriter) nackZone(g *groups.Group) {
	n := g.PEL.NackedLen()
	if n == 0 {
		return
	}
	sw.start(tagNackZone)
	sw.b = binary.AppendUvarint(sw.b, uint64(n))
	g.PEL.AscendNacked(func(x pel.NACK) bool {
		sw.b = appendID(sw.b, x.ID)
		if len(sw.b) >= frameMax {
			sw.f.write(sw.b)
			sw.b = sw.b[:0]
		}
		return true
	})
	sw.end()
}

// nackZone reads the NACK zone record that may follow the group record of
// g (the group just read).
func (sr *snapReader) nackZone(key string, g *groups.Group) {
	if sr.err != nil {
		return
	}
	t, err := sr.f.peekByte()
	if err != nil {
		sr.fail(err)
		return
	}
	if t != tagNackZone {
		return
	}
	sr.tag(tagNackZone, "nack zone")
	n := sr.count("nacked", math.MaxInt64)
	if sr.err == nil && n == 0 {
		sr.badf("key %q group %q: empty nack zone record", key, g.Name)
		return
	}
	for i := uint64(0); i < n && sr.err == nil; i++ {
		id := sr.id()
		if sr.err != nil {
			return
		}
		x, ok := g.PEL.Get(id)
		if !ok || x.Consumer != "" || x.DeliveryMs != 0 || g.PEL.Nacked(id) {
			sr.badf("key %q group %q: nacked %s is not an unowned pending entry", key, g.Name, id)
			return
		}
		g.PEL.MarkNacked(id)
	}
}
