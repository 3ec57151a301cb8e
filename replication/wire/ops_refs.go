package wire

import "streamd/streams"

// Redis 8.2's reference-aware deletion: XDELEX, XACKDEL and the
// KEEPREF|DELREF|ACKED option of XADD/XTRIM (spec §1).

// RefMode says what a deletion does about the consumer groups' references
// to the entries it deletes (Redis's delete strategy).
type RefMode uint8

// Reference modes.
const (
	// RefKeep (KEEPREF, the default) deletes the entry and leaves every
	// group's pending entry for it in place, as XDEL does.
	RefKeep RefMode = iota
	// RefDelete (DELREF) removes the entry from every group's PEL first.
	RefDelete
	// RefAcked (ACKED) deletes only entries no group still references: not
	// pending in any group and delivered to every group.
	RefAcked
)

// Answers of XDELEX and XACKDEL for one ID (Redis's XDelexRes/XAckDelRes).
const (
	// RefNotFound: the key (or group) is missing, or the ID is not in the
	// stream (XDELEX) or not in the group's PEL (XACKDEL).
	RefNotFound int64 = -1
	// RefDeleted: the entry was deleted (XACKDEL: acknowledged and
	// deleted, or acknowledged when the entry was already gone).
	RefDeleted int64 = 1
	// RefStillReferenced: ACKED only; the entry is still referenced and
	// was not deleted (XACKDEL: it was acknowledged).
	RefStillReferenced int64 = 2
)

// RefResult is the answer of XDELEX and XACKDEL: one code per requested ID,
// in order (RefNotFound, RefDeleted, RefStillReferenced), and how many
// entries were actually removed from the stream.
type RefResult struct {
	Codes   []int64
	Deleted int64
}

// XDelEx is XDELEX key [KEEPREF|DELREF|ACKED] IDS numids id... Result:
// RefResult.
type XDelEx struct {
	Base
	Mode RefMode
	IDs  []streams.ID
}

// XAckDel is XACKDEL key group [KEEPREF|DELREF|ACKED] IDS numids id...
// Result: RefResult.
type XAckDel struct {
	Base
	Group string
	Mode  RefMode
	IDs   []streams.ID
}

func (XDelEx) command()  {}
func (XAckDel) command() {}

// XDELEX and XACKDEL signal the key (and Redis notifies "xdel") only when
// an entry left the stream; the acknowledgements alone signal nothing, as
// for XACK.
func (c XDelEx) effects(res any, e Effects) Effects  { return refEffects(c.Key, res, e) }
func (c XAckDel) effects(res any, e Effects) Effects { return refEffects(c.Key, res, e) }

func refEffects(key string, res any, e Effects) Effects {
	if r, _ := res.(RefResult); r.Deleted > 0 {
		e.Modified = append(e.Modified, key)
	}
	return e
}
