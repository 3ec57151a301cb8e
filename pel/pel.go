// Package pel is a consumer group's pending entries list (PEL): the entries
// delivered to a consumer and not yet acknowledged with XACK. Like Redis's
// streamCG.pel and streamConsumer.pel rax pair, it keeps one NACK per ID in
// an ID-ordered tree, and for each consumer an ordered index of the IDs it
// owns. The NACK data lives once, in the group tree; a consumer's index holds
// IDs only, so the two can never disagree about delivery times or counts.
//
// The package is pure: times are arguments, and nothing iterates a Go map
// where the order could reach a caller.
package pel

import (
	"github.com/google/btree"

	"streamd/streams"
)

// NACK is a pending entry: an entry delivered to Consumer and not yet
// acknowledged, as Redis's streamNACK.
type NACK struct {
	ID       streams.ID
	Consumer string
	// DeliveryMs is the unix time in ms of the last delivery (XPENDING's
	// idle time is now minus this).
	DeliveryMs int64
	// DeliveryCount is how many times the entry was delivered.
	DeliveryCount int64
}

// btreeDegree is the google/btree degree of the group and consumer trees.
const btreeDegree = 16

func nackLess(a, b NACK) bool     { return a.ID.Less(b.ID) }
func idLess(a, b streams.ID) bool { return a.Less(b) }

// PEL is a group's pending entries list with its per-consumer indexes. The
// zero value is not usable: call New. A PEL is not safe for concurrent use;
// the keyspace serialises access.
type PEL struct {
	nacks *btree.BTreeG[NACK]
	// owners maps a consumer name to the IDs it owns. It is only ever looked
	// up by name; Check and Consumers sort the names before use.
	owners map[string]*btree.BTreeG[streams.ID]
}

// New returns an empty PEL.
func New() *PEL {
	return &PEL{
		nacks:  btree.NewG(btreeDegree, nackLess),
		owners: map[string]*btree.BTreeG[streams.ID]{},
	}
}

// Len returns the number of pending entries in the group.
func (p *PEL) Len() int { return p.nacks.Len() }

// ConsumerLen returns the number of pending entries owned by consumer.
func (p *PEL) ConsumerLen(consumer string) int {
	if idx := p.owners[consumer]; idx != nil {
		return idx.Len()
	}
	return 0
}

// Get returns the NACK for id.
func (p *PEL) Get(id streams.ID) (NACK, bool) {
	return p.nacks.Get(NACK{ID: id})
}

// First returns the pending entry with the smallest ID.
func (p *PEL) First() (NACK, bool) { return p.nacks.Min() }

// Last returns the pending entry with the greatest ID.
func (p *PEL) Last() (NACK, bool) { return p.nacks.Max() }

// Put stores n, replacing any NACK with the same ID; when the owner changes,
// the ID moves from the old consumer's index to the new one. It returns the
// NACK replaced, if any.
func (p *PEL) Put(n NACK) (prev NACK, replaced bool) {
	prev, replaced = p.nacks.ReplaceOrInsert(n)
	if replaced && prev.Consumer != n.Consumer {
		p.unindex(prev.Consumer, n.ID)
	}
	if !replaced || prev.Consumer != n.Consumer {
		p.index(n.Consumer, n.ID)
	}
	return prev, replaced
}

// Remove deletes the NACK for id (XACK) and returns it.
func (p *PEL) Remove(id streams.ID) (NACK, bool) {
	n, ok := p.nacks.Delete(NACK{ID: id})
	if ok {
		p.unindex(n.Consumer, id)
	}
	return n, ok
}

// Transfer gives the pending entry id to consumer, keeping its delivery time
// and count, and reports whether id was pending.
func (p *PEL) Transfer(id streams.ID, consumer string) bool {
	n, ok := p.Get(id)
	if !ok {
		return false
	}
	n.Consumer = consumer
	p.Put(n)
	return true
}

// RemoveConsumer deletes every pending entry owned by consumer (XGROUP
// DELCONSUMER, Redis's streamDelConsumer) and returns how many there were.
func (p *PEL) RemoveConsumer(consumer string) int {
	idx := p.owners[consumer]
	if idx == nil {
		return 0
	}
	n := idx.Len()
	idx.Ascend(func(id streams.ID) bool {
		p.nacks.Delete(NACK{ID: id})
		return true
	})
	delete(p.owners, consumer)
	return n
}

// Ascend calls fn with the pending entries whose ID is >= from, in ID order,
// until fn returns false. fn must not change the PEL.
func (p *PEL) Ascend(from streams.ID, fn func(NACK) bool) {
	p.nacks.AscendGreaterOrEqual(NACK{ID: from}, fn)
}

// Range returns up to count pending entries with start <= ID <= end, in ID
// order; count <= 0 means no limit.
func (p *PEL) Range(start, end streams.ID, count int) []NACK {
	var out []NACK
	p.Ascend(start, func(n NACK) bool {
		if end.Less(n.ID) {
			return false
		}
		out = append(out, n)
		return count <= 0 || len(out) < count
	})
	return out
}

// AscendConsumer calls fn with consumer's pending entries whose ID is >=
// from, in ID order, until fn returns false. fn must not change the PEL.
func (p *PEL) AscendConsumer(consumer string, from streams.ID, fn func(NACK) bool) {
	idx := p.owners[consumer]
	if idx == nil {
		return
	}
	idx.AscendGreaterOrEqual(from, func(id streams.ID) bool {
		n, _ := p.nacks.Get(NACK{ID: id})
		return fn(n)
	})
}

// ConsumerRange returns up to count of consumer's pending entries with
// start <= ID <= end, in ID order; count <= 0 means no limit.
func (p *PEL) ConsumerRange(consumer string, start, end streams.ID, count int) []NACK {
	var out []NACK
	p.AscendConsumer(consumer, start, func(n NACK) bool {
		if end.Less(n.ID) {
			return false
		}
		out = append(out, n)
		return count <= 0 || len(out) < count
	})
	return out
}

// Clone returns an independent copy (copy-on-write through btree Clone, so
// it is cheap until either side changes).
func (p *PEL) Clone() *PEL {
	c := &PEL{nacks: p.nacks.Clone(), owners: make(map[string]*btree.BTreeG[streams.ID], len(p.owners))}
	for name, idx := range p.owners {
		c.owners[name] = idx.Clone()
	}
	return c
}

func (p *PEL) index(consumer string, id streams.ID) {
	idx := p.owners[consumer]
	if idx == nil {
		idx = btree.NewG(btreeDegree, idLess)
		p.owners[consumer] = idx
	}
	idx.ReplaceOrInsert(id)
}

func (p *PEL) unindex(consumer string, id streams.ID) {
	idx := p.owners[consumer]
	if idx == nil {
		return
	}
	idx.Delete(id)
	if idx.Len() == 0 {
		// An empty index is dropped so that owners only names consumers
		// with pending entries; ConsumerLen answers 0 for the others.
		delete(p.owners, consumer)
	}
}
