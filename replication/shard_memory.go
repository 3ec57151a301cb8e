package replication

import "streamd/replication/state"

// Memory returns the shard's memory accounting per database (MEMORY STATS,
// INFO used_memory, maxmemory): the running totals the keyspace keeps as
// it applies writes, read under the read lock in O(databases).
func (s *Shard) Memory() []state.DBMemory {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.Memory()
}
