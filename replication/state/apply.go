package state

import (
	"fmt"

	"streamd/replication/wire"
)

// Apply applies a write with the log entry's time nowMs (unix ms) and
// returns its result (the "Result:" of each wire type) or an error whose
// Error() is Redis's reply text. The time is first clamped so it never goes
// below an earlier write's (see LastNow). It runs on the FSM goroutine only;
// the same command on the same state with the same nowMs gives the same
// result and state on every replica.
func (ks *Keyspace) Apply(cmd wire.Command, nowMs int64) (any, error) {
	res, err := ks.apply(cmd, nowMs)
	ks.noteGroupActivity(cmd, err, ks.lastNow)
	ks.settle()
	return res, err
}

// apply is Apply before the memory accounting settles.
func (ks *Keyspace) apply(cmd wire.Command, nowMs int64) (any, error) {
	nowMs = ks.clampNow(nowMs)
	ks.lastNow = nowMs
	switch c := cmd.(type) {
	case wire.XAdd:
		return ks.xadd(c, nowMs)
	case wire.XDel:
		return ks.xdel(c, nowMs)
	case wire.XTrim:
		return ks.xtrim(c, nowMs)
	case wire.XSetID:
		return ks.xsetid(c, nowMs)
	case wire.XDelEx:
		return ks.xdelex(c, nowMs)
	case wire.XAckDel:
		return ks.xackdel(c, nowMs)
	case wire.Del:
		return ks.del(c, nowMs)
	case wire.Rename:
		return ks.rename(c, nowMs)
	case wire.FlushDB:
		return ks.flushDB(c)
	case wire.FlushAll:
		return ks.flushAll()
	case wire.Expire:
		return ks.expire(c, nowMs)
	case wire.Persist:
		return ks.persist(c, nowMs)
	case wire.Expired:
		return ks.expiredSweep(c, nowMs)
	case wire.ConfigSet:
		return ks.configSet(c)
	case wire.ACLSetUser:
		return ks.aclSetUser(c)
	case wire.ACLDelUser:
		return ks.aclDelUser(c)
	case wire.ACLLoad:
		return ks.aclLoad(c)
	case wire.Exec:
		return ks.exec(c, nowMs), nil
	case wire.Copy:
		return ks.copyKey(c, nowMs)
	case wire.Restore:
		return ks.restore(c, nowMs)
	case wire.SwapDB:
		return ks.swapDB(c)
	case wire.EngineLevel:
		return ks.engineLevel(c)
	case wire.XCfgSet:
		return ks.xcfgset(c, nowMs)
	case wire.XIDMPRecord:
		return ks.xidmprecord(c, nowMs)
	case wire.IDMPExpired:
		return ks.idmpExpired(c, nowMs)
	case wire.RetentionSweep:
		return ks.retentionSweep(c, nowMs)
	case wire.GroupsExpired:
		return ks.groupsExpired(c, nowMs)
	}
	if res, err, ok := ks.applyGroupOp(cmd, nowMs); ok {
		return res, err
	}
	return nil, fmt.Errorf("ERR unsupported command %T", cmd)
}

// Query answers a read from the current state at time nowMs (which only
// decides which keys have expired: a query never changes state), clamped to
// LastNow so a read never sees a key that a write already treated as
// expired.
func (ks *Keyspace) Query(q wire.Query, nowMs int64) (any, error) {
	nowMs = ks.clampNow(nowMs)
	switch q := q.(type) {
	case wire.XRange:
		return ks.xrange(q, nowMs)
	case wire.XLen:
		return ks.xlen(q, nowMs)
	case wire.XRead:
		return ks.xread(q, nowMs)
	case wire.LastIDs:
		return ks.lastIDs(q, nowMs)
	case wire.Exists:
		return ks.exists(q, nowMs)
	case wire.Type:
		return ks.typeOf(q, nowMs)
	case wire.KeysMatch:
		return ks.keysMatch(q, nowMs)
	case wire.Scan:
		return ks.scan(q, nowMs)
	case wire.DBSize:
		return ks.dbSize(q, nowMs)
	case wire.TTL:
		return ks.ttl(q, nowMs)
	case wire.KeyspaceInfo:
		return ks.keyspaceInfo(nowMs)
	case wire.ExpiredKeys:
		return ks.expiredKeys(q, nowMs)
	case wire.Dump:
		return ks.dump(q, nowMs)
	case wire.RandomKey:
		return ks.randomKey(q, nowMs)
	case wire.MemoryUsage:
		return ks.memoryUsage(q, nowMs)
	}
	if res, err, ok := ks.queryGroupOp(q, nowMs); ok {
		return res, err
	}
	return nil, fmt.Errorf("ERR unsupported query %T", q)
}

// exec applies EXEC's operations in order with one time, as Redis runs a
// transaction at one command time: writes through Apply, reads through
// Query (seeing the earlier writes). An error in one operation does not stop
// the others; each gets its own Outcome.
func (ks *Keyspace) exec(c wire.Exec, nowMs int64) []wire.Outcome {
	out := make([]wire.Outcome, len(c.Ops))
	for i, op := range c.Ops {
		var res any
		var err error
		switch op := op.(type) {
		case wire.Command:
			res, err = ks.Apply(op, nowMs)
		case wire.Query:
			res, err = ks.Query(op, nowMs)
		default:
			err = fmt.Errorf("ERR unsupported operation %T", op)
		}
		out[i] = wire.Outcome{Result: res, Err: err}
	}
	return out
}
