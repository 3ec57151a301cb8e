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
// free list), the consumer table and name map, each consumer's index of
// IDs, the shared free list of the indexes, and the big delivery counts.
// Consumer names are not counted: the group's consumers hold the same
// strings. It costs O(consumers with pending entries) and changes nothing.
// Its model of the layout is checked against the live heap by
// replication/state's TestMemoryUsageMatchesHeap: change both together.
func (p *PEL) MemoryUsage() int64 {
	n := pelBytes + memsize.BTree(int64(p.nacks.Len()), EntryBytes) + memsize.BTreeFreeList
	n += memsize.Class(int64(cap(p.owners))*ownerBytes) + memsize.Class(4*int64(cap(p.free)))
	n += memsize.Map(int64(len(p.slots)), 16+8)
	n += memsize.BTreeFreeList // idNodes
	for _, o := range p.owners {
		if o.ids != nil {
			n += memsize.BTree(int64(o.ids.Len()), idBytes)
		}
	}
	if p.bigCounts != nil {
		n += memsize.Map(int64(len(p.bigCounts)), idBytes+8)
	}
	return n
}
