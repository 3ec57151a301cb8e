// Package replication is where writes are proposed: a Shard owns a keyspace
// and stamps each write with the time it is applied at. It is a single node
// for now; the next issue puts a Raft log behind Propose.
package replication

import (
	"sync"
	"time"

	"streamd/replication/state"
	"streamd/replication/wire"
)

// Shard serialises access to one keyspace: writes (Propose) under the write
// lock, reads (Query) under the read lock. It is safe for concurrent use.
type Shard struct {
	mu      sync.RWMutex
	ks      *state.Keyspace
	lastNow int64 // greatest time stamped on a write; guarded by mu
	clock   func() int64
}

// NewShard returns a shard over an empty keyspace, using the wall clock.
func NewShard() *Shard {
	return newShardClock(func() int64 { return time.Now().UnixMilli() })
}

// newShardClock returns a shard whose time comes from clock (for tests).
func newShardClock(clock func() int64) *Shard {
	return &Shard{ks: state.New(), clock: clock}
}

// Propose applies a write and returns its result. Its time is stamped here,
// the one place wall-clock time enters a write, and never goes backwards:
// now = max(clock, last stamped), so "*" IDs and deadlines stay monotonic
// even if the system clock steps back (DESIGN §3).
func (s *Shard) Propose(cmd wire.Command) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	if now < s.lastNow {
		now = s.lastNow
	}
	s.lastNow = now
	return s.ks.Apply(cmd, now)
}

// Query answers a read from the local state. Its time (which decides what
// has expired) is the local clock, clamped like Propose's so a read never
// sees a key that a write already treated as expired.
func (s *Shard) Query(q wire.Query) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.clock()
	if now < s.lastNow {
		now = s.lastNow
	}
	return s.ks.Query(q, now)
}

// NodeMaxEntries returns the keyspace's stream-node-max-entries (CONFIG GET).
func (s *Shard) NodeMaxEntries() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.NodeMaxEntries()
}

// NodeMaxBytes returns the keyspace's stream-node-max-bytes (CONFIG GET).
func (s *Shard) NodeMaxBytes() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.NodeMaxBytes()
}
