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
// name map, and the big delivery counts. Consumer names are not counted: the
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
	return n
}
