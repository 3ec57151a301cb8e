package wire

// Effects is what an applied write did to the keyspace, as the server must
// react to it: Modified keys are Redis's signalModifiedKey (they abort a
// WATCH and invalidate client-side caching), Ready keys are its
// signalKeyAsReady / signalDeletedKeyAsReady (they wake blocked readers).
// Every Command says its own, next to its keys (effects method below), so a
// new op cannot be added without deciding them.
type Effects struct {
	// DB is the database the keys are in.
	DB int
	// Modified and Ready are the keys signalled (see above).
	Modified, Ready []string
	// FlushDBs are databases emptied by FLUSHDB; FlushAll says FLUSHALL ran.
	FlushDBs []int
	FlushAll bool
	// SwapDBs are databases whose contents SWAPDB exchanged: every key in
	// them may have changed (watchers dirtied, blocked readers woken).
	SwapDBs []int
	// Extra holds the effects of an EXEC's operations, each in the
	// database it ran in (SELECT inside MULTI).
	Extra []Effects
}

// EffectsOf says what cmd did given its answer (res, err as the shard
// returned them). It follows Redis 7's calls of signalModifiedKey and
// signalKeyAsReady: XADD, XDEL and XTRIM that removed something, DEL,
// RENAME, EXPIRE/PERSIST that changed something and expiry modify keys;
// XREADGROUP, XACK, XCLAIM, XAUTOCLAIM, XSETID and the XGROUP consumer
// subcommands do not (Redis does not abort a WATCH for them), but XGROUP
// CREATE, SETID and DESTROY wake blocked XREADGROUP clients. An
// XREADGROUP's own delivery wakes nobody.
func EffectsOf(cmd Command, res any, err error) Effects {
	if db, key, ok := XAddKey(cmd); ok {
		// The hot path: no effects method (it copies the XAdd and the
		// Effects in and out), and only the XAdd's Base is read.
		if err != nil || !xaddAdded(res) {
			return Effects{DB: db}
		}
		// One allocation: both lists are only read (an append copies).
		return XAddEffects(db, []string{key}, res, nil)
	}
	e := Effects{DB: cmd.Database()}
	if err == nil {
		// By value, not by pointer: a pointer passed to an interface
		// method escapes, and this runs for every write.
		e = cmd.effects(res, e)
	}
	return e
}

// XAddKey returns the database and key of cmd when it is an XAdd (ok false
// otherwise), without copying the XAdd out of the interface.
func XAddKey(cmd Command) (db int, key string, ok bool) {
	if _, ok := cmd.(XAdd); !ok {
		return 0, "", false
	}
	b := cmd.(baser).base()
	return b.DB, b.Key, true
}

// XAddEffects is EffectsOf of an XADD in db that answered res, err, whose
// key the caller holds in key (one element): Modified and Ready are key
// itself, so the pipelined XADD path allocates nothing for its effects.
// The caller keeps key unchanged while the Effects are in use.
func XAddEffects(db int, key []string, res any, err error) Effects {
	e := Effects{DB: db}
	if err == nil && xaddAdded(res) {
		e.Modified, e.Ready = key, key
	}
	return e
}

// xaddAdded reports whether an XADD that answered res added an entry: not
// NOMKSTREAM on a missing key (nil) nor an IDMP duplicate. Only then does
// it signal its key.
func xaddAdded(res any) bool {
	_, dup := res.(IDMPDuplicate)
	return res != nil && !dup
}

// count is an int64 answer (0 for any other).
func count(res any) int64 {
	n, _ := res.(int64)
	return n
}

// modifyReady signals keys both modified and ready.
func (e Effects) modifyReady(keys ...string) Effects {
	e.Modified = append(e.Modified, keys...)
	e.Ready = append(e.Ready, keys...)
	return e
}

func (c XAdd) effects(res any, e Effects) Effects {
	if !xaddAdded(res) {
		return e
	}
	if len(e.Modified) == 0 && len(e.Ready) == 0 {
		// The common case, one allocation: both lists are only read
		// (and an append to a full slice copies).
		k := []string{c.Key}
		e.Modified, e.Ready = k, k
		return e
	}
	return e.modifyReady(c.Key)
}

func (c XDel) effects(res any, e Effects) Effects {
	if count(res) > 0 {
		e.Modified = append(e.Modified, c.Key)
	}
	return e
}

func (c XTrim) effects(res any, e Effects) Effects {
	if count(res) > 0 {
		e.Modified = append(e.Modified, c.Key)
	}
	return e
}

func (c XGroupCreate) effects(_ any, e Effects) Effects {
	if c.MkStream {
		// Redis signals the key when MKSTREAM created it; the answer
		// does not say whether it did.
		e.Modified = append(e.Modified, c.Key)
	}
	e.Ready = append(e.Ready, c.Key)
	return e
}

func (c XGroupSetID) effects(_ any, e Effects) Effects {
	e.Ready = append(e.Ready, c.Key)
	return e
}

func (c XGroupDestroy) effects(res any, e Effects) Effects {
	if count(res) > 0 {
		e.Ready = append(e.Ready, c.Key)
	}
	return e
}

func (c Del) effects(res any, e Effects) Effects {
	if count(res) > 0 {
		return e.modifyReady(c.Names...)
	}
	return e
}

func (c Expired) effects(res any, e Effects) Effects {
	if count(res) > 0 {
		return e.modifyReady(c.Names...)
	}
	return e
}

func (c Rename) effects(res any, e Effects) Effects {
	if c.Src != c.Dst && (!c.NX || count(res) == 1) {
		return e.modifyReady(c.Src, c.Dst)
	}
	return e
}

func (c Expire) effects(res any, e Effects) Effects {
	if count(res) == 1 {
		// A deadline in the past deletes the key: wake its readers.
		return e.modifyReady(c.Key)
	}
	return e
}

func (c Persist) effects(res any, e Effects) Effects {
	if count(res) == 1 {
		e.Modified = append(e.Modified, c.Key)
	}
	return e
}

func (c FlushDB) effects(_ any, e Effects) Effects {
	e.FlushDBs = append(e.FlushDBs, c.DB)
	return e
}

func (FlushAll) effects(_ any, e Effects) Effects {
	e.FlushAll = true
	return e
}

func (c Exec) effects(res any, e Effects) Effects {
	outs, _ := res.([]Outcome)
	for i, op := range c.Ops {
		sub, ok := op.(Command)
		if !ok || i >= len(outs) {
			continue
		}
		// Every op of an EXEC carries its own database (SELECT inside
		// MULTI); collect per op.
		se := EffectsOf(sub, outs[i].Result, outs[i].Err)
		if len(se.Modified) > 0 || len(se.Ready) > 0 || len(se.FlushDBs) > 0 || se.FlushAll ||
			len(se.SwapDBs) > 0 || len(se.Extra) > 0 {
			e.Extra = append(e.Extra, se)
		}
	}
	return e
}

// Writes Redis signals nothing for.
func (XSetID) effects(_ any, e Effects) Effects               { return e }
func (XGroupCreateConsumer) effects(_ any, e Effects) Effects { return e }
func (XGroupDelConsumer) effects(_ any, e Effects) Effects    { return e }
func (XAck) effects(_ any, e Effects) Effects                 { return e }

// XREADGROUP, XCLAIM and XAUTOCLAIM signal nothing for the group, but the
// dead-letter streams they appended to are signalled (issue #15).
func (XReadGroup) effects(res any, e Effects) Effects { return deliveredEffects(res, e) }
func (XClaim) effects(res any, e Effects) Effects     { return deliveredEffects(res, e) }
func (XAutoClaim) effects(res any, e Effects) Effects { return deliveredEffects(res, e) }
func (ConfigSet) effects(_ any, e Effects) Effects    { return e }
