package groups

import "streamd/streams"

// This file mirrors Redis 7.2's logical read counter rules
// (streamRangeHasTombstones, streamEstimateDistanceFromFirstEverEntry,
// streamReplyWithCGLag): a group's entries-read and lag are exact only while
// no deleted entry lies ahead of what the group has read; otherwise they are
// estimated from the stream's counters when possible, and unknown (null)
// when not.

// rangeHasTombstones reports whether an entry deleted with XDEL may lie in
// [start, +inf) of s, as streamRangeHasTombstones with a NULL end.
func rangeHasTombstones(s *streams.Stream, start streams.ID) bool {
	maxDel := s.MaxDeletedID()
	if s.Len() == 0 || maxDel.IsZero() {
		// The stream is empty or has no tombstones.
		return false
	}
	if maxDel.Less(s.FirstID()) {
		// The latest tombstone is before the first entry.
		return false
	}
	return !maxDel.Less(start)
}

// EstimateEntriesRead returns the logical read counter of id: how many
// entries were added to s up to and including id, or EntriesReadInvalid when
// it cannot be known, as streamEstimateDistanceFromFirstEverEntry.
func EstimateEntriesRead(s *streams.Stream, id streams.ID) int64 {
	// The counter of any ID in an empty, never-before-used stream is 0.
	if s.EntriesAdded() == 0 {
		return 0
	}
	last := s.LastID()
	cmpLast := id.Compare(last)
	// In an empty stream, an ID at or before the last ID has read all.
	if s.Len() == 0 && cmpLast <= 0 {
		return s.EntriesAdded()
	}
	if cmpLast == 0 {
		return s.EntriesAdded()
	} else if cmpLast > 0 {
		// The counter of a future ID is unknown.
		return EntriesReadInvalid
	}
	first := s.FirstID()
	maxDel := s.MaxDeletedID()
	if maxDel.IsZero() || maxDel.Less(first) {
		// There is definitely no fragmentation ahead.
		switch id.Compare(first) {
		case -1:
			return s.EntriesAdded() - s.Len()
		case 0:
			return s.EntriesAdded() - s.Len() + 1
		}
	}
	// Not obtainable because of fragmentation.
	return EntriesReadInvalid
}

// Lag returns the number of entries of s not yet delivered to g and whether
// it is known (XINFO "lag"; null when not), as streamReplyWithCGLag.
func (g *Group) Lag(s *streams.Stream) (int64, bool) {
	if s.EntriesAdded() == 0 {
		// The lag of a newly-initialized stream is 0.
		return 0, true
	}
	if g.EntriesRead != EntriesReadInvalid && !rangeHasTombstones(s, g.LastID) {
		// No fragmentation ahead: the group's counter is valid.
		return s.EntriesAdded() - g.EntriesRead, true
	}
	if read := EstimateEntriesRead(s, g.LastID); read != EntriesReadInvalid {
		return s.EntriesAdded() - read, true
	}
	return 0, false
}

// advance moves the group's last-delivered-id to id, a newly delivered entry,
// and keeps entries-read as streamReplyWithRange does: counted up while no
// tombstone lies ahead, re-estimated otherwise.
func (g *Group) advance(s *streams.Stream, id streams.ID) {
	if !g.LastID.Less(id) {
		return
	}
	if g.EntriesRead != EntriesReadInvalid && !rangeHasTombstones(s, id) {
		g.EntriesRead++
	} else if s.EntriesAdded() != 0 {
		g.EntriesRead = EstimateEntriesRead(s, id)
	}
	g.LastID = id
}
