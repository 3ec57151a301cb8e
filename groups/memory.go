package groups

import (
	"unsafe"

	"streamd/internal/memsize"
)

// Sizes for MemoryUsage on a 64-bit build.
var (
	groupBytes    = memsize.Class(int64(unsafe.Sizeof(Group{})))
	consumerBytes = memsize.Class(int64(unsafe.Sizeof(Consumer{})))
	ptrBytes      = int64(unsafe.Sizeof(uintptr(0)))
)

// MemoryUsage returns the bytes the group takes (MEMORY USAGE, INFO
// used_memory): the group and its name, its consumers (each its struct, its
// name and its slot in the consumer list) and its pending entries list with
// the consumers' indexes (PEL.MemoryUsage). Like Redis's objectComputeSize,
// which walks every group and consumer whatever SAMPLES says, it costs
// O(consumers).
func (g *Group) MemoryUsage() int64 {
	n := groupBytes + memsize.String(len(g.Name)) + memsize.Class(int64(cap(g.consumers))*ptrBytes)
	for _, c := range g.consumers {
		n += consumerBytes + memsize.String(len(c.Name))
	}
	return n + g.PEL.MemoryUsage()
}

// MemoryUsage returns the bytes the set's groups take: the sorted list and
// each group's MemoryUsage.
func (s *Set) MemoryUsage() int64 {
	n := memsize.Class(int64(cap(s.list)) * ptrBytes)
	for _, g := range s.list {
		n += g.MemoryUsage()
	}
	return n
}
