package streams

import "unsafe"

// Sizes of the structures a stream is made of, for MemoryUsage (on a 64-bit
// build: an Entry is its ID and a slice header; a field is a slice header
// plus its bytes).
const (
	streamSize   = int64(unsafe.Sizeof(Stream{}))
	nodeSize     = int64(unsafe.Sizeof(node{}))
	entrySize    = int64(unsafe.Sizeof(Entry{}))
	sliceHdrSize = int64(unsafe.Sizeof([]byte(nil)))
	ptrSize      = int64(unsafe.Sizeof(uintptr(0)))
	// btreeNodeShare is a tree item's share of google/btree's node
	// (items and children slices, the node itself) at degree 32.
	btreeNodeShare = 2 * ptrSize
)

// MemoryUsage estimates the bytes the stream takes (MEMORY USAGE), as
// Redis's objectComputeSize does for a stream: the stream itself, the node
// tree, and the nodes — all of them when samples is 0 or at least the node
// count, else the first samples nodes' average times the node count. A
// node counts its entry and tombstone arrays at their capacity and every
// live entry's field headers and bytes.
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
	size := nodeSize + int64(cap(n.entries))*entrySize + int64(cap(n.deleted))
	for _, e := range n.entries {
		size += int64(cap(e.Fields)) * sliceHdrSize
		for _, f := range e.Fields {
			size += int64(len(f))
		}
	}
	return size
}
