package state

import (
	"encoding/binary"

	"streamd/streams"
)

// radixTreeNodes is XINFO STREAM's radix-tree-nodes: the number of nodes of
// the rax Redis would hold for this stream's node keys (see raxNodeCount).
func radixTreeNodes(s *streams.Stream) int64 {
	var keys [][16]byte
	s.NodeKeys(func(id streams.ID) bool {
		keys = append(keys, raxKey(id))
		return true
	})
	return raxNodeCount(keys)
}

// raxKey is a stream ID as Redis stores it in the rax: ms then seq, both
// big-endian (streamEncodeID).
func raxKey(id streams.ID) [16]byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:8], id.Ms)
	binary.BigEndian.PutUint64(k[8:], id.Seq)
	return k
}

// raxNodeCount returns the number of nodes of a Redis rax holding exactly the
// given sorted, distinct 16-byte keys. A rax node is either compressed (a run
// of bytes with one child) or a branch (one child per distinct next byte);
// so the nodes are the root, every prefix where keys diverge (a branch),
// every child of a branch, and every key (a leaf). An empty rax has its root
// only.
func raxNodeCount(keys [][16]byte) int64 {
	if len(keys) == 0 {
		return 1
	}
	return raxSubtree(keys, 0)
}

// raxSubtree counts the nodes below and including the node at depth d, whose
// keys all share their first d bytes.
func raxSubtree(keys [][16]byte, d int) int64 {
	if len(keys) == 1 {
		if d == 16 {
			return 1 // the leaf
		}
		return 2 // a compressed node down to the leaf
	}
	first, last := keys[0], keys[len(keys)-1]
	l := d
	for l < 16 && first[l] == last[l] {
		l++
	}
	var n int64
	if l > d {
		n++ // a compressed node from d down to the branch at l
	}
	n++ // the branch at l
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j][l] == keys[i][l] {
			j++
		}
		n += raxSubtree(keys[i:j], l+1)
		i = j
	}
	return n
}
