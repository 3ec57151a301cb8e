package state

import (
	"bytes"
	"sync"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// benchState is a keyspace with one stream of 1M entries (XADD * f v with
// a 16-byte value) and a group with 10k pending entries over 10 consumers,
// built once for the snapshot benchmarks.
var benchState = sync.OnceValue(func() *Keyspace {
	const entries, pending = 1_000_000, 10_000
	ks := New()
	val := []byte("0123456789abcdef")
	for i := 0; i < entries; i++ {
		ks.Apply(wire.XAdd{Base: base("s"), ID: streams.IDSpec{Auto: true},
			Fields: [][]byte{[]byte("f"), val}, Trim: wire.Trim{Limit: -1}}, int64(1_700_000_000_000+i/8))
	}
	ks.Apply(wire.XGroupCreate{Base: base("s"), Group: "g", ID: streams.MinID, EntriesRead: -1}, 1_700_000_200_000)
	for c := 0; c < 10; c++ {
		ks.Apply(wire.XReadGroup{Group: "g", Consumer: "consumer-" + string(rune('0'+c)), Count: pending / 10,
			Streams: []wire.ReadStream{{Key: "s", New: true}}}, int64(1_700_000_200_000+c))
	}
	return ks
})

func benchSnapshot(b *testing.B) []byte {
	var buf bytes.Buffer
	if err := benchState().WriteSnapshot(&buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkSnapshotWrite1M writes the 1M-entry, 10k-pending snapshot to
// memory.
func BenchmarkSnapshotWrite1M(b *testing.B) {
	ks := benchState()
	size := len(benchSnapshot(b))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	var buf bytes.Buffer
	buf.Grow(size)
	for b.Loop() {
		buf.Reset()
		if err := ks.WriteSnapshot(&buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotRead1M reads it back.
func BenchmarkSnapshotRead1M(b *testing.B) {
	benchRead(b, benchSnapshot(b))
}

// BenchmarkSnapshotRead1MV1 reads the same state from a version 1
// snapshot (every entry re-encoded; what restarts cost before version 2).
func BenchmarkSnapshotRead1MV1(b *testing.B) {
	var buf bytes.Buffer
	if err := benchState().writeSnapshot(&buf, snapshotVersion1); err != nil {
		b.Fatal(err)
	}
	benchRead(b, buf.Bytes())
}

func benchRead(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ks, err := ReadSnapshot(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if ks.dbs[0].keys["s"].Stream.Len() != 1_000_000 {
			b.Fatal("wrong length")
		}
	}
}

// BenchmarkClone1M is the cost of Keyspace.Clone on the same state: what the
// FSM holds its lock for if it clones and writes the snapshot afterwards.
func BenchmarkClone1M(b *testing.B) {
	ks := benchState()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if c := ks.Clone(); c.dbs[0].keys["s"].Stream.Len() != 1_000_000 {
			b.Fatal("wrong length")
		}
	}
}
