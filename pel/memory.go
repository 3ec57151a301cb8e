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
// used_memory): the PEL, its tree of pending entries (with the tree's own
// free list), the consumer table and name map, the consumers' indexes of
// IDs, their shared free list, and the big delivery counts. Consumer names
// are not counted: the group's consumers hold the same strings. It costs
// O(1): the indexes are counted as one tree of all the pending IDs plus,
// per consumer, a tree's and a node's fixed bytes (a few percent off the
// sum of the trees, which differs only in how full their last nodes are).
// Its model of the layout is checked against the live heap by
// replication/state's TestMemoryUsageMatchesHeap: change both together.
func (p *PEL) MemoryUsage() int64 {
	pending, owners := int64(p.nacks.Len()), int64(len(p.slots))
	n := pelBytes + memsize.BTree(pending, EntryBytes) + memsize.BTreeFreeList
	n += memsize.Class(int64(cap(p.owners))*ownerBytes) + memsize.Class(4*int64(cap(p.free)))
	n += memsize.Map(owners, 16+8)
	n += memsize.BTreeFreeList // idNodes
	if owners > 0 {
		n += memsize.BTree(pending, idBytes) + (owners-1)*memsize.BTree(1, idBytes)
	}
	if p.bigCounts != nil {
		n += memsize.Map(int64(len(p.bigCounts)), idBytes+8)
	}
	return n
}
