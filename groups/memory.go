package groups

import (
	"fmt"
	"unsafe"

	"streamd/internal/memsize"
)

// Sizes for MemoryUsage on a 64-bit build.
var (
	groupBytes    = memsize.Class(int64(unsafe.Sizeof(Group{})))
	consumerBytes = memsize.Class(int64(unsafe.Sizeof(Consumer{})))
	ptrBytes      = int64(unsafe.Sizeof(uintptr(0)))
)

// consumerMemory is what consumer c takes: its struct and its name.
func consumerMemory(c *Consumer) int64 {
	return consumerBytes + memsize.String(len(c.Name))
}

// MemoryUsage returns the bytes the group takes (MEMORY USAGE, INFO
// used_memory): the group and its name, its XGROUP CONFIG (the settings
// and the dead-lettered count are fields of the group; the dead-letter
// stream's name is its own string), its consumers (each its struct, its
// name and its slot in the consumer list, counted as they come and go) and
// its pending entries list with the consumers' indexes (PEL.MemoryUsage).
// It costs O(1).
func (g *Group) MemoryUsage() int64 {
	n := groupBytes + memsize.String(len(g.Name)) + memsize.String(len(g.Config.DeadLetterKey)) +
		memsize.Class(int64(cap(g.consumers))*ptrBytes)
	return n + g.consumerBytes + g.PEL.MemoryUsage()
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

// checkMemory reports an error when the consumers' counted bytes differ
// from what they take.
func (g *Group) checkMemory() error {
	var n int64
	for _, c := range g.consumers {
		n += consumerMemory(c)
	}
	if n != g.consumerBytes {
		return fmt.Errorf("group %q: consumers counted at %d bytes, take %d", g.Name, g.consumerBytes, n)
	}
	return nil
}
