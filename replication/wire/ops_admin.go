package wire

// The keyspace administration ops: COPY, RESTORE and SWAPDB (writes), DUMP,
// RANDOMKEY and MEMORY USAGE (reads). EXPIRETIME/PEXPIRETIME are TTL with
// Abs set; TOUCH is Exists; OBJECT ENCODING/REFCOUNT are Type.

// Copy is COPY source destination [DB n] [REPLACE]: the source key of DB
// (with its deadline, consumer groups and pending entries) copied to Dst in
// database DstDB. Result: int64 (1 copied, 0 not: no source, or the
// destination exists without REPLACE).
type Copy struct {
	DB      int
	Src     string
	DstDB   int
	Dst     string
	Replace bool
}

// Restore is RESTORE key ttl payload [REPLACE] [ABSTTL]: the key created
// from a DUMP payload (verified by the server before proposing; Apply
// decodes it). TTLMs is 0 for no deadline, else ms from the entry's time,
// or an absolute unix time in ms when Abs. Result: nil (OK).
type Restore struct {
	Base
	TTLMs   int64
	Abs     bool
	Replace bool
	Payload []byte
}

// SwapDB is SWAPDB a b: the two databases' contents exchanged. Result: nil
// (OK).
type SwapDB struct {
	A, B int
}

// Dump is DUMP key. Result: []byte (the payload), or nil when the key is
// absent.
type Dump struct{ Base }

// RandomKey is RANDOMKEY: the first live key at or after Seed in the
// database's SCAN order, wrapping around, so the server's random Seed makes
// it random while the state machine stays deterministic. Result: string, or
// nil when the database has no live key.
type RandomKey struct {
	DB   int
	Seed uint64
}

// MemoryUsage is MEMORY USAGE key [SAMPLES n]: an estimate of the bytes the
// key and its value take (0 Samples = every node). Result: int64, or nil
// when the key is absent.
type MemoryUsage struct {
	Base
	Samples int64
}

func (Copy) command()    {}
func (Restore) command() {}
func (SwapDB) command()  {}

func (Dump) query()        {}
func (RandomKey) query()   {}
func (MemoryUsage) query() {}

// Keys returns the source and the destination.
func (c Copy) Keys() []string { return []string{c.Src, c.Dst} }

// Database returns the source's database.
func (c Copy) Database() int { return c.DB }

// Keys returns nil: a swap touches every key of both databases (see
// Effects.SwapDBs).
func (SwapDB) Keys() []string { return nil }

// Database returns the first database.
func (c SwapDB) Database() int { return c.A }

// Keys returns nil.
func (RandomKey) Keys() []string { return nil }

// Database returns the database.
func (q RandomKey) Database() int { return q.DB }

func (c Copy) effects(res any, e Effects) Effects {
	if count(res) == 1 {
		// Redis signals the destination only (in its database).
		if c.DstDB == c.DB {
			e.Modified = append(e.Modified, c.Dst)
			e.Ready = append(e.Ready, c.Dst)
			return e
		}
		e.Extra = append(e.Extra, Effects{DB: c.DstDB, Modified: []string{c.Dst}, Ready: []string{c.Dst}})
	}
	return e
}

func (c Restore) effects(_ any, e Effects) Effects {
	// The key was created, or replaced and then dropped at once for a
	// deadline already past: either way it changed.
	return e.modifyReady(c.Key)
}

func (c SwapDB) effects(_ any, e Effects) Effects {
	e.SwapDBs = append(e.SwapDBs, c.A, c.B)
	return e
}
