package replication

import "streamd/replication/state"

// RetentionDue looks at up to count keys of database db, from cursor in
// SCAN order, and reports by this node's clock the streams retention
// would trim, the groups idle past GROUP-IDLE-EXPIRE and the entries
// retention holds (state.Keyspace.RetentionDue): the retention sweep's
// query. full walks each stream from its head.
func (s *Shard) RetentionDue(db int, cursor uint64, count int, full bool) state.RetentionScan {
	now := s.clock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ks.RetentionDue(db, cursor, count, max(now, s.ks.LastNow()), full)
}
