package state

// The state machine's clock (DESIGN §3): each write carries the time its
// leader stamped on it, and the keyspace clamps it so that time never goes
// backwards across leaders or restarts: now = max(entry time, lastNow). The
// clamped time is what IDs, deadlines, delivery and seen times use, and
// lastNow is part of snapshots.

// LastNow returns the greatest time any applied write ran at (0 before the
// first write): the floor Apply and Query clamp their time to.
func (ks *Keyspace) LastNow() int64 { return ks.lastNow }

// clampNow returns nowMs, or lastNow if that is later.
func (ks *Keyspace) clampNow(nowMs int64) int64 {
	if nowMs < ks.lastNow {
		return ks.lastNow
	}
	return nowMs
}
