package state

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"

	"streamd/replication/wire"
	"streamd/streams"
)

// opGen makes random but meaningful commands for the determinism and
// round-trip tests: it looks at a reference keyspace to pick IDs that exist
// or are pending, so deletes, acks and claims hit something.
type opGen struct {
	r   *rand.Rand
	ks  *Keyspace // the reference state IDs are picked from
	now int64
}

func newOpGen(seed uint64, ks *Keyspace) *opGen {
	return &opGen{r: rand.New(rand.NewPCG(seed, seed^0x5eed)), ks: ks, now: 1_000_000}
}

var (
	genKeys      = []string{"a", "b", "c"}
	genGroups    = []string{"g1", "g2"}
	genConsumers = []string{"c1", "c2", "c3"}
)

func (g *opGen) pick(s []string) string { return s[g.r.IntN(len(s))] }
func (g *opGen) chance(p float64) bool  { return g.r.Float64() < p }
func (g *opGen) db() int                { return g.r.IntN(2) }

// tick advances the time, sometimes backwards (the keyspace clamps it).
func (g *opGen) tick() int64 {
	if g.chance(0.05) {
		g.now -= int64(g.r.IntN(100))
	} else {
		g.now += int64(g.r.IntN(30))
	}
	return g.now
}

func (g *opGen) entries(db int, key string) []streams.Entry {
	res, err := g.ks.Query(wire.XRange{Base: wire.Base{DB: db, Key: key}, Start: streams.MinID, End: streams.MaxID, Count: -1}, g.now)
	if err != nil {
		return nil
	}
	return res.([]streams.Entry)
}

func (g *opGen) pending(db int, key, group string) []PendingEntry {
	res, err := g.ks.Query(wire.XPending{Base: wire.Base{DB: db, Key: key}, Group: group, IdleMs: -1,
		Start: streams.MinID, End: streams.MaxID, Count: 1000}, g.now)
	if err != nil {
		return nil
	}
	return res.([]PendingEntry)
}

// someID returns an ID of the stream, a pending one, or a made-up one near
// them.
func (g *opGen) someID(db int, key string) streams.ID {
	es := g.entries(db, key)
	switch {
	case len(es) > 0 && g.chance(0.7):
		return es[g.r.IntN(len(es))].ID
	case g.chance(0.5):
		if p := g.pending(db, key, g.pick(genGroups)); len(p) > 0 {
			return p[g.r.IntN(len(p))].ID
		}
	}
	return streams.ID{Ms: uint64(g.now - int64(g.r.IntN(500))), Seq: uint64(g.r.IntN(3))}
}

func (g *opGen) ids(db int, key string) []streams.ID {
	n := 1 + g.r.IntN(3)
	out := make([]streams.ID, n)
	for i := range out {
		out[i] = g.someID(db, key)
	}
	return out
}

func (g *opGen) trim(db int, key string) wire.Trim {
	t := wire.Trim{Limit: -1, Approx: g.chance(0.5)}
	if g.chance(0.5) {
		t.Strategy = wire.TrimMaxLen
		t.MaxLen = int64(g.r.IntN(200))
	} else {
		// A MINID near the start, so streams still grow.
		t.Strategy = wire.TrimMinID
		t.MinID = g.someID(db, key)
		if es := g.entries(db, key); len(es) > 0 {
			t.MinID = es[g.r.IntN(min(len(es), 12))].ID
		}
	}
	if t.Approx && g.chance(0.3) {
		t.Limit = int64(g.r.IntN(10))
	}
	if g.chance(0.4) {
		t.Ref = wire.RefMode(g.r.IntN(3))
	}
	return t
}

// refCommand returns an XDELEX or XACKDEL (Redis 8.2) in a random mode,
// on IDs of the stream or pending in the group.
func (g *opGen) refCommand(b wire.Base, group string) wire.Command {
	mode := wire.RefMode(g.r.IntN(3))
	if g.chance(0.5) {
		return wire.XDelEx{Base: b, Mode: mode, IDs: g.ids(b.DB, b.Key)}
	}
	var ids []streams.ID
	for _, p := range g.pending(b.DB, b.Key, group) {
		if g.chance(0.3) {
			ids = append(ids, p.ID)
		}
	}
	if len(ids) == 0 {
		ids = g.ids(b.DB, b.Key)
	}
	return wire.XAckDel{Base: b, Group: group, Mode: mode, IDs: ids}
}

func (g *opGen) fields() [][]byte {
	n := 1 + g.r.IntN(2)
	out := make([][]byte, 0, 2*n)
	for i := 0; i < n; i++ {
		out = append(out, []byte("f"+strconv.Itoa(i)), []byte(fmt.Sprint(g.r.Uint32()%1000)))
	}
	if g.chance(0.05) {
		out = append(out, []byte{}, []byte{0, 0xff, '\n'})
	}
	if g.chance(0.1) {
		// Large enough for stream-node-max-bytes to split nodes.
		out[1] = bytes.Repeat([]byte{'v'}, 50+g.r.IntN(700))
	}
	return out
}

// command returns a random command (not Exec when inExec).
func (g *opGen) command(inExec bool) wire.Command {
	db, key, group, consumer := g.db(), g.pick(genKeys), g.pick(genGroups), g.pick(genConsumers)
	b := wire.Base{DB: db, Key: key}
	if g.chance(0.3) {
		// Plain appends, so streams grow past a few nodes.
		return wire.XAdd{Base: b, ID: streams.IDSpec{Auto: true}, Fields: g.fields(), Trim: wire.Trim{Limit: -1}}
	}
	if g.chance(0.06) {
		return g.refCommand(b, group)
	}
	if g.chance(0.08) {
		return g.r8claimCommand(db, key, group, consumer)
	}
	if g.chance(0.04) {
		return g.retentionCommand(db, key)
	}
	if g.chance(0.03) {
		return g.groupConfigCommand(db, key, group)
	}
	switch x := g.r.IntN(100); {
	case x < 30:
		c := wire.XAdd{Base: b, Fields: g.fields(), Trim: wire.Trim{Limit: -1}, NoMkStream: g.chance(0.05)}
		switch y := g.r.IntN(10); {
		case y < 7:
			c.ID = streams.IDSpec{Auto: true}
		case y < 8:
			c.ID = streams.IDSpec{AutoSeq: true, ID: streams.ID{Ms: uint64(g.now)}}
		default:
			c.ID = streams.IDSpec{ID: streams.ID{Ms: uint64(g.now + int64(g.r.IntN(5)) - 2), Seq: uint64(g.r.IntN(3))}}
		}
		if g.chance(0.3) {
			c.Trim = g.trim(db, key)
		}
		if g.chance(0.3) {
			c.IDMP = g.idmp()
		}
		return c
	case x < 38:
		return wire.XDel{Base: b, IDs: g.ids(db, key)}
	case x < 42:
		return wire.XTrim{Base: b, Trim: g.trim(db, key)}
	case x < 44:
		c := wire.XSetID{Base: b, LastID: g.someID(db, key), EntriesAdded: -1}
		if g.chance(0.5) {
			c.LastID.Ms += uint64(g.r.IntN(100))
		}
		if g.chance(0.3) {
			c.EntriesAdded = int64(len(g.entries(db, key)) + g.r.IntN(50))
		}
		if g.chance(0.3) {
			id := g.someID(db, key)
			c.MaxDeletedID = &id
		}
		return c
	case x < 49:
		c := wire.XGroupCreate{Base: b, Group: group, MkStream: g.chance(0.5), EntriesRead: -1}
		switch g.r.IntN(3) {
		case 0:
			c.Dollar = true
		case 1:
			c.ID = g.someID(db, key)
		}
		if g.chance(0.3) {
			c.EntriesRead = int64(g.r.IntN(20))
		}
		return c
	case x < 51:
		return wire.XGroupSetID{Base: b, Group: group, ID: g.someID(db, key), Dollar: g.chance(0.3), EntriesRead: -1}
	case x < 52:
		return wire.XGroupDestroy{Base: b, Group: group}
	case x < 54:
		return wire.XGroupCreateConsumer{Base: b, Group: group, Consumer: consumer}
	case x < 55:
		return wire.XGroupDelConsumer{Base: b, Group: group, Consumer: consumer}
	case x < 67:
		c := wire.XReadGroup{DB: db, Group: group, Consumer: consumer, Count: int64(1 + g.r.IntN(5)), NoAck: g.chance(0.1)}
		rs := wire.ReadStream{Key: key, New: g.chance(0.8)}
		c.Streams = []wire.ReadStream{rs}
		if other := g.pick(genKeys); other != key && g.chance(0.3) {
			c.Streams = append(c.Streams, wire.ReadStream{Key: other, New: true})
		}
		return c
	case x < 73:
		var ids []streams.ID
		for _, p := range g.pending(db, key, group) {
			if g.chance(0.3) {
				ids = append(ids, p.ID)
			}
		}
		if len(ids) == 0 {
			ids = g.ids(db, key)
		}
		return wire.XAck{Base: b, Group: group, IDs: ids}
	case x < 79:
		c := wire.XClaim{Base: b, Group: group, Consumer: consumer, MinIdleMs: int64(g.r.IntN(100)),
			IDs: g.ids(db, key), IdleMs: -1, TimeMs: -1, RetryCount: -1, Force: g.chance(0.2), JustID: g.chance(0.2)}
		switch g.r.IntN(4) {
		case 0:
			c.IdleMs = int64(g.r.IntN(1000))
		case 1:
			c.TimeMs = g.now - int64(g.r.IntN(1000))
		}
		if g.chance(0.2) {
			c.RetryCount = int64(g.r.IntN(10))
		}
		if g.chance(0.1) {
			id := g.someID(db, key)
			c.LastID = &id
		}
		return c
	case x < 83:
		return wire.XAutoClaim{Base: b, Group: group, Consumer: consumer, MinIdleMs: int64(g.r.IntN(100)),
			Start: streams.MinID, Count: int64(1 + g.r.IntN(10)), JustID: g.chance(0.2)}
	case x < 86 && g.chance(0.3):
		return wire.Expire{Base: b, Ms: int64(g.r.IntN(20000)), Relative: true, Cond: wire.ExpireCond(g.r.IntN(5))}
	case x < 87:
		return wire.Persist{Base: b}
	case x < 89:
		return wire.Expired{DB: db, Names: genKeys}
	case x < 90 && g.chance(0.3):
		return wire.Del{DB: db, Names: []string{key}}
	case x < 91 && g.chance(0.3):
		return wire.Rename{DB: db, Src: key, Dst: g.pick(genKeys), NX: g.chance(0.5)}
	case x < 92:
		if g.chance(0.5) {
			return wire.ConfigSet{Name: "stream-node-max-bytes", Value: g.pick([]string{"0", "100", "300", "1000", "4096"})}
		}
		return wire.ConfigSet{Name: "stream-node-max-entries", Value: strconv.Itoa(g.r.IntN(9))}
	case x < 93 && g.chance(0.05):
		return wire.FlushDB{DB: db}
	case x < 97 && !inExec:
		c := wire.Exec{DB: db}
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			c.Ops = append(c.Ops, g.command(true))
		}
		if g.chance(0.5) {
			c.Ops = append(c.Ops, wire.XLen{Base: b})
		}
		return c
	case x >= 97:
		return g.idmpCommand(db, key)
	}
	return wire.XAdd{Base: b, ID: streams.IDSpec{Auto: true}, Fields: g.fields(), Trim: wire.Trim{Limit: -1}}
}

// idmp returns an IDMP clause from a few producers and iids, so that
// duplicates, evictions and expiries all happen.
func (g *opGen) idmp() wire.IDMP {
	return wire.IDMP{PID: g.pick([]string{"p1", "p2", "p3"}), IID: "i" + strconv.Itoa(g.r.IntN(12))}
}

// idmpCommand returns an XCFGSET, XIDMPRECORD, a CONFIG SET of an IDMP
// setting, an iid expiry sweep or an IDMP XADD.
func (g *opGen) idmpCommand(db int, key string) wire.Command {
	b := wire.Base{DB: db, Key: key}
	switch g.r.IntN(6) {
	case 5:
		return wire.IDMPExpired{DB: db, Names: genKeys}
	case 0:
		c := wire.XCfgSet{Base: b}
		if g.chance(0.4) { // ACKLEVEL (b15ack), alone or with the IDMP options
			c.AckLevel = wire.AckLevel(1 + g.r.IntN(2))
			if g.chance(0.5) {
				return c
			}
		}
		if g.chance(0.6) {
			c.Duration = int64(1 + g.r.IntN(3))
		}
		if c.Duration == 0 || g.chance(0.5) {
			c.MaxSize = int64(1 + g.r.IntN(5))
		}
		return c
	case 1:
		m := g.idmp()
		return wire.XIDMPRecord{Base: b, PID: m.PID, IID: m.IID, ID: g.someID(db, key)}
	case 2:
		if g.chance(0.5) {
			return wire.ConfigSet{Name: "stream-idmp-duration", Value: strconv.Itoa(1 + g.r.IntN(3))}
		}
		return wire.ConfigSet{Name: "stream-idmp-maxsize", Value: strconv.Itoa(1 + g.r.IntN(5))}
	}
	return wire.XAdd{Base: b, ID: streams.IDSpec{Auto: true}, Fields: g.fields(), Trim: wire.Trim{Limit: -1}, IDMP: g.idmp()}
}

func wireConfigNodeMax(v string) wire.ConfigSet {
	return wire.ConfigSet{Name: "stream-node-max-entries", Value: v}
}
