package groups

import "streamd/streams"

// References of consumer groups to stream entries, for Redis 8.2's
// KEEPREF|DELREF|ACKED deletes (XDELEX, XACKDEL, XADD/XTRIM).
//
// Redis keeps an index entry ID → groups whose PEL holds it, and caches
// the minimum last-delivered-id of the groups. Here both are derived on
// demand instead, so there is no state to persist or rebuild: the minimum
// once per command (Refs), pending-ness by a lookup in each group's PEL
// (O(groups × log pending) per ID, no per-pending-entry memory).

// Refs answers, for one command, whether entries are still referenced by
// the set's groups. It must not outlive a change to the groups' last IDs
// or to the set (create, destroy, SETID, delivery); PEL changes are fine.
type Refs struct {
	set     *Set
	minLast streams.ID
}

// Refs returns the set's reference checker with the groups' minimum
// last-delivered-id computed once.
func (s *Set) Refs() Refs {
	r := Refs{set: s}
	for i, g := range s.list {
		if i == 0 || g.LastID.Less(r.minLast) {
			r.minLast = g.LastID
		}
	}
	return r
}

// MinLastID returns the groups' smallest last-delivered-id; ok is false
// when there is no group (then nothing is referenced).
func (r Refs) MinLastID() (id streams.ID, ok bool) {
	return r.minLast, len(r.set.list) > 0
}

// Referenced reports whether id is referenced, as Redis's
// streamEntryIsReferenced: the stream has a group and either some group
// has not been delivered id yet (id > the smallest last-delivered-id) or
// id is pending in some group (NACKed or not, owned or not). Without
// groups nothing is referenced.
func (r Refs) Referenced(id streams.ID) bool {
	if len(r.set.list) == 0 {
		return false
	}
	if r.minLast.Less(id) {
		return true
	}
	for _, g := range r.set.list {
		if _, ok := g.PEL.Get(id); ok {
			return true
		}
	}
	return false
}

// DropRefs removes id from every group's PEL and its owner's index
// (Redis's streamCleanupEntryCGroupRefs, DELREF) and returns how many
// groups had it pending.
func (s *Set) DropRefs(id streams.ID) int {
	n := 0
	for _, g := range s.list {
		if _, ok := g.PEL.Remove(id); ok {
			n++
		}
	}
	return n
}
