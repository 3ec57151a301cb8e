package state

import (
	"fmt"

	"streamd/replication/wire"
	"streamd/streams"
)

// Engine levels. A change to what Apply does with the same commands (here:
// where stream nodes split) cannot simply ship in a new build: a replica
// replaying an old log from its start must do what the old build did, or it
// ends with other nodes than a replica restored from a snapshot, and trims
// differently from then on. So the behaviour is chosen by the state's
// engine level, which changes only through the log (wire.EngineLevel, which
// the leader proposes once when the state is below CurrentLevel) and is
// kept in snapshots. Every replica switches at the same log index.
//
//	level 0  releases before level 1: nodes split at stream-node-max-entries
//	         only (stream-node-max-bytes was stored but not applied)
//	level 1  nodes also split at stream-node-max-bytes, as Redis does
const CurrentLevel = 1

// Level returns the engine level in force (0 for a state whose log never
// switched).
func (ks *Keyspace) Level() int64 { return ks.level }

// nodeMaxBytesInForce is the stream-node-max-bytes appends use: none below
// level 1.
func (ks *Keyspace) nodeMaxBytesInForce() int64 {
	if ks.level < 1 {
		return streams.NoNodeMaxBytes
	}
	return ks.nodeMaxBytes
}

// engineLevel applies wire.EngineLevel: the level only rises (a stale
// proposal for a lower level changes nothing) and never beyond what this
// build runs, so a build that does not know a level refuses it instead of
// behaving as an older level would.
func (ks *Keyspace) engineLevel(c wire.EngineLevel) (any, error) {
	if c.Level < 0 || c.Level > CurrentLevel {
		return nil, fmt.Errorf("ERR engine level %d is not supported by this build (it runs level %d)", c.Level, CurrentLevel)
	}
	ks.level = max(ks.level, c.Level)
	return ks.level, nil
}
