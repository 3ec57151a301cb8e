package state

import (
	"testing"

	"streamd/replication/wire"
)

// groupConfigCommand generates XGROUP CONFIG (issue #15) for the
// determinism test: MAXDELIVERIES, DEADLETTER (another generated stream, a
// fresh key, the stream itself or NONE) and VISIBILITY, each set or not,
// so the plain XREADGROUP, XCLAIM, XAUTOCLAIM and CLAIM reads the generator
// makes redeliver and dead-letter.
func (g *opGen) groupConfigCommand(db int, key, group string) wire.Command {
	c := wire.XGroupConfig{Base: wire.Base{DB: db, Key: key}, Group: group}
	for c == (wire.XGroupConfig{Base: c.Base, Group: group}) {
		if g.chance(0.6) {
			c.SetMaxDeliveries = true
			if g.chance(0.85) {
				c.MaxDeliveries = int64(1 + g.r.IntN(4))
			}
		}
		if g.chance(0.6) {
			c.SetDeadLetter = true
			switch x := g.r.IntN(10); {
			case x < 6:
				c.DeadLetter = g.pick(genKeys)
			case x < 8:
				c.DeadLetter = "dlq"
			case x < 9:
				c.DeadLetter = key // refused
			}
		}
		if g.chance(0.6) {
			c.SetVisibility = true
			if g.chance(0.85) {
				c.VisibilityMs = int64(1 + g.r.IntN(150))
			}
		}
	}
	return c
}

// TestGenCoversGroupConfig checks that the determinism test's sequences do
// dead-letter entries (to a stream and dropped) and redeliver by a
// visibility timeout, so its byte-equal snapshots cover tag 19 and the
// dead-letter appends.
func TestGenCoversGroupConfig(t *testing.T) {
	ks := New()
	g := newOpGen(5, ks)
	var dead, redelivered, appended int64
	for i := 0; i < 4000; i++ {
		cmd, now := g.command(false), g.tick()
		res, _ := ks.Apply(cmd, now)
		if d, ok := res.(wire.Delivered); ok {
			dead += d.DeadLettered
			redelivered += d.Redelivered
			if len(d.DeadLetterKeys) > 0 {
				appended++
			}
		}
	}
	if dead == 0 || redelivered == 0 || appended == 0 {
		t.Fatalf("generator dead-lettered %d entries (%d applies appended), redelivered %d", dead, appended, redelivered)
	}
	t.Logf("dead-lettered %d (%d applies appended to a stream), redelivered %d", dead, appended, redelivered)
}
