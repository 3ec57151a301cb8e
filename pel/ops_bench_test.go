package pel

import (
	"testing"

	"streamd/streams"
)

// BenchmarkPELDeliverAck is the PEL side of a consumer loop: each op
// delivers the next entry (Put of a new ID, to one of 16 consumers in turn)
// and acknowledges the one delivered 1000 ops earlier (Remove), so the PEL
// stays at 1000 pending entries.
func BenchmarkPELDeliverAck(b *testing.B) {
	consumers := make([]string, 16)
	for i := range consumers {
		consumers[i] = string(rune('a' + i))
	}
	p := New()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Put(NACK{ID: streams.ID{Ms: uint64(i)}, Consumer: consumers[i%16], DeliveryMs: int64(i), DeliveryCount: 1})
		if i >= 1000 {
			p.Remove(streams.ID{Ms: uint64(i - 1000)})
		}
	}
}

// BenchmarkPELGetRange1M looks up entries and reads XPENDING-sized ranges
// of a 1M-entry PEL.
func BenchmarkPELGetRange1M(b *testing.B) {
	p := New()
	for j := 0; j < 1_000_000; j++ {
		p.Put(NACK{ID: streams.ID{Ms: uint64(j)}, Consumer: "c", DeliveryMs: int64(j), DeliveryCount: 1})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := uint64(i*7919) % 1_000_000
		if _, ok := p.Get(streams.ID{Ms: k}); !ok {
			b.Fatal("missing")
		}
		p.ConsumerRange("c", streams.ID{Ms: k}, streams.MaxID, 10)
	}
}
