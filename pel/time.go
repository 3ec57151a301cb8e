package pel

import (
	"github.com/google/btree"

	"streamd/streams"
)

// The time order and the NACK zone use only pel.go's exported API and
// its mutation hooks (Put, Remove, RemoveConsumer call extra.put/remove;
// Clone and Check call clone/checkExtra), not its containers.
//
// The delivery-time order of a PEL (Redis 8.4's pel_by_time, 8.6's time
// list), which XREADGROUP ... CLAIM walks: oldest delivery first, after the
// NACK zone (nack.go). It is derived state, a pure function of the PEL
// (delivery time, then ID: Redis breaks ties in insertion order, which
// snapshots do not keep), so it is built lazily on the first CLAIM read and
// a group never read with CLAIM nor NACKed pays nothing for it. Once built,
// pel.go's mutation points keep it current through the hooks below.

// timeKey orders the time index: delivery time, then ID.
type timeKey struct {
	ms int64
	id streams.ID
}

func timeLess(a, b timeKey) bool {
	if a.ms != b.ms {
		return a.ms < b.ms
	}
	return a.id.Less(b.id)
}

// extra is what CLAIM and XNACK add to a PEL: the lazy time index and the
// NACK zone. A PEL has one only once either was used.
type extra struct {
	// byTime holds the pending entries outside the NACK zone by delivery
	// time; nil until built.
	byTime *btree.BTreeG[timeKey]
	// zone is the NACK zone in FIFO order (nack.go).
	zone *btree.BTreeG[zoneItem]
	// zoneSeq maps a NACKed ID to its zone position; only looked up by ID.
	zoneSeq map[streams.ID]uint64
	// nextSeq is the next zone position.
	nextSeq uint64
}

func newExtra() *extra {
	return &extra{zone: btree.NewG(timeIndexDegree, zoneLess), zoneSeq: map[streams.ID]uint64{}}
}

func (x *extra) clone() *extra {
	c := &extra{zone: x.zone.Clone(), zoneSeq: make(map[streams.ID]uint64, len(x.zoneSeq)), nextSeq: x.nextSeq}
	if x.byTime != nil {
		c.byTime = x.byTime.Clone()
	}
	for id, s := range x.zoneSeq {
		c.zoneSeq[id] = s
	}
	return c
}

// put is the hook of an insert or update of id (delivery time newMs): the
// entry leaves the NACK zone (a delivery or an owner change ends a NACK)
// and takes its place in the time index.
func (x *extra) put(id streams.ID, oldMs int64, replaced bool, newMs int64) {
	inZone := x.unzone(id)
	if x.byTime == nil {
		return
	}
	if replaced && !inZone {
		x.byTime.Delete(timeKey{oldMs, id})
	}
	x.byTime.ReplaceOrInsert(timeKey{newMs, id})
}

// remove is the hook of the deletion of id (delivery time ms).
func (x *extra) remove(id streams.ID, ms int64) {
	if x.unzone(id) {
		return
	}
	if x.byTime != nil {
		x.byTime.Delete(timeKey{ms, id})
	}
}

// buildTime builds the time index if it is not built yet.
func (p *PEL) buildTime() {
	if p.x == nil {
		p.x = newExtra()
	}
	if p.x.byTime != nil {
		return
	}
	t := btree.NewG(timeIndexDegree, timeLess)
	p.Ascend(streams.MinID, func(n NACK) bool {
		if _, nacked := p.x.zoneSeq[n.ID]; !nacked {
			t.ReplaceOrInsert(timeKey{n.DeliveryMs, n.ID})
		}
		return true
	})
	p.x.byTime = t
}

// AscendByTime calls fn with the pending entries in the order XREADGROUP
// ... CLAIM claims them: the NACK zone first (FIFO), then the others by
// delivery time (oldest first, ties by ID), until fn returns false. fn must
// not change the PEL. It builds the time index on first use, so it changes
// the PEL's internals: call it only where writes are allowed (Apply).
func (p *PEL) AscendByTime(fn func(NACK) bool) {
	p.buildTime()
	more := true
	p.x.zone.Ascend(func(z zoneItem) bool {
		n, _ := p.Get(z.id)
		more = fn(n)
		return more
	})
	if !more {
		return
	}
	p.x.byTime.Ascend(func(k timeKey) bool {
		n, _ := p.Get(k.id)
		return fn(n)
	})
}

// OldestDelivery returns the earliest delivery time of the pending
// entries for which live is true (live nil: all), in the order CLAIM walks
// them (a NACKed entry counts as delivered at 0), and false when there is
// none. It only reads: without a time index it scans the PEL.
func (p *PEL) OldestDelivery(live func(streams.ID) bool) (int64, bool) {
	ok := func(id streams.ID) bool { return live == nil || live(id) }
	oldest, found := int64(0), false
	if p.x != nil {
		p.x.zone.Ascend(func(z zoneItem) bool {
			found = ok(z.id)
			return !found
		})
		if found {
			return 0, true
		}
		if p.x.byTime != nil {
			p.x.byTime.Ascend(func(k timeKey) bool {
				oldest, found = k.ms, ok(k.id)
				return !found
			})
			return oldest, found
		}
	}
	p.Ascend(streams.MinID, func(n NACK) bool {
		if (!found || n.DeliveryMs < oldest) && ok(n.ID) {
			oldest, found = n.DeliveryMs, true
		}
		return true
	})
	return oldest, found
}

// timeIndexDegree is the google/btree degree of the delivery-time index.
const timeIndexDegree = 32
