package pel

import (
	"fmt"

	"streamd/streams"
)

// The NACK zone (Redis 8.8's XNACK): entries given back to the group. A
// NACKed entry stays in the group tree with no owner (Consumer "") and
// delivery time 0, and has a place in the zone, a FIFO by NACK time that
// XREADGROUP ... CLAIM serves before any idle entry. The zone order is
// state (it is not a function of the entries), so snapshots keep it.

// zoneItem is a NACKed ID at its zone position.
type zoneItem struct {
	seq uint64
	id  streams.ID
}

func zoneLess(a, b zoneItem) bool { return a.seq < b.seq }

// unzone takes id out of the NACK zone and reports whether it was there.
func (x *extra) unzone(id streams.ID) bool {
	s, ok := x.zoneSeq[id]
	if !ok {
		return false
	}
	delete(x.zoneSeq, id)
	x.zone.Delete(zoneItem{seq: s})
	return true
}

// Nack gives the entry id back to the group (XNACK): it loses its owner,
// its delivery time becomes 0 and its delivery count count, and it moves
// to the tail of the NACK zone (re-NACKing moves it there again). The
// entry need not be pending before (XNACK FORCE).
func (p *PEL) Nack(id streams.ID, count int64) {
	p.Put(NACK{ID: id, DeliveryMs: 0, DeliveryCount: count})
	p.MarkNacked(id)
}

// MarkNacked appends the pending entry id to the tail of the NACK zone,
// keeping its NACK as it is (snapshot restore: the entry is unowned with
// delivery time 0). It reports false if id is not pending.
func (p *PEL) MarkNacked(id streams.ID) bool {
	n, ok := p.Get(id)
	if !ok {
		return false
	}
	if p.x == nil {
		p.x = newExtra()
	}
	x := p.x
	if s, ok := x.zoneSeq[id]; ok {
		x.zone.Delete(zoneItem{seq: s})
	} else if x.byTime != nil {
		x.byTime.Delete(timeKey{n.DeliveryMs, id})
	}
	x.zoneSeq[id] = x.nextSeq
	x.zone.ReplaceOrInsert(zoneItem{seq: x.nextSeq, id: id})
	x.nextSeq++
	return true
}

// Nacked reports whether id is in the NACK zone.
func (p *PEL) Nacked(id streams.ID) bool {
	if p.x == nil {
		return false
	}
	_, ok := p.x.zoneSeq[id]
	return ok
}

// NackedLen returns the number of entries in the NACK zone (XINFO STREAM
// FULL's nacked-count).
func (p *PEL) NackedLen() int {
	if p.x == nil {
		return 0
	}
	return p.x.zone.Len()
}

// AscendNacked calls fn with the NACK zone's entries in zone order (oldest
// NACK first) until fn returns false. fn must not change the PEL.
func (p *PEL) AscendNacked(fn func(NACK) bool) {
	if p.x == nil {
		return
	}
	p.x.zone.Ascend(func(z zoneItem) bool {
		n, _ := p.Get(z.id)
		return fn(n)
	})
}

// checkExtra verifies the zone and the time index against the group tree:
// every zone entry is pending, unowned, with delivery time 0; the time
// index, when built, holds exactly the other entries at their delivery
// times.
func (p *PEL) checkExtra() error {
	if p.x == nil {
		return nil
	}
	x := p.x
	if len(x.zoneSeq) != x.zone.Len() {
		return fmt.Errorf("pel: NACK zone has %d positions for %d IDs", x.zone.Len(), len(x.zoneSeq))
	}
	var err error
	x.zone.Ascend(func(z zoneItem) bool {
		n, ok := p.Get(z.id)
		switch {
		case x.zoneSeq[z.id] != z.seq:
			err = fmt.Errorf("pel: NACK zone position of %s disagrees", z.id)
		case !ok:
			err = fmt.Errorf("pel: NACKed %s is not pending", z.id)
		case n.Consumer != "" || n.DeliveryMs != 0:
			err = fmt.Errorf("pel: NACKed %s owned by %q delivered at %d", z.id, n.Consumer, n.DeliveryMs)
		}
		return err == nil
	})
	if err != nil || x.byTime == nil {
		return err
	}
	if x.byTime.Len()+x.zone.Len() != p.Len() {
		return fmt.Errorf("pel: time index has %d entries, zone %d, PEL %d", x.byTime.Len(), x.zone.Len(), p.Len())
	}
	x.byTime.Ascend(func(k timeKey) bool {
		n, ok := p.Get(k.id)
		if !ok || n.DeliveryMs != k.ms {
			err = fmt.Errorf("pel: time index has %s at %d, PEL %v %d", k.id, k.ms, ok, n.DeliveryMs)
		}
		return err == nil
	})
	return err
}
