package streams

import "testing"

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
