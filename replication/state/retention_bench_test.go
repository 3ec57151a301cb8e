package state

import (
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// BenchmarkXADDRetention measures an XADD on a stream with MAXLEN retention
// under each policy, with held entries (read by a group, never
// acknowledged) at its head: ACKED's trim walks them on every XADD.
func BenchmarkXADDRetention(b *testing.B) {
	for _, bc := range []struct {
		name   string
		policy byte
		held   int
	}{
		{"keepref", wire.PolicyKeepRef, 10000},
		{"acked-none-held", wire.PolicyAcked, 0},
		{"acked-10k-held", wire.PolicyAcked, 10000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ks := New()
			now := int64(1000)
			for range 1000 + bc.held {
				ks.Apply(xadd("s", "*"), now)
			}
			ks.Apply(wire.XGroupCreate{Base: base("s"), Group: "g", ID: streams.MinID, EntriesRead: -1}, now)
			if bc.held > 0 {
				ks.Apply(wire.XReadGroup{Group: "g", Consumer: "c", Count: int64(bc.held),
					Streams: []wire.ReadStream{{Key: "s", New: true}}}, now)
			}
			if bc.held == 0 {
				ks.Apply(wire.XGroupSetID{Base: base("s"), Group: "g", Dollar: true, EntriesRead: -1}, now)
			}
			ks.Apply(wire.XCfgSet{Base: base("s"), Ret: wire.RetentionSet{SetMaxLen: true, MaxLen: 1000,
				SetPolicy: true, Policy: bc.policy}}, now)
			b.ResetTimer()
			for range b.N {
				if bc.held == 0 {
					ks.Apply(wire.XGroupSetID{Base: base("s"), Group: "g", Dollar: true, EntriesRead: -1}, now)
				}
				if _, err := ks.Apply(xadd("s", "*"), now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
