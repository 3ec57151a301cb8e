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
	for _, name := range names {
		s := p.slots[name]
		idx := p.owners[s].ids
		if idx.Len() == 0 {
			return fmt.Errorf("pel: consumer %q has an empty index", name)
		}
		indexed += idx.Len()
		idx.Ascend(func(id streams.ID) bool {
			e, ok := p.nacks.Get(entry{ID: id})
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
	p.nacks.Ascend(func(e entry) bool {
		if int(e.owner) >= len(p.owners) || p.owners[e.owner].ids == nil || !p.owners[e.owner].ids.Has(e.ID) {
			err = fmt.Errorf("pel: %s owned by slot %d is missing from its index", e.ID, e.owner)
			return false
		}
		if e.count == countBig {
			big++
			n, ok := p.bigCounts[e.ID]
			if !ok || (n >= 0 && n < countBig) {
				err = fmt.Errorf("pel: %s has delivery count %d kept aside (%v)", e.ID, n, ok)
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
	if indexed != p.nacks.Len() {
		return fmt.Errorf("pel: %d IDs indexed for %d NACKs", indexed, p.nacks.Len())
	}
	return p.checkExtra()
}

// checkSlots verifies the consumer table: each used slot is named once in
// the name lookup, each free slot is empty and listed once as free.
func (p *PEL) checkSlots() error {
	used := 0
	for s, o := range p.owners {
		if o.ids == nil {
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
		if int(s) >= len(p.owners) || p.owners[s].ids != nil || seen[s] {
			return fmt.Errorf("pel: free slot %d is in use or listed twice", s)
		}
		seen[s] = true
	}
	if used+len(p.free) != len(p.owners) {
		return fmt.Errorf("pel: %d used and %d free slots of %d", used, len(p.free), len(p.owners))
	}
	return nil
}
