package server

import (
	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/router"
)

// The XADD IDMP iid sweep. A write to a stream drops its expired iids as it
// is applied (the entry's time decides), and reads count only live ones;
// this sweep frees the iids of streams no write touches, as Redis's
// per-second cron does: once a second the leader of each shard looks at a
// slice of each database (SCAN order, resuming where it stopped) and
// proposes wire.IDMPExpired for the streams holding expired iids.

const (
	// idmpSweepEvery is how many expiry ticks (100 ms) pass between two
	// iid sweeps: Redis's cron runs every second.
	idmpSweepEvery = 10
	// idmpSweepKeys bounds the keys one sweep looks at per database.
	idmpSweepKeys = 1000
)

// idmpSweeper is the sweep's position in each database of each shard,
// owned by the keyspace-tasks goroutine.
type idmpSweeper struct {
	ticks   int
	cursors map[int]*[state.NumDatabases]uint64
}

// tick runs a sweep every idmpSweepEvery calls.
func (w *idmpSweeper) tick(s *Server) error {
	if w.ticks++; w.ticks < idmpSweepEvery {
		return nil
	}
	w.ticks = 0
	if w.cursors == nil {
		w.cursors = map[int]*[state.NumDatabases]uint64{}
	}
	var first error
	for i := range s.node.NumShards() {
		if !s.router.Leads(i) {
			continue
		}
		cur := w.cursors[i]
		if cur == nil {
			cur = new([state.NumDatabases]uint64)
			w.cursors[i] = cur
		}
		if err := s.sweepIDMP(i, cur); err != nil && !router.IsNotLeader(err) && first == nil {
			first = err
		}
	}
	return first
}

// sweepIDMP is one sweep of shard i from the cursors cur.
func (s *Server) sweepIDMP(i int, cur *[state.NumDatabases]uint64) error {
	sh := s.node.Shard(i)
	for db := range cur {
		keys, next := sh.IDMPExpiring(db, cur[db], idmpSweepKeys)
		cur[db] = next
		if len(keys) == 0 {
			continue
		}
		if _, err := s.applyOn(nil, i, wire.IDMPExpired{DB: db, Names: keys}); err != nil {
			return err
		}
	}
	return nil
}
