package state

import (
	"encoding/binary"

	"streamd/groups"
)

// The group configuration record (issue #15, XGROUP CONFIG): written right
// after a group's record (and its NACK zone record) only when the group has
// a setting or a dead-lettered count other than the default, so a state
// that never used XGROUP CONFIG snapshots byte-identically to one before
// it. Tag 20 is reserved for this feature too.
//
//	group config  tagGroupConfig | v max-deliveries | str dead-letter-key
//	              | v visibility-ms | v dead-lettered
const tagGroupConfig byte = 19

// groupConfig writes g's configuration record if it is not the default.
func (sw *snapWriter) groupConfig(g *groups.Group) {
	if g.Config.IsZero() && g.DeadLettered == 0 {
		return
	}
	sw.start(tagGroupConfig)
	sw.b = binary.AppendVarint(sw.b, g.Config.MaxDeliveries)
	sw.b = appendString(sw.b, g.Config.DeadLetterKey)
	sw.b = binary.AppendVarint(sw.b, g.Config.VisibilityMs)
	sw.b = binary.AppendVarint(sw.b, g.DeadLettered)
	sw.end()
}

// groupConfig reads the configuration record that may follow the records
// of g (the group just read).
func (sr *snapReader) groupConfig(key string, g *groups.Group) {
	if !sr.peekTag(tagGroupConfig) {
		return
	}
	sr.tag(tagGroupConfig, "group config")
	c := groups.Config{MaxDeliveries: sr.varint(), DeadLetterKey: sr.string(), VisibilityMs: sr.varint()}
	dead := sr.varint()
	if sr.err != nil {
		return
	}
	if c.MaxDeliveries < 0 || c.VisibilityMs < 0 || dead < 0 || (c.IsZero() && dead == 0) {
		sr.badf("key %q group %q: bad group config record", key, g.Name)
		return
	}
	g.Config, g.DeadLettered = c, dead
}
