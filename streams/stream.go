package streams

import (
	"github.com/google/btree"
)

// DefaultNodeMaxEntries is Redis's default stream-node-max-entries: how many
// entries (live or deleted) a node holds before a new node is started.
const DefaultNodeMaxEntries = 100

// Stream is a Redis stream's log. Like Redis's rax of listpacks, entries live
// in nodes keyed by the ID of the first entry appended to them (the "master
// ID"); a node keeps deleted entries as tombstones until all its entries are
// gone, so approximate trimming, which removes whole nodes only, trims the
// same amount as Redis.
//
// A node is full at stream-node-max-entries entries or when its listpack,
// as Redis would encode it, reaches stream-node-max-bytes (see
// listpack.go), so nodes split where Redis's do. A node stores its entries
// packed in one buffer (see node).
//
// Stream is not safe for concurrent use; the keyspace serialises access.
type Stream struct {
	nodes        *btree.BTreeG[*node]
	tail         *node // last node, the only one appended to
	length       int64
	lastID       ID
	entriesAdded int64
	maxDeleted   ID
	firstID      ID
	mem          memCount // the nodes' bytes (memory.go)
}

// btreeDegree is the google/btree degree for the node index; nodes hold up to
// stream-node-max-entries entries each, so the tree itself stays small.
const btreeDegree = 32

func nodeLess(a, b *node) bool { return a.key.Less(b.key) }

// New returns an empty stream (length 0, last ID 0-0).
func New() *Stream {
	return &Stream{nodes: btree.NewG(btreeDegree, nodeLess)}
}

// Len returns the number of live entries (XLEN).
func (s *Stream) Len() int64 { return s.length }

// LastID returns the last-generated-id: the greatest ID ever added (or set
// by XSETID); it survives deletes and trims.
func (s *Stream) LastID() ID { return s.lastID }

// EntriesAdded returns the entries-added counter: every entry ever appended,
// or the value XSETID ENTRIESADDED set.
func (s *Stream) EntriesAdded() int64 { return s.entriesAdded }

// MaxDeletedID returns the max-deleted-entry-id: the greatest ID removed by
// XDEL (or set by XSETID MAXDELETEDID). Trimming does not change it, as in
// Redis, where only XDEL records tombstones here.
func (s *Stream) MaxDeletedID() ID { return s.maxDeleted }

// FirstID returns the recorded-first-entry-id: the first live entry's ID, or
// 0-0 when the stream is empty.
func (s *Stream) FirstID() ID { return s.firstID }

// NodeCount returns the number of nodes (XINFO STREAM "radix-tree-keys").
func (s *Stream) NodeCount() int64 { return int64(s.nodes.Len()) }

// NodeKeys calls fn with each node's key (the ID of the first entry appended
// to it, Redis's master ID) in ascending order, until fn returns false. These
// are the keys of Redis's rax for the stream (XINFO STREAM's
// radix-tree-nodes is computed from them).
func (s *Stream) NodeKeys(fn func(ID) bool) {
	s.nodes.Ascend(func(n *node) bool { return fn(n.key) })
}

// First returns the first live entry.
func (s *Stream) First() (e Entry, ok bool) {
	s.Ascend(MinID, func(x Entry) bool { e, ok = x, true; return false })
	return e, ok
}

// Last returns the last live entry.
func (s *Stream) Last() (e Entry, ok bool) {
	s.Descend(MaxID, func(x Entry) bool { e, ok = x, true; return false })
	return e, ok
}

// Get returns the live entry with exactly this ID.
func (s *Stream) Get(id ID) (Entry, bool) {
	n := s.nodeFor(id)
	if n == nil {
		return Entry{}, false
	}
	i, p := n.seek(id)
	if i < n.count && !n.deletedAt(p) {
		if e, _ := n.id(p); e == id {
			return n.entry(p), true
		}
	}
	return Entry{}, false
}

// Ascend calls fn with the live entries whose ID is >= from, in ascending
// order, until fn returns false. It costs O(log n + k). The entries' values
// share the stream's buffers: fn may keep them but not change them.
func (s *Stream) Ascend(from ID, fn func(Entry) bool) {
	start := s.nodeFor(from)
	if start == nil {
		// from is before every node: start at the first one.
		start, _ = s.nodes.Min()
		if start == nil {
			return
		}
	}
	first := true
	var slab [][]byte
	s.nodes.AscendGreaterOrEqual(start, func(n *node) bool {
		i, p := 0, int(n.marks[0])
		if first {
			i, p = n.seek(from)
			first = false
		}
		for ; i < n.count; i, p = i+1, n.next(p) {
			if !n.deletedAt(p) && !fn(n.entryIn(p, &slab)) {
				return false
			}
		}
		return true
	})
}

// Descend calls fn with the live entries whose ID is <= from, in descending
// order, until fn returns false. It costs O(log n + k).
func (s *Stream) Descend(from ID, fn func(Entry) bool) {
	start := s.nodeFor(from)
	if start == nil {
		return
	}
	first := true
	var offs [markStride]int
	var slab [][]byte
	s.nodes.DescendLessOrEqual(start, func(n *node) bool {
		end := n.count
		if first {
			// Up to the last entry with ID <= from.
			i, p := n.seek(from)
			if i < n.count {
				if e, _ := n.id(p); e == from {
					i++
				}
			}
			end, first = i, false
		}
		// Block by block from the last, each block's offsets decoded
		// forwards from its mark.
		for b := (end - 1) / markStride; end > 0 && b >= 0; b-- {
			lo := b * markStride
			o := n.offsets(offs[:0], lo, min(end, lo+markStride))
			for j := len(o) - 1; j >= 0; j-- {
				if !n.deletedAt(o[j]) && !fn(n.entryIn(o[j], &slab)) {
					return false
				}
			}
		}
		return true
	})
}

// nodeFor returns the node whose key range holds id: the last node whose key
// is <= id, or nil if id sorts before every node.
func (s *Stream) nodeFor(id ID) *node {
	if s.tail != nil && !id.Less(s.tail.key) {
		return s.tail
	}
	var found *node
	s.nodes.DescendLessOrEqual(&node{key: id}, func(n *node) bool {
		found = n
		return false
	})
	return found
}

// DefaultNodeMaxBytes is Redis's default stream-node-max-bytes.
const DefaultNodeMaxBytes = 4096

// NoNodeMaxBytes, as AppendNode's nodeMaxBytes, bounds nodes by their entry
// count only, as releases before packed nodes did.
const NoNodeMaxBytes = -1

// Append adds an entry with Redis's default node size. See AppendNode.
func (s *Stream) Append(id ID, fields [][]byte) {
	s.AppendNode(id, fields, DefaultNodeMaxEntries, DefaultNodeMaxBytes)
}

// AppendNode adds an entry. The caller has checked that id is greater than
// LastID (NextID does). The stream copies fields into its node. A new node
// is started as Redis's streamAppendItem does: when the last node's
// listpack size (as Redis would encode it) plus the entry's field and value
// lengths reaches nodeMaxBytes (0: Redis's 0, no limit but 1 GB; < 0: no
// byte limit at all, see NoNodeMaxBytes), or the node holds nodeMaxEntries
// entries, live or deleted (<= 0: no entry limit). Appending costs O(1)
// amortised plus O(log nodes) when a node is started.
func (s *Stream) AppendNode(id ID, fields [][]byte, nodeMaxEntries int, nodeMaxBytes int64) {
	if s.tail != nil && !s.tail.last.Less(id) {
		s.mem = memCount{} // tombstones to drop: recount later
	}
	s.dropTombstonesFrom(id)
	old := s.tail
	var oldBytes int64
	if old != nil {
		oldBytes = old.memoryUsage()
	}
	defer s.appended(old, oldBytes)
	n := s.tail
	if n != nil {
		if nodeMaxBytes == 0 || nodeMaxBytes > lpMaxSize {
			nodeMaxBytes = lpMaxSize
		}
		full := nodeMaxEntries > 0 && n.count >= nodeMaxEntries
		if nodeMaxBytes > 0 && n.lpSize()+entryLen(fields) >= nodeMaxBytes || full {
			n = nil
		}
	}
	if n == nil {
		hint := 64
		if s.tail != nil {
			s.tail.seal()
			hint = min(len(s.tail.buf)+len(s.tail.buf)/16, 1<<16)
		}
		n = newNode(id, fieldNames(fields), hint)
		s.nodes.ReplaceOrInsert(n)
		s.tail = n
	}
	tombstones, at := n.count > 0 && n.live == 0, len(n.buf)
	n.add(id, fields, false)
	if tombstones {
		n.remaster(at)
	}
	if s.length == 0 {
		s.firstID = id
	}
	s.length++
	s.lastID = id
	s.entriesAdded++
}

// appended updates the memory count after an append: old, the tail before
// it (nil if none), took oldBytes; it grew or was sealed, and the tail may
// be a new node.
func (s *Stream) appended(old *node, oldBytes int64) {
	if old != nil {
		s.resized(old, oldBytes)
	}
	if s.tail != old {
		s.resized(s.tail, 0)
	}
}

// dropTombstonesFrom removes, from the end of the tail node, deleted entries
// whose ID is not below id, and the tail node itself if nothing is left in
// it. They exist only after XSETID lowered the last ID over deleted entries
// (id is above every live entry, so only tombstones can be in the way).
// Appending after them would break the ID order inside the node, which
// Get, Ascend and Descend rely on; Redis appends to the listpack anyway and
// scans it linearly, a case no client can observe other than through node
// counts.
func (s *Stream) dropTombstonesFrom(id ID) {
	for n := s.tail; n != nil; n = s.tail {
		if n.last.Less(id) {
			return
		}
		offs := n.offsets(nil, 0, n.count)
		k := len(offs)
		for k > 0 && n.deletedAt(offs[k-1]) {
			if e, _ := n.id(offs[k-1]); e.Less(id) {
				break
			}
			k--
		}
		if k == n.count {
			return
		}
		if k > 0 {
			n.rebuild(k, n.masterNames())
			return
		}
		s.removeNode(n)
	}
}

// Clone returns a copy of the stream that shares no mutable state with s.
func (s *Stream) Clone() *Stream {
	c := *s
	c.nodes = btree.NewG(btreeDegree, nodeLess)
	c.tail = nil
	c.mem = memCount{} // the copies' buffers have other capacities
	s.nodes.Ascend(func(n *node) bool {
		cn := n.clone()
		c.nodes.ReplaceOrInsert(cn)
		c.tail = cn
		return true
	})
	return &c
}
