package streams

import (
	"fmt"
	"unsafe"

	"streamd/internal/memsize"
)

// Sizes of the structures a stream is made of, on the heap (64-bit build):
// the allocator's size class of each struct.
var (
	streamBytes = memsize.Class(int64(unsafe.Sizeof(Stream{})))
	nodeBytes   = memsize.Class(int64(unsafe.Sizeof(node{})))
)

// memCount is a stream's running count of its nodes' bytes (the sum of
// node.memoryUsage over the tree), kept by every change to the tree or a
// node in it. The zero value is "not counted yet": the first Memory walks
// the nodes once (a stream built by a Restorer or Clone starts so), and a
// change too rare to count precisely (appending over tombstones after
// XSETID) drops the count back to that state.
type memCount struct {
	valid bool
	nodes int64
	// tree is what the node tree takes for treeLen nodes (a cache:
	// computing it costs more than an append).
	treeLen int
	tree    int64
}

// resized records that node n, which took before bytes, now takes what
// memoryUsage says (0 before: n is new in the tree).
func (s *Stream) resized(n *node, before int64) {
	if s.mem.valid {
		s.mem.nodes += n.memoryUsage() - before
	}
}

// dropped records that node n left the tree.
func (s *Stream) dropped(n *node) {
	if s.mem.valid {
		s.mem.nodes -= n.memoryUsage()
	}
}

// Memory returns the bytes the stream takes, exactly as MemoryUsage(0)
// would count them, in O(1) once counted: it fills the running count on
// first use, so only the goroutine that changes the stream may call it
// (the state machine's Apply); readers call MemoryUsage.
func (s *Stream) Memory() int64 {
	if !s.mem.valid {
		s.mem = memCount{valid: true, nodes: s.walkNodes(0), treeLen: -1}
	}
	if n := s.nodes.Len(); n != s.mem.treeLen {
		s.mem.treeLen, s.mem.tree = n, s.fixedMemory()
	}
	return s.mem.tree + s.mem.nodes
}

// MemoryUsage returns the bytes the stream takes (MEMORY USAGE): the
// stream itself, its node tree, and its nodes (each its struct, its buffer
// and its marks at their capacity, as allocated). Once the running count is
// filled (Memory) the answer is exact whatever samples says; before that it
// is Redis's objectComputeSize: all nodes when samples is 0 or at least the
// node count, else the first samples nodes' mean times the node count. It
// changes nothing, so it is safe under a read lock.
func (s *Stream) MemoryUsage(samples int64) int64 {
	if s.mem.valid {
		return s.fixedMemory() + s.mem.nodes
	}
	return s.fixedMemory() + s.walkNodes(samples)
}

// fixedMemory is what the stream takes besides its nodes: the Stream, the
// tree (with its own free list) holding the node pointers.
func (s *Stream) fixedMemory() int64 {
	return streamBytes + memsize.BTree(int64(s.nodes.Len()), 8) + memsize.BTreeFreeList
}

// walkNodes sums the nodes' bytes, sampling the first samples (all when
// samples <= 0) and scaling their mean to the node count.
func (s *Stream) walkNodes(samples int64) int64 {
	n := int64(s.nodes.Len())
	if n == 0 {
		return 0
	}
	var sum, seen int64
	s.nodes.Ascend(func(nd *node) bool {
		sum += nd.memoryUsage()
		seen++
		return samples <= 0 || seen < samples
	})
	if seen < n {
		sum = sum * n / seen
	}
	return sum
}

// CheckMemory reports an error when the running count (if filled) differs
// from a walk of the nodes: a change to the stream that did not update it.
func (s *Stream) CheckMemory() error {
	if !s.mem.valid {
		return nil
	}
	if walked := s.walkNodes(0); walked != s.mem.nodes {
		return fmt.Errorf("stream memory count %d, nodes take %d", s.mem.nodes, walked)
	}
	return nil
}

// memoryUsage is the bytes the node takes: its struct, its buffer and its
// marks as allocated.
func (n *node) memoryUsage() int64 {
	return nodeBytes + memsize.Class(int64(cap(n.buf))) + memsize.Class(4*int64(cap(n.marks)))
}
