package groups

import (
	"unsafe"

	"streamd/pel"
)

// Sizes for MemoryUsage on a 64-bit build.
const (
	groupSize    = int64(unsafe.Sizeof(Group{}))
	consumerSize = int64(unsafe.Sizeof(Consumer{}))
	nackSize     = pel.EntryBytes
	ptrSize      = int64(unsafe.Sizeof(uintptr(0)))
	// idItemSize is a consumer index item (an ID) with its share of the
	// btree node holding it.
	idItemSize = 16 + 2*ptrSize
	// nackItemSize is a PEL item with its share of its btree node.
	nackItemSize = nackSize + 2*ptrSize
	// pelSize is a PEL's trees and consumer map, empty.
	pelSize = 4 * 64
)

// MemoryUsage estimates the bytes the group takes (MEMORY USAGE): the group,
// its name, its consumers (with their names and their index of the
// pending entries they own) and its pending entries list.
func (g *Group) MemoryUsage() int64 {
	size := groupSize + int64(len(g.Name)) + pelSize
	n := int64(g.PEL.Len())
	size += n * (nackItemSize + idItemSize) // each entry once in the PEL, once in its owner's index
	for _, c := range g.consumers {
		size += ptrSize + consumerSize + int64(len(c.Name))
	}
	return size
}
