package streams

import (
	"runtime"
	"streamd/internal/testutil"
	"testing"
)

var benchFields = [][]byte{[]byte("field"), []byte("value")}

// BenchmarkAppend measures appends onto a stream that grows to b.N entries.
func BenchmarkAppend(b *testing.B) {
	s := New()
	for i := 0; i < b.N; i++ {
		s.Append(ID{uint64(i + 1), 0}, benchFields)
	}
}

// BenchmarkAppendMaxLenExact measures XADD MAXLEN = 1000 style appends.
func BenchmarkAppendMaxLenExact(b *testing.B) {
	s := New()
	t := TrimArgs{Strategy: TrimMaxLen, MaxLen: 1000}
	for i := 0; i < b.N; i++ {
		s.Append(ID{uint64(i + 1), 0}, benchFields)
		s.Trim(t)
	}
}

// BenchmarkRangeMillion measures a COUNT 10 range at a random-ish point of a
// 1M-entry stream.
func BenchmarkRangeMillion(b *testing.B) {
	s := New()
	for i := 0; i < 1_000_000; i++ {
		s.Append(ID{uint64(i + 1), 0}, benchFields)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		s.Ascend(ID{uint64(i*7919%1_000_000 + 1), 0}, func(Entry) bool { n++; return n < 10 })
	}
}

// BenchmarkDeleteMillion measures XDEL of single entries in a 1M stream.
func BenchmarkDeleteMillion(b *testing.B) {
	s := New()
	for i := 0; i < 1_000_000; i++ {
		s.Append(ID{uint64(i + 1), 0}, benchFields)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Delete(ID{uint64(i*7919%1_000_000 + 1), 0})
	}
}

// BenchmarkHeapPerEntry appends 1M `f v` entries with IDs as XADD * gives
// them under load (50 per millisecond) and reports the live heap per entry
// after a GC (bytes/entry). Each entry gets its own field slices, as a
// parsed XADD does.
func BenchmarkHeapPerEntry(b *testing.B) {
	for i := 0; i < b.N; i++ {
		before := testutil.LiveHeap()
		s := New()
		for j := 0; j < 1_000_000; j++ {
			fields := [][]byte{[]byte("f"), []byte("v")}
			s.Append(ID{1_700_000_000_000 + uint64(j/50), uint64(j % 50)}, fields)
		}
		b.ReportMetric(float64(testutil.LiveHeap()-before)/1e6, "bytes/entry")
		runtime.KeepAlive(s)
	}
}
