package pel

import (
	"fmt"
	"runtime"
	"streamd/internal/testutil"
	"testing"

	"streamd/streams"
)

// BenchmarkPELMemory1M builds a PEL of 1M pending entries, delivered in ID
// order to 10 consumers in turn (as XREADGROUP of a growing stream does),
// and reports the live heap bytes per pending entry. It measures; it does
// not judge. Run with
//
//	go test -run '^$' -bench PELMemory -benchtime 1x ./pel/
func BenchmarkPELMemory1M(b *testing.B) {
	const n = 1_000_000
	consumers := []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}
	var perEntry float64
	for i := 0; i < b.N; i++ {
		before := testutil.LiveHeap()
		p := New()
		for j := 0; j < n; j++ {
			id := streams.ID{Ms: 1_700_000_000_000 + uint64(j/4), Seq: uint64(j % 4)}
			p.Put(NACK{ID: id, Consumer: consumers[j%len(consumers)], DeliveryMs: 1_700_000_000_000 + int64(j), DeliveryCount: 1})
		}
		after := testutil.LiveHeap()
		perEntry = float64(after-before) / n
		runtime.KeepAlive(p)
	}
	b.ReportMetric(perEntry, "heapB/pending")
}

// BenchmarkPELMemory100kConsumers builds a PEL of 100k consumers with one
// pending entry each and reports the live heap bytes per consumer.
func BenchmarkPELMemory100kConsumers(b *testing.B) {
	const n = 100_000
	names := make([]string, n)
	for j := range names {
		names[j] = fmt.Sprintf("consumer-%06d", j)
	}
	var perConsumer float64
	for i := 0; i < b.N; i++ {
		before := testutil.LiveHeap()
		p := New()
		for j := 0; j < n; j++ {
			p.Put(NACK{ID: streams.ID{Ms: uint64(j)}, Consumer: names[j], DeliveryMs: int64(j), DeliveryCount: 1})
		}
		after := testutil.LiveHeap()
		perConsumer = float64(after-before) / n
		runtime.KeepAlive(p)
	}
	b.ReportMetric(perConsumer, "heapB/consumer")
}
