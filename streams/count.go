package streams

// CountBefore returns how many live entries have an ID below id: whole
// nodes are counted by their live count, only the node id falls in is
// scanned, so it costs O(nodes before id + one node) rather than
// O(entries). (Retention's "held" count uses it for MAXAGE.)
func (s *Stream) CountBefore(id ID) int64 {
	var n int64
	s.nodes.Ascend(func(nd *node) bool {
		if !nd.key.Less(id) {
			return false
		}
		if nd.last.Less(id) {
			n += int64(nd.live)
			return true
		}
		for i, p := 0, int(nd.marks[0]); i < nd.count; i, p = i+1, nd.next(p) {
			eid, _ := nd.id(p)
			if !eid.Less(id) {
				break
			}
			if !nd.deletedAt(p) {
				n++
			}
		}
		return false
	})
	return n
}
