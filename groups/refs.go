package groups

import (
	"streamd/pel"
	"streamd/streams"
)

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

// refBatch is how many pending IDs Ascending reads from a group's PEL at a
// time.
const refBatch = 64

// Ascending returns Referenced for IDs asked in ascending order (a trim's
// scan): instead of one PEL lookup per ID it walks each group's PEL
// alongside, reading refBatch pending IDs at a time. The PELs must not
// change while it is in use.
func (r Refs) Ascending() func(streams.ID) bool {
	n := len(r.set.list)
	bufs := make([][]streams.ID, n)
	pos := make([]int, n)
	done := make([]bool, n)
	fill := func(i int, from streams.ID) {
		bufs[i], pos[i] = bufs[i][:0], 0
		r.set.list[i].PEL.Ascend(from, func(x pel.NACK) bool {
			bufs[i] = append(bufs[i], x.ID)
			return len(bufs[i]) < refBatch
		})
		done[i] = len(bufs[i]) < refBatch
	}
	return func(id streams.ID) bool {
		if n == 0 {
			return false
		}
		if r.minLast.Less(id) {
			return true
		}
		for i := range bufs {
			// An empty buffer not done is unread: the first ID fills it.
			for {
				for pos[i] < len(bufs[i]) && bufs[i][pos[i]].Less(id) {
					pos[i]++
				}
				if pos[i] < len(bufs[i]) || done[i] {
					break
				}
				fill(i, id)
			}
			if pos[i] < len(bufs[i]) && bufs[i][pos[i]] == id {
				return true
			}
		}
		return false
	}
}
