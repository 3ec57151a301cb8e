package server

import (
	"time"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/router"
)

// The active expiry sweep. Expired keys are already absent to every
// operation (the engine compares deadlines with each op's time); the sweep
// deletes them for real, through the log like any write, so their memory is
// freed, blocked XREADGROUP clients get Redis's UNBLOCKED error, WATCH
// aborts and tracking clients are told — what Redis's activeExpireCycle
// does every 100 ms.

const (
	// expirySweepInterval is Redis's default hz 10.
	expirySweepInterval = 100 * time.Millisecond
	// expiryBatch bounds the keys one Expired entry deletes.
	expiryBatch = 256
	// expiryRounds bounds the batches per database per tick, so a flood
	// of expired keys cannot monopolise the write path.
	expiryRounds = 8
)

// startKeyspaceTasks starts the expiry sweep; it stops when the server's
// done channel closes (Close), which also stops the keyspace hub's unblocker. It is
// not counted in s.wg: Serve may call this while Close already waits.
func (s *Server) startKeyspaceTasks() {
	go func() {
		defer s.closeHub()
		t := time.NewTicker(expirySweepInterval)
		defer t.Stop()
		warned := false
		var idmp idmpSweeper
		var ret retentionSweeper
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
			}
			if err := s.sweepExpired(); err != nil && !warned {
				warned = true
				s.log.Warn("expiry sweep failed", "err", err)
			}
			if err := idmp.tick(s); err != nil && !warned {
				warned = true
				s.log.Warn("IDMP iid sweep failed", "err", err)
			}
			if err := ret.tick(s); err != nil && !warned {
				warned = true
				s.log.Warn("retention sweep failed", "err", err)
			}
		}
	}()
}

// sweepExpired deletes the keys past their deadline in every database of
// every shard this node leads (the leader of a shard sweeps it; the
// deletions reach the other replicas through the log): it asks the engine
// which keys have expired by the local clock, then proposes wire.Expired
// with them (the entry's time decides again, so a key given a later
// deadline meanwhile survives) and touches them.
func (s *Server) sweepExpired() error {
	var first error
	for i := range s.node.NumShards() {
		if !s.router.Leads(i) {
			continue
		}
		// One shard's failure does not hold up the others' sweep.
		if err := s.sweepShard(i); err != nil && !router.IsNotLeader(err) && first == nil {
			first = err
		}
	}
	return first
}

// sweepShard is sweepExpired on shard i.
func (s *Server) sweepShard(i int) error {
	sh := s.node.Shard(i)
	for db := 0; db < state.NumDatabases; db++ {
		for range expiryRounds {
			res, err := sh.Query(wire.ExpiredKeys{DB: db, Limit: expiryBatch})
			if err != nil {
				return err
			}
			keys, _ := res.([]string)
			if len(keys) == 0 {
				break
			}
			if _, err := s.applyOn(nil, i, wire.Expired{DB: db, Names: keys}); err != nil {
				return err
			}
			if len(keys) < expiryBatch {
				break
			}
		}
	}
	return nil
}
