package server

import (
	"sync"
	"time"

	"streamd/replication/state"
	"streamd/replication/wire"
)

// OBJECT IDLETIME needs a key's last access, which Redis keeps in the
// object (its LRU clock). The state machine reads no clock, so the access
// times live here, on the node serving the key (its shard's leader, where
// every command on it runs), outside the replicated state: every command
// that looks a key up records it, except those Redis looks up with
// LOOKUP_NOTOUCH (TYPE, TTL/PTTL/EXPIRETIME, EXISTS, OBJECT, MEMORY USAGE).
// A key never accessed on this node since it started (a restart, a leader
// change) is as idle as the node is old.

// maxAccessKeys bounds the table: beyond it, arbitrary entries are dropped
// (those keys then count as idle since the start).
const maxAccessKeys = 1 << 20

// accessTimes is the per-database key → last access (unix ms) table.
type accessTimes struct {
	mu  sync.Mutex
	dbs [state.NumDatabases]map[string]int64
	n   int
}

func newAccessTimes() *accessTimes {
	a := &accessTimes{}
	for i := range a.dbs {
		a.dbs[i] = map[string]int64{}
	}
	return a
}

// noTouch reports whether Redis looks op's keys up without touching them.
func noTouch(op wire.Op) bool {
	switch op.(type) {
	case wire.Type, wire.TTL, wire.Exists, wire.MemoryUsage, wire.Expired, wire.IDMPExpired,
		wire.RetentionSweep, wire.GroupsExpired:
		return true
	}
	return false
}

// touch records an access to op's keys (of every op of an EXEC) at now.
func (a *accessTimes) touch(op wire.Op, now time.Time) {
	if x, ok := op.(wire.Exec); ok {
		for _, sub := range x.Ops {
			a.touch(sub, now)
		}
		return
	}
	if noTouch(op) {
		return
	}
	var buf [1]string
	keys := wire.AppendKeys(buf[:0], op)
	if len(keys) == 0 {
		return
	}
	a.set(op.Database(), keys, now.UnixMilli())
}

// set records keys of database db as accessed at ms.
func (a *accessTimes) set(db int, keys []string, ms int64) {
	if db < 0 || db >= len(a.dbs) {
		return
	}
	a.mu.Lock()
	a.setLocked(db, keys, ms)
	a.mu.Unlock()
}

// setLocked is set with a.mu held (db in range).
func (a *accessTimes) setLocked(db int, keys []string, ms int64) {
	m := a.dbs[db]
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			if a.n >= maxAccessKeys {
				a.evictOne()
			}
			a.n++
		}
		m[k] = ms
	}
}

// touchAll records an access to the keys of ops (plain writes of one
// pipeline, none an EXEC) at now, under one hold of the lock; a key that
// repeats the one before it (a pipeline of XADDs to one stream) is
// recorded once.
func (a *accessTimes) touchAll(ops []wire.Command, now time.Time) {
	if len(ops) == 0 {
		return
	}
	ms := now.UnixMilli()
	var buf [1]string
	lastDB, last := -1, ""
	a.mu.Lock()
	for _, op := range ops {
		if noTouch(op) {
			continue
		}
		db := op.Database()
		if db < 0 || db >= len(a.dbs) {
			continue
		}
		keys := wire.AppendKeys(buf[:0], op)
		if len(keys) == 1 && db == lastDB && keys[0] == last {
			continue
		}
		a.setLocked(db, keys, ms)
		if len(keys) == 1 {
			lastDB, last = db, keys[0]
		} else {
			lastDB = -1
		}
	}
	a.mu.Unlock()
}

// evictOne drops one arbitrary entry; a.mu is held.
func (a *accessTimes) evictOne() {
	for _, m := range a.dbs {
		for k := range m {
			delete(m, k)
			a.n--
			return
		}
	}
}

// last returns the key's last access (unix ms) and whether it is known.
func (a *accessTimes) last(db int, key string) (int64, bool) {
	if db < 0 || db >= len(a.dbs) {
		return 0, false
	}
	a.mu.Lock()
	ms, ok := a.dbs[db][key]
	a.mu.Unlock()
	return ms, ok
}

// accessAffected reports whether a successful write changes access times
// beyond touching its keys: it dropped, renamed or moved keys (not so for
// every XADD).
func accessAffected(op wire.Command, e wire.Effects) bool {
	switch op.(type) {
	case wire.Del, wire.Expired, wire.Rename, wire.Exec:
		return true
	}
	return e.FlushAll || len(e.FlushDBs) > 0 || len(e.SwapDBs) == 2
}

// applied updates the table after a write: deleted keys are forgotten,
// flushed databases emptied, swapped databases swapped.
func (a *accessTimes) applied(op wire.Command, res any, err error, e wire.Effects) {
	if err != nil || !accessAffected(op, e) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.appliedLocked(op, res, e)
}

func (a *accessTimes) appliedLocked(op wire.Command, res any, e wire.Effects) {
	switch o := op.(type) {
	case wire.Del:
		a.forget(o.DB, o.Names)
	case wire.Expired:
		a.forget(o.DB, o.Names)
	case wire.Rename:
		if ms, ok := a.dbs[o.DB][o.Src]; ok && o.Src != o.Dst {
			a.forget(o.DB, []string{o.Src})
			a.dbs[o.DB][o.Dst] = ms
			a.n++
		}
	case wire.Exec:
		outs, _ := res.([]wire.Outcome)
		for i, sub := range o.Ops {
			if c, ok := sub.(wire.Command); ok && i < len(outs) && outs[i].Err == nil {
				a.appliedLocked(c, outs[i].Result, wire.EffectsOf(c, outs[i].Result, nil))
			}
		}
		return
	}
	if e.FlushAll {
		for i := range a.dbs {
			a.n -= len(a.dbs[i])
			a.dbs[i] = map[string]int64{}
		}
	}
	for _, db := range e.FlushDBs {
		if db >= 0 && db < len(a.dbs) {
			a.n -= len(a.dbs[db])
			a.dbs[db] = map[string]int64{}
		}
	}
	if len(e.SwapDBs) == 2 {
		x, y := e.SwapDBs[0], e.SwapDBs[1]
		if x >= 0 && y >= 0 && x < len(a.dbs) && y < len(a.dbs) {
			a.dbs[x], a.dbs[y] = a.dbs[y], a.dbs[x]
		}
	}
}

// forget drops keys of database db; a.mu is held.
func (a *accessTimes) forget(db int, keys []string) {
	if db < 0 || db >= len(a.dbs) {
		return
	}
	for _, k := range keys {
		if _, ok := a.dbs[db][k]; ok {
			delete(a.dbs[db], k)
			a.n--
		}
	}
}

// idleSeconds is OBJECT IDLETIME's answer for an existing key.
func (s *Server) idleSeconds(db int, key string) int64 {
	now := time.Now()
	last, ok := s.access.last(db, key)
	if !ok {
		return int64(now.Sub(s.startTime) / time.Second)
	}
	return max(now.UnixMilli()-last, 0) / 1000
}
