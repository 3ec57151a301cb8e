// Package pel is a consumer group's pending entries list (PEL): the entries
// delivered to a consumer and not yet acknowledged with XACK. Like Redis's
// streamCG.pel and streamConsumer.pel rax pair, it keeps one NACK per ID in
// an ID-ordered tree, and for each consumer an ordered index of the IDs it
// owns. The NACK data lives once, in the group tree; a consumer's index holds
// IDs only, so the two can never disagree about delivery times or counts.
//
// A pending entry is stored compactly: its ID and, beside it, an entry of
// delivery time, delivery count and the slot of its owner in the PEL's
// table of consumer names, 32 bytes without pointers, so the garbage
// collector does not scan the trees' items. Both trees are B+trees (see
// tree) that pack IDs delivered in order into full leaves: about 50 bytes
// of heap per pending entry, 32 in the group tree and 16 in its owner's
// index. Callers see NACK values, with the owner's name.
//
// Every change goes through four mutation points, in Put, Remove and
// RemoveConsumer: an entry is inserted (nacks.set of a new ID), its delivery
// data updated (nacks.set of a pending ID), its owner changed (the ID moves
// between consumer indexes), or it is deleted (nacks.delete).
//
// The package is pure: times are arguments, and nothing iterates a Go map
// where the order could reach a caller.
package pel

import (
	"math"
	"unsafe"

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

// entry is a NACK as the group tree stores it, next to its ID.
type entry struct {
	DeliveryMs int64
	// count is the delivery count, or countBig when the count does not
	// fit (then it is in PEL.bigCounts).
	count uint32
	// owner is the slot of the owning consumer in PEL.owners.
	owner uint32
}

// countBig marks an entry whose delivery count is kept in PEL.bigCounts:
// one set by XCLAIM RETRYCOUNT (or loaded) outside [0, countBig).
const countBig = math.MaxUint32

// EntryBytes is the size of a stored pending entry in the group tree, its
// ID and its entry, for memory estimates. Its owner's index holds the ID
// once more (IDBytes). Leaves filled in ID order are full; the nodes
// themselves add under 2% to that.
const EntryBytes = int64(unsafe.Sizeof(streams.ID{}) + unsafe.Sizeof(entry{}))

// IDBytes is the size of an ID in a consumer's index.
const IDBytes = int64(unsafe.Sizeof(streams.ID{}))

// owner is a slot of the consumer table: a consumer with pending entries and
// the index of the IDs it owns. A free slot is not used and has an empty
// index.
type owner struct {
	name string
	used bool
	ids  tree[struct{}]
}

// PEL is a group's pending entries list with its per-consumer indexes. The
// zero value is not usable: call New. A PEL is not safe for concurrent use;
// the keyspace serialises access.
type PEL struct {
	nacks tree[entry]
	// owners is the consumer table, by slot: only consumers with pending
	// entries have one. Slot numbers depend on the history of operations,
	// so they never reach a caller: NACKs carry the name.
	owners []owner
	// slots maps a consumer name to its slot. It is only ever looked up by
	// name; Check sorts the names before use.
	slots map[string]uint32
	// free lists the free slots of owners, reused last first.
	free []uint32
	// bigCounts holds the delivery counts of entries whose count is
	// countBig, by ID; it is only ever looked up by ID.
	bigCounts map[streams.ID]int64
	// indexMem is the sum of the consumer indexes' tree.mem.
	indexMem int64
	// x is the delivery-time index and the NACK zone (time.go, nack.go);
	// nil until the group is read with CLAIM or NACKed.
	x *extra
}

// New returns an empty PEL.
func New() *PEL {
	return &PEL{slots: map[string]uint32{}}
}

// Len returns the number of pending entries in the group.
func (p *PEL) Len() int { return p.nacks.Len() }

// ConsumerLen returns the number of pending entries owned by consumer.
func (p *PEL) ConsumerLen(consumer string) int {
	if s, ok := p.slots[consumer]; ok {
		return p.owners[s].ids.Len()
	}
	return 0
}

// view returns the NACK stored as id and e.
func (p *PEL) view(id streams.ID, e entry) NACK {
	n := NACK{ID: id, Consumer: p.owners[e.owner].name, DeliveryMs: e.DeliveryMs, DeliveryCount: int64(e.count)}
	if e.count == countBig {
		n.DeliveryCount = p.bigCounts[id]
	}
	return n
}

// Get returns the NACK for id.
func (p *PEL) Get(id streams.ID) (NACK, bool) {
	e, ok := p.nacks.get(id)
	if !ok {
		return NACK{}, false
	}
	return p.view(id, e), true
}

// First returns the pending entry with the smallest ID.
func (p *PEL) First() (NACK, bool) {
	id, e, ok := p.nacks.min()
	if !ok {
		return NACK{}, false
	}
	return p.view(id, e), true
}

// Last returns the pending entry with the greatest ID.
func (p *PEL) Last() (NACK, bool) {
	id, e, ok := p.nacks.max()
	if !ok {
		return NACK{}, false
	}
	return p.view(id, e), true
}

// Put stores n, replacing any NACK with the same ID; when the owner changes,
// the ID moves from the old consumer's index to the new one. It returns the
// NACK replaced, if any.
func (p *PEL) Put(n NACK) (prev NACK, replaced bool) {
	slot := p.slot(n.Consumer)
	e := entry{DeliveryMs: n.DeliveryMs, count: countBig, owner: slot}
	if n.DeliveryCount >= 0 && n.DeliveryCount < countBig {
		e.count = uint32(n.DeliveryCount)
	}
	// Mutation point: insert (a new ID) or delivery update (a pending one).
	old, replaced := p.nacks.set(n.ID, e)
	if replaced {
		prev = p.view(n.ID, old)
		if old.count == countBig && e.count != countBig {
			delete(p.bigCounts, n.ID)
		}
	}
	if e.count == countBig {
		if p.bigCounts == nil {
			p.bigCounts = map[streams.ID]int64{}
		}
		p.bigCounts[n.ID] = n.DeliveryCount
	}
	// Mutation point: owner change (or the first owner of a new ID).
	if !replaced || old.owner != slot {
		idx := &p.owners[slot].ids
		b := idx.mem
		idx.set(n.ID, struct{}{})
		p.indexMem += idx.mem - b
	}
	if replaced && old.owner != slot {
		p.unindex(old.owner, n.ID)
	}
	if p.x != nil {
		p.x.put(n.ID, old.DeliveryMs, replaced, n.DeliveryMs)
	}
	return prev, replaced
}

// Remove deletes the NACK for id (XACK) and returns it.
func (p *PEL) Remove(id streams.ID) (NACK, bool) {
	// Mutation point: delete.
	e, ok := p.nacks.delete(id)
	if !ok {
		return NACK{}, false
	}
	n := p.view(id, e)
	if e.count == countBig {
		delete(p.bigCounts, id)
	}
	p.unindex(e.owner, id)
	if p.x != nil {
		p.x.remove(id, e.DeliveryMs)
	}
	return n, true
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
	s, ok := p.slots[consumer]
	if !ok {
		return 0
	}
	idx := &p.owners[s].ids
	n := idx.Len()
	idx.ascend(streams.MinID, func(id streams.ID, _ struct{}) bool {
		// Mutation point: delete (each entry of the consumer).
		e, ok := p.nacks.delete(id)
		if ok && e.count == countBig {
			delete(p.bigCounts, id)
		}
		if ok && p.x != nil {
			p.x.remove(id, e.DeliveryMs)
		}
		return true
	})
	p.release(s)
	return n
}

// Ascend calls fn with the pending entries whose ID is >= from, in ID order,
// until fn returns false. fn must not change the PEL.
func (p *PEL) Ascend(from streams.ID, fn func(NACK) bool) {
	p.nacks.ascend(from, func(id streams.ID, e entry) bool { return fn(p.view(id, e)) })
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
	s, ok := p.slots[consumer]
	if !ok {
		return
	}
	p.owners[s].ids.ascend(from, func(id streams.ID, _ struct{}) bool {
		e, _ := p.nacks.get(id)
		return fn(p.view(id, e))
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

// Clone returns an independent copy (the trees are copy-on-write, so it is
// cheap until either side changes). The copy keeps the slot numbers.
func (p *PEL) Clone() *PEL {
	c := &PEL{
		nacks:  p.nacks.clone(),
		owners: make([]owner, len(p.owners)),
		slots:  make(map[string]uint32, len(p.slots)),
		free:   append([]uint32(nil), p.free...),
	}
	for s := range p.owners {
		if o := &p.owners[s]; o.used {
			c.owners[s] = owner{name: o.name, used: true, ids: o.ids.clone()}
			c.indexMem += c.owners[s].ids.mem // less p's spare leaves
		}
	}
	for name, s := range p.slots {
		c.slots[name] = s
	}
	if p.x != nil {
		c.x = p.x.clone()
	}
	if len(p.bigCounts) > 0 {
		c.bigCounts = make(map[streams.ID]int64, len(p.bigCounts))
		for id, n := range p.bigCounts {
			c.bigCounts[id] = n
		}
	}
	return c
}

// TreeBytes returns the heap bytes of the PEL's trees: the group tree of
// pending entries and the consumers' indexes of IDs, nodes and arrays
// (Go's size classes included), kept up to date by every change, so it
// costs O(1). The PEL struct, its consumer table, name map and the delivery
// counts kept aside are not included.
func (p *PEL) TreeBytes() int64 { return p.nacks.mem + p.indexMem }

// slot returns consumer's slot, giving it one (with an empty index) if it
// has none. A new slot must get an ID before the PEL is used again.
func (p *PEL) slot(consumer string) uint32 {
	if s, ok := p.slots[consumer]; ok {
		return s
	}
	o := owner{name: consumer, used: true}
	var s uint32
	if k := len(p.free); k > 0 {
		s = p.free[k-1]
		p.free = p.free[:k-1]
		p.owners[s] = o
	} else {
		s = uint32(len(p.owners))
		p.owners = append(p.owners, o)
	}
	p.slots[consumer] = s
	return s
}

// unindex removes id from the index of the consumer in slot s, and frees the
// slot when that was its last pending entry.
func (p *PEL) unindex(s uint32, id streams.ID) {
	idx := &p.owners[s].ids
	b := idx.mem
	idx.delete(id)
	p.indexMem += idx.mem - b
	if idx.Len() == 0 {
		// An empty index is dropped so that only consumers with pending
		// entries have a slot; ConsumerLen answers 0 for the others.
		p.release(s)
	}
}

// release frees slot s.
func (p *PEL) release(s uint32) {
	p.indexMem -= p.owners[s].ids.mem
	delete(p.slots, p.owners[s].name)
	p.owners[s] = owner{}
	p.free = append(p.free, s)
}
