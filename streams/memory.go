package streams

import "unsafe"

// Sizes of the structures a stream is made of, for MemoryUsage (on a 64-bit
// build).
const (
	streamSize = int64(unsafe.Sizeof(Stream{}))
	nodeSize   = int64(unsafe.Sizeof(node{}))
	ptrSize    = int64(unsafe.Sizeof(uintptr(0)))
	// btreeNodeShare is a tree item's share of google/btree's node
	// (items and children slices, the node itself) at degree 32.
	btreeNodeShare = 2 * ptrSize
)

// MemoryUsage estimates the bytes the stream takes (MEMORY USAGE), as
// Redis's objectComputeSize does for a stream: the stream itself, the node
// tree, and the nodes — all of them when samples is 0 or at least the node
// count, else the first samples nodes' average times the node count. A
// node counts its buffer and its marks at their capacity.
func (s *Stream) MemoryUsage(samples int64) int64 {
	total := streamSize
	n := int64(s.nodes.Len())
	if n == 0 {
		return total
	}
	total += n * (ptrSize + btreeNodeShare)
	var sum, seen int64
	s.nodes.Ascend(func(nd *node) bool {
		sum += nd.memoryUsage()
		seen++
		return samples <= 0 || seen < samples
	})
	if seen < n {
		sum = sum * n / seen
	}
	return total + sum
}

func (n *node) memoryUsage() int64 {
	return nodeSize + int64(cap(n.buf)) + 4*int64(cap(n.marks))
}
