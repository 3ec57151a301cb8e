package streams

// TrimStrategy says what Trim keeps: the newest MaxLen entries or the
// entries with ID >= MinID.
type TrimStrategy uint8

// Trim strategies (XADD/XTRIM MAXLEN and MINID).
const (
	TrimMaxLen TrimStrategy = iota + 1
	TrimMinID
)

// TrimArgs is a resolved MAXLEN|MINID [=|~] threshold [LIMIT count] clause.
type TrimArgs struct {
	Strategy TrimStrategy
	MaxLen   int64 // TrimMaxLen: keep at most this many entries
	MinID    ID    // TrimMinID: drop entries with ID < MinID
	Approx   bool  // "~": remove whole nodes only
	// Limit bounds the entries removed (0 = no bound). Redis counts a node
	// against it before removing the node; see TrimLimit for the default.
	Limit int64
}

// TrimLimit resolves LIMIT as xaddCommand/xtrimCommand do: a given LIMIT is
// kept (it is only legal with "~"); without one, approximate trimming is
// bounded by 100 × stream-node-max-entries (10000 when that is 0, at most
// 1000000) and exact trimming is unbounded. given is -1 when not given.
func TrimLimit(given int64, approx bool, nodeMaxEntries int) int64 {
	if given >= 0 {
		return given
	}
	if !approx {
		return 0
	}
	limit := int64(100) * int64(nodeMaxEntries)
	if limit <= 0 {
		limit = 10000
	}
	if limit > 1000000 {
		limit = 1000000
	}
	return limit
}

// Trim removes the oldest entries as Redis's streamTrim does and returns how
// many it removed. Whole nodes go first while the node can go entirely
// (MAXLEN: length - node's live entries >= MaxLen; MINID: the node's last
// entry, deleted or not, is < MinID) and the limit allows its live entries;
// then, unless Approx, entries of the first remaining node are tombstoned
// one by one until the threshold holds. Trimming does not change
// max-deleted-entry-id (only XDEL does, in Redis too).
func (s *Stream) Trim(t TrimArgs) int64 {
	if t.Strategy != TrimMaxLen && t.Strategy != TrimMinID {
		return 0
	}
	var removed int64
	for {
		if t.Strategy == TrimMaxLen && s.length <= t.MaxLen {
			break
		}
		n, ok := s.nodes.Min()
		if !ok {
			break
		}
		live := int64(n.live)
		if t.Limit > 0 && removed+live > t.Limit {
			break
		}
		var whole bool
		if t.Strategy == TrimMaxLen {
			whole = s.length-live >= t.MaxLen
		} else {
			whole = n.last.Less(t.MinID)
		}
		if whole {
			s.removeNode(n)
			s.length -= live
			removed += live
			continue
		}
		if t.Approx {
			break
		}
		marked, before := false, n.memoryUsage()
		for i, p := 0, int(n.marks[0]); i < n.count; i, p = i+1, n.next(p) {
			if t.Strategy == TrimMaxLen {
				if s.length <= t.MaxLen {
					break
				}
			} else if id, _ := n.id(p); !id.Less(t.MinID) {
				break
			}
			if n.markDeleted(p) {
				s.length--
				removed++
				marked = true
			}
		}
		if marked {
			n.remaster(0)
			s.resized(n, before)
		}
		// Like Redis, a node left with only tombstones here stays (its
		// last entry, deleted, is >= MinID); the next XDEL or trim drops it.
		break
	}
	if removed > 0 {
		s.refreshFirstID()
	}
	return removed
}

// Delete removes the live entry with this ID (XDEL) and reports whether it
// existed. A node whose entries are all deleted is removed, and
// max-deleted-entry-id grows to id, as Redis's xdelCommand does.
func (s *Stream) Delete(id ID) bool {
	n := s.nodeFor(id)
	if n == nil {
		return false
	}
	i, p := n.seek(id)
	if i >= n.count {
		return false
	}
	if e, _ := n.id(p); e != id || !n.markDeleted(p) {
		return false
	}
	s.length--
	if n.live == 0 {
		s.removeNode(n)
	} else {
		before := n.memoryUsage()
		n.remaster(p)
		s.resized(n, before)
	}
	if s.maxDeleted.Less(id) {
		s.maxDeleted = id
	}
	if id == s.firstID {
		s.refreshFirstID()
	}
	return true
}

// removeNode drops n from the tree and keeps tail pointing at the last node.
func (s *Stream) removeNode(n *node) {
	s.nodes.Delete(n)
	s.dropped(n)
	if s.tail == n {
		s.tail, _ = s.nodes.Max()
	}
}

// refreshFirstID recomputes recorded-first-entry-id (0-0 when empty).
func (s *Stream) refreshFirstID() {
	s.firstID = ID{}
	if e, ok := s.First(); ok {
		s.firstID = e.ID
	}
}
