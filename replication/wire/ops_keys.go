package wire

func (XAdd) command()                 {}
func (XDel) command()                 {}
func (XTrim) command()                {}
func (XSetID) command()               {}
func (XGroupCreate) command()         {}
func (XGroupSetID) command()          {}
func (XGroupDestroy) command()        {}
func (XGroupCreateConsumer) command() {}
func (XGroupDelConsumer) command()    {}
func (XReadGroup) command()           {}
func (XAck) command()                 {}
func (XClaim) command()               {}
func (XAutoClaim) command()           {}
func (Del) command()                  {}
func (Rename) command()               {}
func (FlushDB) command()              {}
func (FlushAll) command()             {}
func (Expire) command()               {}
func (Persist) command()              {}
func (Expired) command()              {}
func (ConfigSet) command()            {}
func (Exec) command()                 {}

func (XRange) query()         {}
func (XLen) query()           {}
func (XRead) query()          {}
func (LastIDs) query()        {}
func (XPending) query()       {}
func (XInfoStream) query()    {}
func (XInfoGroups) query()    {}
func (XInfoConsumers) query() {}
func (Exists) query()         {}
func (Type) query()           {}
func (KeysMatch) query()      {}
func (Scan) query()           {}
func (DBSize) query()         {}
func (TTL) query()            {}

func streamKeys(ss []ReadStream) []string {
	keys := make([]string, len(ss))
	for i, s := range ss {
		keys[i] = s.Key
	}
	return keys
}

// Keys returns the streams read.
func (c XReadGroup) Keys() []string { return streamKeys(c.Streams) }

// Database returns the database.
func (c XReadGroup) Database() int { return c.DB }

// Keys returns the streams read.
func (q XRead) Keys() []string { return streamKeys(q.Streams) }

// Database returns the database.
func (q XRead) Database() int { return q.DB }

// Keys returns the keys deleted.
func (c Del) Keys() []string { return c.Names }

// Database returns the database.
func (c Del) Database() int { return c.DB }

// Keys returns the source and destination.
func (c Rename) Keys() []string { return []string{c.Src, c.Dst} }

// Database returns the database.
func (c Rename) Database() int { return c.DB }

// Keys returns nil: a flush touches every key (see Flushes).
func (FlushDB) Keys() []string { return nil }

// Database returns the database.
func (c FlushDB) Database() int { return c.DB }

// Keys returns nil: a flush touches every key (see Flushes).
func (FlushAll) Keys() []string { return nil }

// Database returns 0; FLUSHALL touches all databases.
func (FlushAll) Database() int { return 0 }

// Keys returns the keys expired.
func (c Expired) Keys() []string { return c.Names }

// Database returns the database.
func (c Expired) Database() int { return c.DB }

// Keys returns nil.
func (ConfigSet) Keys() []string { return nil }

// Database returns 0.
func (ConfigSet) Database() int { return 0 }

// Keys returns the keys of every operation, in order.
func (c Exec) Keys() []string {
	var keys []string
	for _, op := range c.Ops {
		keys = append(keys, op.Keys()...)
	}
	return keys
}

// Database returns the database EXEC started in.
func (c Exec) Database() int { return c.DB }

// Keys returns the keys.
func (q LastIDs) Keys() []string { return q.Names }

// Database returns the database.
func (q LastIDs) Database() int { return q.DB }

// Keys returns the keys.
func (q Exists) Keys() []string { return q.Names }

// Database returns the database.
func (q Exists) Database() int { return q.DB }

// Keys returns nil.
func (KeysMatch) Keys() []string { return nil }

// Database returns the database.
func (q KeysMatch) Database() int { return q.DB }

// Keys returns nil.
func (Scan) Keys() []string { return nil }

// Database returns the database.
func (q Scan) Database() int { return q.DB }

// Keys returns nil.
func (DBSize) Keys() []string { return nil }

// Database returns the database.
func (q DBSize) Database() int { return q.DB }

// Flushes reports which databases a command empties wholesale: db >= 0 for
// FLUSHDB, all for FLUSHALL (also inside an Exec).
func Flushes(c Command) (dbs []int, all bool) {
	switch c := c.(type) {
	case FlushDB:
		return []int{c.DB}, false
	case FlushAll:
		return nil, true
	case Exec:
		for _, op := range c.Ops {
			if cmd, ok := op.(Command); ok {
				d, a := Flushes(cmd)
				if a {
					return nil, true
				}
				dbs = append(dbs, d...)
			}
		}
	}
	return dbs, false
}

func (KeyspaceInfo) query() {}

// Keys returns nil.
func (KeyspaceInfo) Keys() []string { return nil }

// Database returns 0.
func (KeyspaceInfo) Database() int { return 0 }
