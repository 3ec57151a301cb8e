package streams

import (
	"errors"
	"fmt"
)

// This file gives the snapshot codec (replication/state) the stream's node
// layout: which entries share a node, which are tombstones, which node is
// appended to. Approximate trimming removes whole nodes, so a restored
// stream must have exactly the same nodes as the original for every replica
// to keep trimming the same.

// SnapshotMeta is the part of a stream's state that is not in its nodes.
type SnapshotMeta struct {
	LastID       ID
	EntriesAdded int64
	MaxDeletedID ID
	FirstID      ID
	// Tail is the index, in key order, of the node that appends go to, or
	// -1 when the stream has no node.
	Tail int
}

// SnapshotMeta returns the stream's counters and the index of its tail node
// (found from the last node backwards: it is nearly always the last).
func (s *Stream) SnapshotMeta() SnapshotMeta {
	m := SnapshotMeta{
		LastID:       s.lastID,
		EntriesAdded: s.entriesAdded,
		MaxDeletedID: s.maxDeleted,
		FirstID:      s.firstID,
		Tail:         -1,
	}
	if s.tail == nil {
		return m
	}
	i := s.nodes.Len() - 1
	s.nodes.Descend(func(n *node) bool {
		if n == s.tail {
			m.Tail = i
			return false
		}
		i--
		return true
	})
	if m.Tail < 0 && s.nodes.Len() > 0 {
		m.Tail = s.nodes.Len() - 1 // a tail outside the tree: append to the last
	}
	return m
}

// SnapshotNodes calls fn with every node in key order: its key, its entries
// (tombstones included, with nil Fields) and which of them are deleted,
// until fn returns false. The slices are decoded for fn, which must not
// keep them (the values share the node's buffer: fn must not change them).
func (s *Stream) SnapshotNodes(fn func(key ID, entries []Entry, deleted []bool) bool) {
	var entries []Entry
	var deleted []bool
	s.nodes.Ascend(func(n *node) bool {
		entries, deleted = entries[:0], deleted[:0]
		for i, p := 0, int(n.marks[0]); i < n.count; i, p = i+1, n.next(p) {
			entries = append(entries, n.entry(p))
			deleted = append(deleted, n.deletedAt(p))
		}
		return fn(n.key, entries, deleted)
	})
}

// CloneForSnapshot is Clone that also keeps which node appends go to (Clone
// makes the last node the tail, which differs after XSETID lowered the last
// ID below an older node's key).
func (s *Stream) CloneForSnapshot() *Stream {
	c := s.Clone()
	if s.tail != nil {
		c.tail, _ = c.nodes.Get(&node{key: s.tail.key})
	}
	return c
}

// ErrBadSnapshotNode is wrapped by the Restorer's errors: the nodes given do
// not form a stream (a snapshot that passed its checksum was written wrong).
var ErrBadSnapshotNode = errors.New("bad stream node")

// Restorer rebuilds a stream node by node from a snapshot. Use it once:
// AddNode for each node in key order, then Finish.
type Restorer struct {
	s     *Stream
	meta  SnapshotMeta
	last  *node
	count int
}

// NewRestorer starts rebuilding a stream with the given counters.
func NewRestorer(meta SnapshotMeta) *Restorer {
	return &Restorer{s: New(), meta: meta}
}

// AddNode appends a node after the previous one. The stream packs entries
// into the node's buffer; a deleted entry's Fields are dropped. The key
// must be greater than the previous node's, and the node must hold at
// least one entry, in ID order from the key.
func (r *Restorer) AddNode(key ID, entries []Entry, deleted []bool) error {
	if len(entries) == 0 || len(entries) != len(deleted) {
		return fmt.Errorf("%w: node %s has %d entries and %d deleted flags", ErrBadSnapshotNode, key, len(entries), len(deleted))
	}
	if r.last != nil && !r.last.key.Less(key) {
		return fmt.Errorf("%w: node %s after node %s", ErrBadSnapshotNode, key, r.last.key)
	}
	// The master holds the first live entry's field names (see remaster).
	var names [][]byte
	size := 0
	for i, e := range entries {
		if !deleted[i] {
			if names == nil {
				names = fieldNames(e.Fields)
			}
			size += 4 + len(e.Fields)
			for _, f := range e.Fields {
				size += len(f)
			}
		} else {
			size += 4
		}
	}
	n := newNode(key, names, size)
	for i, e := range entries {
		if i > 0 && !n.last.Less(e.ID) || e.ID.Less(key) {
			return fmt.Errorf("%w: node %s: entry %s after %s", ErrBadSnapshotNode, key, e.ID, n.last)
		}
		n.add(e.ID, e.Fields, deleted[i])
	}
	r.push(n)
	return nil
}

// push appends the rebuilt or verified node n.
func (r *Restorer) push(n *node) {
	r.s.nodes.ReplaceOrInsert(n)
	r.s.length += int64(n.live)
	if r.count == r.meta.Tail {
		r.s.tail = n
	}
	r.last = n
	r.count++
}

// Finish returns the rebuilt stream. Its length is the number of live
// entries added.
func (r *Restorer) Finish() (*Stream, error) {
	if r.meta.Tail >= r.count || r.meta.Tail < -1 || (r.meta.Tail == -1) != (r.count == 0) {
		return nil, fmt.Errorf("%w: tail node %d of %d nodes", ErrBadSnapshotNode, r.meta.Tail, r.count)
	}
	s := r.s
	s.lastID = r.meta.LastID
	s.entriesAdded = r.meta.EntriesAdded
	s.maxDeleted = r.meta.MaxDeletedID
	s.firstID = r.meta.FirstID
	r.s = nil
	return s, nil
}
