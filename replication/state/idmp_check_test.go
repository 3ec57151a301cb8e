package state

import "fmt"

// checkIDMP verifies an IDMP state's invariants: the stream list holds
// exactly the producers' records, in non-decreasing time, each producer's
// in its own order; every producer is non-empty, within maxsize, and its
// map matches its list; the iid count matches.
func checkIDMP(m *IDMP) error {
	if m == nil {
		return nil
	}
	var n int64
	next := map[*producer]*iidRec{}
	for _, p := range m.producers {
		if p.head == nil || len(p.iids) == 0 {
			return fmt.Errorf("idmp: empty producer %q", p.pid)
		}
		if int64(len(p.iids)) > m.maxSize {
			return fmt.Errorf("idmp: producer %q holds %d > maxsize %d", p.pid, len(p.iids), m.maxSize)
		}
		k := 0
		for r := p.head; r != nil; r = r.pNext {
			if p.iids[r.iid] != r || r.p != p {
				return fmt.Errorf("idmp: producer %q: record %q not in its map", p.pid, r.iid)
			}
			if r.pNext == nil && p.tail != r {
				return fmt.Errorf("idmp: producer %q: bad tail", p.pid)
			}
			k++
		}
		if k != len(p.iids) {
			return fmt.Errorf("idmp: producer %q: list %d, map %d", p.pid, k, len(p.iids))
		}
		next[p] = p.head
	}
	var prev *iidRec
	for r := m.head; r != nil; r = r.gNext {
		if r.gPrev != prev {
			return fmt.Errorf("idmp: bad back link at %q", r.iid)
		}
		if prev != nil && r.atMs < prev.atMs {
			return fmt.Errorf("idmp: time goes back at %q", r.iid)
		}
		if m.producers[r.p.pid] != r.p || next[r.p] != r {
			return fmt.Errorf("idmp: record %q of %q out of its producer's order", r.iid, r.p.pid)
		}
		next[r.p] = r.pNext
		prev = r
		n++
	}
	if m.tail != prev || n != m.iids {
		return fmt.Errorf("idmp: list of %d, count %d", n, m.iids)
	}
	return nil
}
