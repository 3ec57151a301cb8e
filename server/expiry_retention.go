package server

import (
	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/router"
)

// The retention sweep (issue #15). Retention is applied on every XADD to
// a stream; this sweep covers the streams that stop receiving and the
// groups left idle: once a second the leader of each shard looks at a
// slice of each database (SCAN order, resuming where it stopped, as the
// IDMP sweep) and proposes wire.RetentionSweep for the streams whose
// retention would remove entries now and wire.GroupsExpired for the groups
// idle past GROUP-IDLE-EXPIRE. Both Applies decide again with the entry's
// time, so every replica agrees and a group active meanwhile survives.

const (
	// retentionSweepEvery is how many expiry ticks (100 ms) pass between
	// two retention sweeps.
	retentionSweepEvery = 10
	// retentionSweepKeys bounds the keys one sweep looks at per database.
	retentionSweepKeys = 1000
	// retentionFullEvery: one sweep in this many (the first included)
	// walks and trims each stream from its head, not from where the last
	// trim found entries still needed (state.Retention's neededBelow), so
	// an entry freed by a change that did not move that position goes
	// within this many seconds.
	retentionFullEvery = 30
)

// retentionSweeper is the sweep's position in each database of each shard
// and the retention-held sums, owned by the keyspace-tasks goroutine.
type retentionSweeper struct {
	ticks   int
	sweeps  int
	cursors map[int]*[state.NumDatabases]uint64
	// pass sums retention-held over the current pass of a database; held
	// is the sum of its last complete pass (what the metric shows).
	pass, held map[int]*[state.NumDatabases]int64
}

// tick runs a sweep every retentionSweepEvery calls and publishes the
// held entries of the shards this node leads.
func (w *retentionSweeper) tick(s *Server) error {
	if w.ticks++; w.ticks < retentionSweepEvery {
		return nil
	}
	w.ticks = 0
	full := w.sweeps%retentionFullEvery == 0
	w.sweeps++
	if w.cursors == nil {
		w.cursors = map[int]*[state.NumDatabases]uint64{}
		w.pass = map[int]*[state.NumDatabases]int64{}
		w.held = map[int]*[state.NumDatabases]int64{}
	}
	var first error
	for i := range s.node.NumShards() {
		if !s.router.Leads(i) {
			// The new leader reports this shard's entries.
			delete(w.cursors, i)
			delete(w.pass, i)
			delete(w.held, i)
			continue
		}
		if w.cursors[i] == nil {
			w.cursors[i] = new([state.NumDatabases]uint64)
			w.pass[i] = new([state.NumDatabases]int64)
			w.held[i] = new([state.NumDatabases]int64)
		}
		if err := s.sweepRetention(i, w, full); err != nil && !router.IsNotLeader(err) && first == nil {
			first = err
		}
	}
	var held int64
	for _, h := range w.held {
		for _, n := range h {
			held += n
		}
	}
	s.stats.Retention.Held.Store(held)
	return first
}

// sweepRetention is one sweep of shard i (full: see retentionFullEvery).
func (s *Server) sweepRetention(i int, w *retentionSweeper, full bool) error {
	sh := s.node.Shard(i)
	cur, pass, held := w.cursors[i], w.pass[i], w.held[i]
	for db := range cur {
		sc := sh.RetentionDue(db, cur[db], retentionSweepKeys, full)
		cur[db] = sc.Next
		pass[db] += sc.Held
		if sc.Next == 0 {
			held[db], pass[db] = pass[db], 0
		}
		if len(sc.Trim) > 0 {
			if _, err := s.applyOn(nil, i, wire.RetentionSweep{DB: db, Names: sc.Trim, Full: full}); err != nil {
				return err
			}
		}
		if len(sc.ExpireKeys) == 0 {
			continue
		}
		res, err := s.applyOn(nil, i, wire.GroupsExpired{DB: db, Names: sc.ExpireKeys, Groups: sc.ExpireGroups})
		if err != nil {
			return err
		}
		x, _ := res.(wire.ExpiredGroups)
		for j, k := range x.Keys {
			s.log.Info("consumer group expired (GROUP-IDLE-EXPIRE)", "db", db, "key", k, "group", x.Groups[j])
		}
		s.stats.Retention.GroupsExpired.Add(int64(len(x.Keys)))
	}
	return nil
}
