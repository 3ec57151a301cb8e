package state

import (
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// retentionCommand returns an XCFGSET with retention options, a retention
// sweep, a group expiry (of every key and group: the Apply decides) or a
// RESTORE of another key's DUMP (which carries the settings and restarts
// the groups' idle times).
func (g *opGen) retentionCommand(db int, key string) wire.Command {
	b := wire.Base{DB: db, Key: key}
	switch g.r.IntN(6) {
	case 5:
		if p, _ := g.ks.Query(wire.Dump{Base: wire.Base{DB: db, Key: g.pick(genKeys)}}, g.now); p != nil {
			return wire.Restore{Base: b, Payload: p.([]byte), Replace: g.chance(0.8)}
		}
		fallthrough
	case 0:
		return wire.RetentionSweep{DB: db, Names: genKeys, Full: g.chance(0.5)}
	case 1:
		c := wire.GroupsExpired{DB: db}
		for _, k := range genKeys {
			for _, gr := range genGroups {
				if g.chance(0.7) {
					c.Names, c.Groups = append(c.Names, k), append(c.Groups, gr)
				}
			}
		}
		return c
	}
	var s wire.RetentionSet
	for s.IsZero() {
		switch {
		case g.chance(0.1):
			s.SetMaxLen, s.MaxLen, s.SetMaxAge = true, -1, true // NONE
		default:
			if g.chance(0.5) {
				s.SetMaxLen, s.MaxLen = true, int64(g.r.IntN(12))
			}
			if g.chance(0.4) {
				s.SetMaxAge, s.MaxAgeMs = true, int64(50+g.r.IntN(3000))
			}
		}
		if g.chance(0.3) {
			s.SetPolicy, s.Policy = true, byte(g.r.IntN(2))
		}
		if g.chance(0.4) {
			s.SetIdleExpire = true
			if g.chance(0.8) {
				s.IdleExpireMs = int64(100 + g.r.IntN(3000))
			}
		}
	}
	return wire.XCfgSet{Base: b, Ret: s}
}

// TestGenCoversRetention checks the generator's retention commands do
// something: streams get trimmed by retention, held back by groups, and
// groups expire; and that an XADD's retention trim, which starts from
// neededBelow, leaves nothing a full trim would remove.
func TestGenCoversRetention(t *testing.T) {
	var trimmed, expired int64
	held := false
	for _, seed := range []uint64{11, 3, 7, 20} {
		retentionGenRun(t, seed, &trimmed, &expired, &held)
	}
	if trimmed == 0 || expired == 0 || !held {
		t.Fatalf("sweeps trimmed %d entries, expired %d groups, held seen %v", trimmed, expired, held)
	}
}

func retentionGenRun(t *testing.T, seed uint64, trimmed, expired *int64, held *bool) {
	ks := New()
	g := newOpGen(seed, ks)
	for i := 0; i < 6000; i++ {
		cmd, now := g.command(false), g.tick()
		res, err := ks.Apply(cmd, now)
		if err != nil {
			continue
		}
		switch c := cmd.(type) {
		case wire.XAdd:
			if _, ok := res.(streams.ID); ok {
				if o := ks.db(c.DB).keys[c.Key]; o != nil {
					if n, _ := retentionCounts(o, ks.LastNow(), true); n != 0 {
						t.Fatalf("seed %d step %d: %d entries left for a full trim after XADD %s", seed, i, n, c.Key)
					}
				}
			}
		case wire.RetentionSweep:
			*trimmed += res.(int64)
		case wire.GroupsExpired:
			*expired += int64(len(res.(wire.ExpiredGroups).Groups))
		}
		for _, d := range ks.dbs {
			for k, o := range d.keys {
				r, h := retentionCounts(o, ks.LastNow(), true)
				if r2, h2 := retentionCounts(o, ks.LastNow(), false); r != r2 || h != h2 {
					t.Fatalf("seed %d step %d %s: from neededBelow %d/%d, from the head %d/%d", seed, i, k, r2, h2, r, h)
				}
				if h > 0 {
					*held = true
				}
			}
		}
	}
}
