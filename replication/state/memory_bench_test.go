package state

import (
	"strconv"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// BenchmarkApplyXAdd measures XADD applied to a stream without groups, with
// a group of one consumer and with one of 1000 consumers: the memory
// accounting (settle) must not make it grow with the consumers.
func BenchmarkApplyXAdd(b *testing.B) {
	for _, consumers := range []int{0, 1, 1000} {
		b.Run(strconv.Itoa(consumers), func(b *testing.B) {
			ks := New()
			ks.Apply(wire.XAdd{Base: base("s"), ID: streams.IDSpec{Auto: true}, Fields: fv("f", "v"), Trim: wire.Trim{Limit: -1}}, 1)
			if consumers > 0 {
				ks.Apply(wire.XGroupCreate{Base: base("s"), Group: "g", EntriesRead: -1}, 1)
				for c := 0; c < consumers; c++ {
					ks.Apply(wire.XAdd{Base: base("s"), ID: streams.IDSpec{Auto: true}, Fields: fv("f", "v"), Trim: wire.Trim{Limit: -1}}, 1)
					ks.Apply(wire.XReadGroup{Group: "g", Consumer: "c" + strconv.Itoa(c), Count: 1, Streams: []wire.ReadStream{{Key: "s", New: true}}}, 1)
				}
			}
			cmd := wire.XAdd{Base: base("s"), ID: streams.IDSpec{Auto: true}, Fields: fv("f", "v"), Trim: wire.Trim{Limit: -1}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ks.Apply(cmd, 2)
			}
		})
	}
}
