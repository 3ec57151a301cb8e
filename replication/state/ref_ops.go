package state

import (
	"streamd/groups"
	"streamd/replication/wire"
	"streamd/streams"
)

// Redis 8.2's reference-aware deletes: XDELEX, XACKDEL, and the
// KEEPREF|DELREF|ACKED option of XADD/XTRIM (redis8-streams.md §1). Which
// entries a group references is derived from the groups at apply time
// (groups.Refs), so every replica, and a replica restored from a snapshot
// or replaying the log, decides the same.

// setRefKeep sets the trim's Keep for mode on the stream of o: none for
// KEEPREF; for DELREF it drops each trimmed entry from every group's PEL;
// for ACKED it keeps the entries some group still references, and every
// entry above the groups' smallest last-delivered-id (KeepAbove). Trimming
// changes no group's last-delivered-id, so the minimum is taken once.
func setRefKeep(a *streams.TrimArgs, mode wire.RefMode, o *Object) {
	switch mode {
	case wire.RefDelete:
		a.Keep = func(id streams.ID) bool {
			o.Groups.DropRefs(id)
			return false
		}
	case wire.RefAcked:
		refs := o.Groups.Refs()
		a.Keep = refs.Ascending() // Trim asks in ID order
		if min, ok := refs.MinLastID(); ok {
			a.KeepAbove = &min
		}
	}
}

// notFound is the answer for a missing key or group: RefNotFound for
// every ID.
func notFound(n int) wire.RefResult {
	codes := make([]int64, n)
	for i := range codes {
		codes[i] = wire.RefNotFound
	}
	return wire.RefResult{Codes: codes}
}

// deleteEntry deletes id from o's stream as XDEL does (max-deleted-entry-id
// and first ID follow) and counts it in r.
func deleteEntry(o *Object, id streams.ID, r *wire.RefResult) bool {
	if o.Stream.Delete(id) {
		r.Deleted++
		return true
	}
	return false
}

// stillReferenced applies mode to id before its deletion: DELREF drops id
// from every group's PEL; ACKED answers true, when some group still
// references id (refs, taken before the deletions), so that it stays.
func stillReferenced(o *Object, refs groups.Refs, mode wire.RefMode, id streams.ID) bool {
	switch mode {
	case wire.RefDelete:
		o.Groups.DropRefs(id)
	case wire.RefAcked:
		return refs.Referenced(id)
	}
	return false
}

// xdelex mirrors xdelexCommand: a missing key answers -1 for every ID; per
// ID, KEEPREF deletes as XDEL; DELREF first drops the ID from every group's
// PEL (even when the entry is gone: the dangling references go, reply -1);
// ACKED answers 2 without deleting while some group references the ID,
// checked before whether the entry exists, as Redis does.
func (ks *Keyspace) xdelex(c wire.XDelEx, nowMs int64) (any, error) {
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil {
		return notFound(len(c.IDs)), nil
	}
	r := wire.RefResult{Codes: make([]int64, len(c.IDs))}
	refs := o.Groups.Refs()
	for i, id := range c.IDs {
		if stillReferenced(o, refs, c.Mode, id) {
			r.Codes[i] = wire.RefStillReferenced
			continue
		}
		r.Codes[i] = wire.RefNotFound
		if deleteEntry(o, id, &r) {
			r.Codes[i] = wire.RefDeleted
		}
	}
	return r, nil
}

// xackdel mirrors xackdelCommand: a missing key or group answers -1 for
// every ID; an ID not pending in the group is -1 (neither acknowledged nor
// deleted); a pending one is acknowledged, then KEEPREF deletes the entry,
// DELREF drops it from the other groups' PELs and deletes it, and ACKED
// deletes it only if no group still references it (else 2). 1 is answered
// even when the entry had already left the stream.
func (ks *Keyspace) xackdel(c wire.XAckDel, nowMs int64) (any, error) {
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil {
		return notFound(len(c.IDs)), nil
	}
	g := o.Groups.Get(c.Group)
	if g == nil {
		return notFound(len(c.IDs)), nil
	}
	r := wire.RefResult{Codes: make([]int64, len(c.IDs))}
	refs := o.Groups.Refs()
	for i, id := range c.IDs {
		if _, ok := g.PEL.Remove(id); !ok {
			r.Codes[i] = wire.RefNotFound
			continue
		}
		if stillReferenced(o, refs, c.Mode, id) {
			r.Codes[i] = wire.RefStillReferenced
			continue
		}
		deleteEntry(o, id, &r)
		r.Codes[i] = wire.RefDeleted
	}
	return r, nil
}
