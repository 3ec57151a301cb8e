package groups

import (
	"runtime"
	"streamd/internal/testutil"
	"testing"

	"streamd/streams"
)

// BenchmarkGroupPendingMemory1M builds a stream of 1M entries, then a group
// whose single consumer reads them all with XREADGROUP ">" (all 1M pending),
// and reports the live heap bytes the group adds per pending entry. It
// measures; it does not judge. Run with
//
//	go test -run '^$' -bench PendingMemory -benchtime 1x ./groups/
func BenchmarkGroupPendingMemory1M(b *testing.B) {
	const n = 1_000_000
	s := streams.New()
	fields := [][]byte{[]byte("f"), []byte("v")}
	for j := 0; j < n; j++ {
		s.Append(streams.ID{Ms: 1_700_000_000_000 + uint64(j/4), Seq: uint64(j % 4)}, fields)
	}
	var perEntry float64
	for i := 0; i < b.N; i++ {
		var set Set
		before := testutil.LiveHeap()
		g := set.Create("g", streams.ID{}, 0)
		for read := 0; read < n; {
			read += len(g.ReadNew(s, "alice", 1000, false, 1_700_000_000_000+int64(read)))
		}
		after := testutil.LiveHeap()
		if g.PEL.Len() != n {
			b.Fatalf("pending %d, want %d", g.PEL.Len(), n)
		}
		perEntry = float64(after-before) / n
		runtime.KeepAlive(&set)
	}
	b.ReportMetric(perEntry, "heapB/pending")
}
