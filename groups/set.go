// Package groups holds a stream's consumer groups: Group, Consumer, and the
// operations of XREADGROUP, XACK, XCLAIM, XAUTOCLAIM, XPENDING and XGROUP,
// mirroring Redis 7.2's t_stream.c. It is pure: the time of the command comes
// in as nowMs, and groups and consumers are kept sorted by name (Redis's rax
// order, byte-wise), so no Go map order reaches a reply.
package groups

import (
	"sort"

	"streamd/streams"
)

// Set is a stream's consumer groups, kept sorted by name. The zero value is
// an empty set. A Set is not safe for concurrent use.
type Set struct {
	list []*Group
}

// Len returns the number of groups.
func (s *Set) Len() int { return len(s.list) }

// search returns the index of name in the sorted list and whether it is
// there.
func (s *Set) search(name string) (int, bool) {
	i := sort.Search(len(s.list), func(i int) bool { return s.list[i].Name >= name })
	return i, i < len(s.list) && s.list[i].Name == name
}

// Get returns the group named name, or nil.
func (s *Set) Get(name string) *Group {
	if i, ok := s.search(name); ok {
		return s.list[i]
	}
	return nil
}

// Create adds a group (XGROUP CREATE) whose last-delivered-id is lastID and
// whose entries-read counter is entriesRead (-1 = unknown). It returns nil if
// a group with that name exists (Redis's BUSYGROUP).
func (s *Set) Create(name string, lastID streams.ID, entriesRead int64) *Group {
	i, ok := s.search(name)
	if ok {
		return nil
	}
	g := newGroup(name, lastID, entriesRead)
	s.list = append(s.list, nil)
	copy(s.list[i+1:], s.list[i:])
	s.list[i] = g
	return g
}

// Destroy removes the group named name (XGROUP DESTROY) and reports whether
// it existed.
func (s *Set) Destroy(name string) bool {
	i, ok := s.search(name)
	if !ok {
		return false
	}
	copy(s.list[i:], s.list[i+1:])
	s.list[len(s.list)-1] = nil
	s.list = s.list[:len(s.list)-1]
	return true
}

// All returns the groups in name order. The slice is the set's own: do not
// change it.
func (s *Set) All() []*Group { return s.list }

// Clone returns a deep copy of the set (for snapshots).
func (s *Set) Clone() Set {
	c := Set{list: make([]*Group, len(s.list))}
	for i, g := range s.list {
		c.list[i] = g.Clone()
	}
	return c
}

// Check runs the PEL invariant checker of every group and verifies that
// every pending entry is owned by a consumer of the group; for tests.
func (s *Set) Check() error {
	for _, g := range s.list {
		if err := g.Check(); err != nil {
			return err
		}
	}
	return nil
}
