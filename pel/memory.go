package pel

import (
	"unsafe"

	"streamd/internal/memsize"
	"streamd/streams"
)

// Sizes for MemoryUsage (64-bit build).
var (
	pelBytes   = memsize.Class(int64(unsafe.Sizeof(PEL{})))
	ownerBytes = int64(unsafe.Sizeof(owner{}))
	idBytes    = int64(unsafe.Sizeof(streams.ID{}))
)

// MemoryUsage returns the bytes the PEL takes (MEMORY USAGE, INFO
// used_memory): the PEL, its tree of pending entries and the consumers'
// indexes of IDs (TreeBytes, exact), the consumer table, its free slots and
// name map, the big delivery counts, and the time index and NACK zone once
// built (extra.memory). Consumer names are not counted: the
// group's consumers hold the same strings. It costs O(1). Its model of the
// layout is checked against the live heap by replication/state's
// TestMemoryUsageMatchesHeap: change both together.
func (p *PEL) MemoryUsage() int64 {
	owners := int64(len(p.slots))
	n := pelBytes + p.TreeBytes()
	n += memsize.Class(int64(cap(p.owners))*ownerBytes) + memsize.Class(4*int64(cap(p.free)))
	n += memsize.Map(owners, 16+8)
	if p.bigCounts != nil {
		n += memsize.Map(int64(len(p.bigCounts)), idBytes+8)
	}
	if p.x != nil {
		n += p.x.memory()
	}
	return n
}

// Sizes of the time index and NACK zone (time.go, nack.go).
var (
	extraBytes    = memsize.Class(int64(unsafe.Sizeof(extra{})))
	timeKeyBytes  = int64(unsafe.Sizeof(timeKey{}))
	zoneItemBytes = int64(unsafe.Sizeof(zoneItem{}))
)

// memory returns the bytes of the time index and the NACK zone, which a
// PEL has once read with CLAIM, through a visibility timeout (XGROUP
// CONFIG VISIBILITY) or NACKed: the struct, each tree (made by btree.NewG,
// so each with its own free list) as memsize.BTree lays out its items, and
// the zone's map of positions. O(1).
func (x *extra) memory() int64 {
	n := extraBytes + memsize.BTree(int64(x.zone.Len()), zoneItemBytes) + memsize.BTreeFreeList +
		memsize.Map(int64(len(x.zoneSeq)), idBytes+8)
	if x.byTime != nil {
		n += memsize.BTree(int64(x.byTime.Len()), timeKeyBytes) + memsize.BTreeFreeList
	}
	return n
}
