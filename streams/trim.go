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
	// Keep, when set, asks of each live entry the trim would remove, in ID
	// order, whether it must stay (Redis 8.2's ACKED: still referenced by a
	// group); for DELREF it drops the groups' references and answers
	// false. nil is KEEPREF, the trimming of Redis before 8.2. See Trim.
	Keep func(ID) bool
	// KeepAbove, when set with Keep, says every entry with a greater ID is
	// kept too (ACKED: no group has been delivered it), so the trim stops
	// at the first such entry instead of asking Keep about the rest.
	KeepAbove *ID
	// From, when set with Keep, says every live entry below it must stay
	// (the caller knows): the trim starts at the node holding From and
	// asks Keep about no entry below it.
	From ID
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
//
// With Keep set (Redis 8.2's DELREF and ACKED) no node is dropped unseen:
// each node that would go whole, and with exact trimming the node the
// threshold falls in, is scanned entry by entry, Keep deciding for each
// live entry; a scanned whole node left without live entries is dropped,
// and since kept entries leave the threshold unmet, the scan goes on to
// the next nodes (the limit still counted per node before it).
func (s *Stream) Trim(t TrimArgs) int64 {
	if t.Strategy != TrimMaxLen && t.Strategy != TrimMinID {
		return 0
	}
	var removed int64
	n, ok := s.nodes.Min()
	skip := t.Keep != nil && !t.From.IsZero()
	if skip {
		if f := s.nodeFor(t.From); f != nil {
			n = f
		}
	}
	for ok {
		if t.Strategy == TrimMaxLen && s.length <= t.MaxLen {
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
		next, hasNext := s.nodeAfter(n)
		if whole && t.Keep == nil {
			s.removeNode(n)
			s.length -= live
			removed += live
			n, ok = next, hasNext
			continue
		}
		if t.Approx && !whole {
			break
		}
		marked, reached, before := false, false, n.memoryUsage()
		for i, p := 0, int(n.marks[0]); i < n.count; i, p = i+1, n.next(p) {
			id, _ := n.id(p)
			if t.Strategy == TrimMaxLen {
				reached = s.length <= t.MaxLen
			} else {
				reached = !id.Less(t.MinID)
			}
			// Past KeepAbove nothing more can go: as good as reached.
			reached = reached || t.Keep != nil && t.KeepAbove != nil && t.KeepAbove.Less(id)
			if reached {
				break
			}
			if skip && id.Less(t.From) {
				continue
			}
			if n.deletedAt(p) || t.Keep != nil && t.Keep(id) {
				continue
			}
			if n.markDeleted(p) {
				s.length--
				removed++
				marked = true
			}
		}
		switch {
		case whole && n.live == 0:
			s.removeNode(n)
		case marked:
			n.remaster(0)
			s.resized(n, before)
		}
		// Like Redis, a node left with only tombstones by an exact trim
		// stays (its last entry, deleted, is >= MinID); the next XDEL or
		// trim drops it. Without Keep the threshold is met in this node.
		if reached || t.Keep == nil {
			break
		}
		n, ok = next, hasNext
	}
	if removed > 0 {
		s.refreshFirstID()
	}
	return removed
}

// nodeAfter returns the node following n in key order.
func (s *Stream) nodeAfter(n *node) (next *node, ok bool) {
	s.nodes.AscendGreaterOrEqual(n, func(x *node) bool {
		if x == n {
			return true
		}
		next, ok = x, true
		return false
	})
	return next, ok
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
