package pel

import (
	"fmt"
	"sort"

	"streamd/streams"
)

// Check verifies the PEL's invariant: every NACK in the group tree is in its
// owner's index, and every ID in a consumer's index is a NACK owned by that
// consumer; no index is empty. It returns the first violation found, in a
// deterministic order (consumers by name, IDs ascending), or nil. Tests run
// it after every step.
func (p *PEL) Check() error {
	var err error
	indexed := 0
	names := make([]string, 0, len(p.owners))
	for name := range p.owners {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		idx := p.owners[name]
		if idx.Len() == 0 {
			return fmt.Errorf("pel: consumer %q has an empty index", name)
		}
		indexed += idx.Len()
		idx.Ascend(func(id streams.ID) bool {
			n, ok := p.nacks.Get(NACK{ID: id})
			switch {
			case !ok:
				err = fmt.Errorf("pel: consumer %q indexes %s, which is not pending", name, id)
			case n.Consumer != name:
				err = fmt.Errorf("pel: consumer %q indexes %s, owned by %q", name, id, n.Consumer)
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	p.nacks.Ascend(func(n NACK) bool {
		idx := p.owners[n.Consumer]
		if idx == nil || !idx.Has(n.ID) {
			err = fmt.Errorf("pel: %s owned by %q is missing from its index", n.ID, n.Consumer)
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if indexed != p.nacks.Len() {
		return fmt.Errorf("pel: %d IDs indexed for %d NACKs", indexed, p.nacks.Len())
	}
	return nil
}
