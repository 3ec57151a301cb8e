package state

import (
	"fmt"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// BenchmarkXAddTrimRefModes is a bounded stream fed by XADD MAXLEN ~ 1000
// in each mode, with a group whose consumer reads every entry at once and
// acknowledges it a fixed distance behind the producer (lag 100 or 2000:
// the latter keeps entries beyond MAXLEN pending, which ACKED keeps, as
// Redis does, by visiting each of them on every XADD: the stream stays at
// about 2000 entries and each XADD costs O(2000); DELREF drops them from
// the PEL instead).
func BenchmarkXAddTrimRefModes(b *testing.B) {
	for _, lag := range []int{100, 2000} {
		for _, mode := range []struct {
			name string
			ref  wire.RefMode
		}{{"keepref", wire.RefKeep}, {"delref", wire.RefDelete}, {"acked", wire.RefAcked}} {
			b.Run(fmt.Sprintf("lag%d/%s", lag, mode.name), func(b *testing.B) {
				ks := New()
				now := int64(1_700_000_000_000)
				add := func(i int) {
					ks.Apply(wire.XAdd{Base: base("s"), ID: streams.IDSpec{ID: streams.ID{Ms: uint64(i + 1)}},
						Fields: [][]byte{[]byte("f"), []byte("v")},
						Trim:   wire.Trim{Strategy: wire.TrimMaxLen, MaxLen: 1000, Approx: true, Limit: -1, Ref: mode.ref}}, now)
				}
				ks.Apply(wire.XGroupCreate{Base: base("s"), Group: "g", MkStream: true, EntriesRead: -1}, now)
				read := func() {
					ks.Apply(wire.XReadGroup{Group: "g", Consumer: "c", Count: 1,
						Streams: []wire.ReadStream{{Key: "s", New: true}}}, now)
				}
				step := func(i int) {
					add(i)
					read()
					if i >= lag {
						ks.Apply(wire.XAck{Base: base("s"), Group: "g", IDs: []streams.ID{{Ms: uint64(i - lag + 1)}}}, now)
					}
				}
				const warm = 3000
				for i := 0; i < warm; i++ {
					step(i)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					step(warm + i)
				}
				b.StopTimer()
				res, _ := ks.Query(wire.XLen{Base: base("s")}, now)
				b.ReportMetric(float64(res.(int64)), "xlen")
			})
		}
	}
}
