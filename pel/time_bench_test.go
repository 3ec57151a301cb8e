package pel

import (
	"runtime"
	"testing"

	"streamd/internal/testutil"
	"streamd/streams"
)

// BenchmarkPELTimeIndexMemory1M reports what the delivery-time index adds
// per pending entry once a group of 1M pending entries is read with CLAIM
// (a group never read with CLAIM nor NACKed pays nothing), and the time to
// build it. Run with
//
//	go test -run '^$' -bench TimeIndex -benchtime 1x ./pel/
func BenchmarkPELTimeIndexMemory1M(b *testing.B) {
	const n = 1_000_000
	p := New()
	for j := 0; j < n; j++ {
		id := streams.ID{Ms: 1_700_000_000_000 + uint64(j/4), Seq: uint64(j % 4)}
		p.Put(NACK{ID: id, Consumer: "c", DeliveryMs: 1_700_000_000_000 + int64(j), DeliveryCount: 1})
	}
	var perEntry float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := p.Clone()
		before := testutil.LiveHeap()
		q.AscendByTime(func(NACK) bool { return false }) // builds the index
		perEntry = float64(testutil.LiveHeap()-before) / n
		runtime.KeepAlive(q)
	}
	b.ReportMetric(perEntry, "heapB/pending")
}
