package replication

import (
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// TestFsyncStats checks that each log store times its fsyncs: under
// appendfsync always every acknowledged write was fsynced, so the count
// grows by at least the number of writes; the buckets are cumulative and
// end at the count; an in-memory shard has no histogram.
func TestFsyncStats(t *testing.T) {
	mem := NewShard()
	defer mem.Close(false)
	if _, ok := mem.FsyncStats(); ok {
		t.Error("in-memory shard reports an fsync histogram")
	}
	for _, store := range []string{LogStoreWAL, LogStoreBolt} {
		t.Run(store, func(t *testing.T) {
			s, err := Open(Options{Dir: t.TempDir(), LogStore: store, Fsync: FsyncAlways, Logger: nodeTestLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(false)
			before, ok := s.FsyncStats()
			if !ok {
				t.Fatal("no fsync histogram")
			}
			const writes = 5
			for i := 0; i < writes; i++ {
				_, err := s.Propose(wire.XAdd{Base: wire.Base{Key: "k"}, ID: streams.IDSpec{Auto: true},
					Fields: [][]byte{[]byte("f"), []byte("v")}, Trim: wire.Trim{Limit: -1}})
				if err != nil {
					t.Fatal(err)
				}
			}
			after, _ := s.FsyncStats()
			if after.Count < before.Count+writes {
				t.Errorf("fsyncs %d -> %d after %d acknowledged writes", before.Count, after.Count, writes)
			}
			if after.Sum <= before.Sum {
				t.Errorf("fsync time sum %v -> %v", before.Sum, after.Sum)
			}
			checkCumulative(t, after)

			// everysec: a write is not fsynced at once, Sync is.
			if err := s.SetFsync(FsyncEverySec); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Propose(wire.XAdd{Base: wire.Base{Key: "k"}, ID: streams.IDSpec{Auto: true},
				Fields: [][]byte{[]byte("f"), []byte("v")}, Trim: wire.Trim{Limit: -1}}); err != nil {
				t.Fatal(err)
			}
			mid, _ := s.FsyncStats()
			if err := s.store.Sync(); err != nil {
				t.Fatal(err)
			}
			end, _ := s.FsyncStats()
			// (The once-a-second tick may add its own.)
			if end.Count < mid.Count+1 {
				t.Errorf("everysec Sync: fsyncs %d -> %d, want at least one more", mid.Count, end.Count)
			}
		})
	}
}

func checkCumulative(t *testing.T, st FsyncStats) {
	t.Helper()
	if len(st.Buckets) != len(st.Counts) || len(st.Buckets) == 0 {
		t.Fatalf("%d bounds, %d counts", len(st.Buckets), len(st.Counts))
	}
	for i := 1; i < len(st.Counts); i++ {
		if st.Counts[i] < st.Counts[i-1] || st.Buckets[i] <= st.Buckets[i-1] {
			t.Errorf("bucket %d: not cumulative/increasing: %v %v", i, st.Buckets, st.Counts)
		}
	}
	if last := st.Counts[len(st.Counts)-1]; last > st.Count {
		t.Errorf("last bucket %d > count %d", last, st.Count)
	}
}
