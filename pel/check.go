package pel

import (
	"fmt"
	"sort"

	"streamd/streams"
)

// Check verifies the PEL's invariant: every NACK in the group tree is in its
// owner's index, and every ID in a consumer's index is a NACK owned by that
// consumer; no index is empty; the consumer table, its name lookup and its
// free slots agree; a delivery count is kept aside exactly when it does not
// fit the entry. It returns the first violation found, in a deterministic
// order (consumers by name, IDs ascending), or nil. Tests run it after every
// step.
func (p *PEL) Check() error {
	if err := p.checkSlots(); err != nil {
		return err
	}
	var err error
	indexed := 0
	names := make([]string, 0, len(p.slots))
	for name := range p.slots {
		names = append(names, name)
	}
	sort.Strings(names)
	if err := p.nacks.check(); err != nil {
		return err
	}
	for _, name := range names {
		s := p.slots[name]
		idx := &p.owners[s].ids
		if err := idx.check(); err != nil {
			return fmt.Errorf("consumer %q: %w", name, err)
		}
		if idx.Len() == 0 {
			return fmt.Errorf("pel: consumer %q has an empty index", name)
		}
		indexed += idx.Len()
		idx.ascend(streams.MinID, func(id streams.ID, _ struct{}) bool {
			e, ok := p.nacks.get(id)
			switch {
			case !ok:
				err = fmt.Errorf("pel: consumer %q indexes %s, which is not pending", name, id)
			case e.owner != s:
				err = fmt.Errorf("pel: consumer %q indexes %s, owned by slot %d", name, id, e.owner)
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	big := 0
	p.nacks.ascend(streams.MinID, func(id streams.ID, e entry) bool {
		if int(e.owner) >= len(p.owners) || !p.owners[e.owner].used || !p.owners[e.owner].ids.has(id) {
			err = fmt.Errorf("pel: %s owned by slot %d is missing from its index", id, e.owner)
			return false
		}
		if e.count == countBig {
			big++
			n, ok := p.bigCounts[id]
			if !ok || (n >= 0 && n < countBig) {
				err = fmt.Errorf("pel: %s has delivery count %d kept aside (%v)", id, n, ok)
			}
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if big != len(p.bigCounts) {
		return fmt.Errorf("pel: %d delivery counts kept aside for %d entries", len(p.bigCounts), big)
	}
	var mem int64
	for s := range p.owners {
		mem += p.owners[s].ids.mem
	}
	if mem != p.indexMem {
		return fmt.Errorf("pel: indexes of %d bytes counted as %d", mem, p.indexMem)
	}
	if indexed != p.nacks.Len() {
		return fmt.Errorf("pel: %d IDs indexed for %d NACKs", indexed, p.nacks.Len())
	}
	return p.checkExtra()
}

// checkSlots verifies the consumer table: each used slot is named once in
// the name lookup, each free slot is empty and listed once as free.
func (p *PEL) checkSlots() error {
	used := 0
	for s := range p.owners {
		o := &p.owners[s]
		if !o.used {
			if o.ids.Len() != 0 {
				return fmt.Errorf("pel: free slot %d has an index", s)
			}
			continue
		}
		used++
		if got, ok := p.slots[o.name]; !ok || got != uint32(s) {
			return fmt.Errorf("pel: slot %d of consumer %q is not found by name", s, o.name)
		}
	}
	if used != len(p.slots) {
		return fmt.Errorf("pel: %d used slots for %d names", used, len(p.slots))
	}
	seen := map[uint32]bool{}
	for _, s := range p.free {
		if int(s) >= len(p.owners) || p.owners[s].used || seen[s] {
			return fmt.Errorf("pel: free slot %d is in use or listed twice", s)
		}
		seen[s] = true
	}
	if used+len(p.free) != len(p.owners) {
		return fmt.Errorf("pel: %d used and %d free slots of %d", used, len(p.free), len(p.owners))
	}
	return nil
}

// check verifies the tree's structure: sorted keys, separators that bound
// their children, no empty node, node sizes within limits, every leaf at
// the same depth, equal key and value counts, and a length that matches.
func (t *tree[V]) check() error {
	if t.root == nil {
		if t.n != 0 || t.mem != 0 || t.spare != nil {
			return fmt.Errorf("pel: empty tree of length %d, %d bytes, spare %v", t.n, t.mem, t.spare != nil)
		}
		return nil
	}
	if sp := t.spare; sp != nil && (sp.kids != nil || len(sp.keys) != 0 || sp.front != 0 || cap(sp.keys) != leafMax) {
		return fmt.Errorf("pel: spare leaf of %d keys, capacity %d after %d", len(sp.keys), cap(sp.keys), sp.front)
	}
	if t.root.kids != nil && len(t.root.kids) < 2 {
		return fmt.Errorf("pel: inner root with %d children", len(t.root.kids))
	}
	leafDepth := -1
	count := 0
	var mem int64
	var walk func(n *node[V], depth int, lo, hi *streams.ID) error
	walk = func(n *node[V], depth int, lo, hi *streams.ID) error {
		if len(n.keys) == 0 {
			return fmt.Errorf("pel: empty node at depth %d", depth)
		}
		mem += n.bytes()
		if n.kids == nil {
			if n.front < 0 || n.front+cap(n.keys) > leafMax || cap(n.vals) != cap(n.keys) || (n.front > 0 && len(n.keys) == 0) {
				return fmt.Errorf("pel: leaf of %d keys (cap %d) after %d free slots", len(n.keys), cap(n.keys), n.front)
			}
		}
		if len(n.keys) > n.maxLen() {
			return fmt.Errorf("pel: node of %d keys at depth %d", len(n.keys), depth)
		}
		if n.kids == nil {
			if leafDepth >= 0 && depth != leafDepth {
				return fmt.Errorf("pel: leaves at depths %d and %d", leafDepth, depth)
			}
			leafDepth = depth
			if len(n.vals) != len(n.keys) || cap(n.vals) != cap(n.keys) {
				return fmt.Errorf("pel: leaf of %d keys (cap %d) and %d values (cap %d)", len(n.keys), cap(n.keys), len(n.vals), cap(n.vals))
			}
			for i, k := range n.keys {
				if (i > 0 && !idLess(n.keys[i-1], k)) || (lo != nil && idLess(k, *lo)) || (hi != nil && !idLess(k, *hi)) {
					return fmt.Errorf("pel: key %s out of order at depth %d", k, depth)
				}
			}
			count += len(n.keys)
			return nil
		}
		if len(n.kids) != len(n.keys) {
			return fmt.Errorf("pel: inner node of %d keys and %d children", len(n.keys), len(n.kids))
		}
		for i, c := range n.kids {
			clo, chi := lo, hi
			if i > 0 {
				clo = &n.keys[i]
				if (i > 1 && !idLess(n.keys[i-1], n.keys[i])) || (lo != nil && idLess(n.keys[i], *lo)) || (hi != nil && !idLess(n.keys[i], *hi)) {
					return fmt.Errorf("pel: separator %s out of order at depth %d", n.keys[i], depth)
				}
			}
			if i+1 < len(n.kids) {
				chi = &n.keys[i+1]
			}
			if err := walk(c, depth+1, clo, chi); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(t.root, 0, nil, nil); err != nil {
		return err
	}
	if t.spare != nil {
		mem += t.spare.bytes()
	}
	if count != t.n {
		return fmt.Errorf("pel: tree of length %d holds %d keys", t.n, count)
	}
	if mem != t.mem {
		return fmt.Errorf("pel: tree counts %d bytes for %d", t.mem, mem)
	}
	return nil
}
