package streams

import (
	"sort"

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
// One deliberate difference: a node is full when it holds
// stream-node-max-entries entries; stream-node-max-bytes is not emulated
// (Redis's listpack byte size depends on its encoding), so a stream of
// large entries has fewer, fuller nodes here than in Redis.
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
	i := n.search(id)
	if i < len(n.entries) && n.entries[i].ID == id && !n.deleted[i] {
		return n.entries[i], true
	}
	return Entry{}, false
}

// Ascend calls fn with the live entries whose ID is >= from, in ascending
// order, until fn returns false. It costs O(log n + k).
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
	s.nodes.AscendGreaterOrEqual(start, func(n *node) bool {
		i := 0
		if first {
			i, first = n.search(from), false
		}
		for ; i < len(n.entries); i++ {
			if !n.deleted[i] && !fn(n.entries[i]) {
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
	s.nodes.DescendLessOrEqual(start, func(n *node) bool {
		i := len(n.entries) - 1
		if first {
			// The last entry with ID <= from.
			i, first = n.searchAfter(from)-1, false
		}
		for ; i >= 0; i-- {
			if !n.deleted[i] && !fn(n.entries[i]) {
				return false
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

// Append adds an entry with Redis's default node size. See AppendNode.
func (s *Stream) Append(id ID, fields [][]byte) {
	s.AppendNode(id, fields, DefaultNodeMaxEntries)
}

// AppendNode adds an entry. The caller has checked that id is greater than
// LastID (NextID does). The stream keeps fields (not a copy): the caller must
// not change them afterwards. A new node is started when the last one holds
// nodeMaxEntries entries, live or deleted, as Redis's streamAppendItem counts
// them; nodeMaxEntries <= 0 means no entry limit (Redis's 0). Appending costs
// O(1) amortised plus O(log nodes) when a node is started.
func (s *Stream) AppendNode(id ID, fields [][]byte, nodeMaxEntries int) {
	s.dropTombstonesFrom(id)
	n := s.tail
	if n == nil || (nodeMaxEntries > 0 && len(n.entries) >= nodeMaxEntries) {
		n = newNode(id, nodeMaxEntries)
		s.nodes.ReplaceOrInsert(n)
		s.tail = n
	}
	n.entries = append(n.entries, Entry{ID: id, Fields: fields})
	n.deleted = append(n.deleted, false)
	n.live++
	if s.length == 0 {
		s.firstID = id
	}
	s.length++
	s.lastID = id
	s.entriesAdded++
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
		k := len(n.entries)
		for k > 0 && n.deleted[k-1] && !n.entries[k-1].ID.Less(id) {
			k--
		}
		if k == len(n.entries) {
			return
		}
		n.entries, n.deleted = n.entries[:k], n.deleted[:k]
		if k > 0 {
			return
		}
		s.removeNode(n)
	}
}

// Clone returns a copy of the stream that shares no mutable state with s
// (entry field bytes, which are never changed, are shared).
func (s *Stream) Clone() *Stream {
	c := *s
	c.nodes = btree.NewG(btreeDegree, nodeLess)
	c.tail = nil
	s.nodes.Ascend(func(n *node) bool {
		cn := &node{
			key:     n.key,
			entries: append([]Entry(nil), n.entries...),
			deleted: append([]bool(nil), n.deleted...),
			live:    n.live,
		}
		c.nodes.ReplaceOrInsert(cn)
		c.tail = cn
		return true
	})
	return &c
}

// node is one node of the stream, Redis's listpack: entries in ID order,
// appended only at the end, with deleted entries kept as tombstones (their
// Fields dropped) until the whole node goes. key is the ID of the first
// entry appended (Redis's master ID), the node's key in the tree.
type node struct {
	key     ID
	entries []Entry
	deleted []bool
	live    int // entries not deleted (Redis's "count" field)
}

// newNode returns an empty node keyed by id, sized for nodeMaxEntries
// entries so that filling it does not regrow its slices.
func newNode(id ID, nodeMaxEntries int) *node {
	c := nodeMaxEntries
	if c <= 0 || c > 1024 {
		c = 16
	}
	return &node{key: id, entries: make([]Entry, 0, c), deleted: make([]bool, 0, c)}
}

// search returns the index of the first entry with ID >= id.
func (n *node) search(id ID) int {
	return sort.Search(len(n.entries), func(i int) bool {
		return !n.entries[i].ID.Less(id)
	})
}

// searchAfter returns the index of the first entry with ID > id.
func (n *node) searchAfter(id ID) int {
	return sort.Search(len(n.entries), func(i int) bool {
		return id.Less(n.entries[i].ID)
	})
}

// lastID returns the ID of the node's last entry, deleted or not, as Redis's
// lpGetEdgeStreamID reads it.
func (n *node) lastID() ID { return n.entries[len(n.entries)-1].ID }

// markDeleted tombstones entry i and reports whether it was live.
func (n *node) markDeleted(i int) bool {
	if n.deleted[i] {
		return false
	}
	n.deleted[i] = true
	n.entries[i].Fields = nil
	n.live--
	return true
}
