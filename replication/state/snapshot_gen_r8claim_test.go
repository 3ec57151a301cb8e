package state

import (
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// r8claimCommand generates the Redis 8.4–8.10 consumer-group commands for
// the determinism test: XNACK (every mode, RETRYCOUNT, FORCE, IDs pending
// or not) and XREADGROUP with CLAIM, MAXCOUNT and MAXSIZE.
func (g *opGen) r8claimCommand(db int, key, group, consumer string) wire.Command {
	b := wire.Base{DB: db, Key: key}
	if g.chance(0.5) {
		c := wire.XNack{Base: b, Group: group, Mode: wire.NackMode(g.r.IntN(3)), RetryCount: -1, Force: g.chance(0.3)}
		for _, p := range g.pending(db, key, group) {
			if g.chance(0.4) {
				c.IDs = append(c.IDs, p.ID)
			}
		}
		if len(c.IDs) == 0 || g.chance(0.2) {
			c.IDs = append(c.IDs, g.ids(db, key)...)
		}
		if len(c.IDs) == 0 {
			c.IDs = []streams.ID{g.someID(db, key)}
		}
		if g.chance(0.2) {
			c.RetryCount = int64(g.r.IntN(5))
		}
		return c
	}
	c := wire.XReadGroup{DB: db, Group: group, Consumer: consumer, NoAck: g.chance(0.1),
		Claim: g.chance(0.8), MinIdleMs: int64(g.r.IntN(200))}
	if g.chance(0.6) {
		c.Count = int64(1 + g.r.IntN(4))
	}
	if g.chance(0.3) {
		c.MaxCount = int64(1 + g.r.IntN(6))
	}
	if g.chance(0.3) {
		c.MaxSize = int64(1 + g.r.IntN(200))
	}
	c.Streams = []wire.ReadStream{{Key: key, New: g.chance(0.9)}}
	if other := g.pick(genKeys); other != key && g.chance(0.3) {
		c.Streams = append(c.Streams, wire.ReadStream{Key: other, New: true})
	}
	return c
}

// TestGenCoversClaimAndNack checks that the determinism test's sequences
// do reach the NACK zone and claim entries through XREADGROUP ... CLAIM
// (so its byte-equal snapshots cover tag 12 and the time index).
func TestGenCoversClaimAndNack(t *testing.T) {
	ks := New()
	g := newOpGen(3, ks)
	zoneSteps, claimed := 0, 0
	for i := 0; i < 4000; i++ {
		cmd, now := g.command(false), g.tick()
		res, _ := ks.Apply(cmd, now)
		if kes, ok := res.([]KeyEntries); ok {
			for _, ke := range kes {
				for _, ci := range ke.Claim {
					if ci.DeliveryCount > 0 {
						claimed++
					}
				}
			}
		}
		for _, d := range ks.dbs {
			for _, o := range d.keys {
				for _, gr := range o.Groups.All() {
					if gr.PEL.NackedLen() > 0 {
						zoneSteps++
					}
				}
			}
		}
	}
	if zoneSteps == 0 || claimed == 0 {
		t.Fatalf("generator reached the NACK zone in %d group-steps and claimed %d entries", zoneSteps, claimed)
	}
	t.Logf("NACK zone non-empty in %d group-steps, %d entries claimed", zoneSteps, claimed)
}
