package state

import (
	"fmt"
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// TestMetricsStatsExact checks every figure after a known workload at fixed
// times: totals, the longest streams first with ties broken by name then
// database, PEL size, lag, consumers and the oldest pending entry's age.
func TestMetricsStatsExact(t *testing.T) {
	ks := New()
	// db 0: "a" 5 entries; group g: c1 reads 3 at t=1000, c2 reads 1 at
	// t=4000, then 1-1 is acked.
	for i := 1; i <= 5; i++ {
		mustApply(t, ks, xadd("a", fmt.Sprintf("%d-1", i)), 100)
	}
	mustApply(t, ks, wire.XGroupCreate{Base: base("a"), Group: "g", ID: id(0, 0), EntriesRead: -1}, 100)
	mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "c1", Count: 3,
		Streams: []wire.ReadStream{{Key: "a", New: true}}}, 1000)
	mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "c2", Count: 1,
		Streams: []wire.ReadStream{{Key: "a", New: true}}}, 4000)
	mustApply(t, ks, wire.XAck{Base: base("a"), Group: "g", IDs: []streams.ID{id(1, 1)}}, 4000)
	// Pending now: 2-1, 3-1 (c1, delivered at 1000), 4-1 (c2, at 4000).
	// A second group that read nothing, with no consumers.
	mustApply(t, ks, wire.XGroupCreate{Base: base("a"), Group: "empty", ID: id(0, 0), EntriesRead: -1}, 4000)
	// db 0: "b" and "c" 2 entries each (tie, broken by name); db 1: "b"
	// 2 entries (tie with db 0's "b", broken by database).
	for _, k := range []struct {
		db  int
		key string
	}{{0, "c"}, {0, "b"}, {1, "b"}} {
		for i := 1; i <= 2; i++ {
			c := xadd(k.key, fmt.Sprintf("%d-1", i))
			c.DB = k.db
			mustApply(t, ks, c, 4000)
		}
	}
	// db 2: "short" 1 entry; db 3: "gone" expired at 5000.
	c := xadd("short", "1-1")
	c.DB = 2
	mustApply(t, ks, c, 4000)
	c = xadd("gone", "1-1")
	c.DB = 3
	mustApply(t, ks, c, 4000)
	mustApply(t, ks, wire.Expire{Base: wire.Base{DB: 3, Key: "gone"}, Ms: 5000}, 4000)

	got := ks.MetricsStats(wire.MetricsQuery{MaxStreams: 3}, 10_000)
	if got.Streams != 5 || got.Entries != 5+2+2+2+1 || got.Groups != 2 || got.Consumers != 2 || got.Pending != 3 {
		t.Errorf("totals = streams %d entries %d groups %d consumers %d pending %d, want 5 12 2 2 3",
			got.Streams, got.Entries, got.Groups, got.Consumers, got.Pending)
	}
	if got.Omitted != 2 {
		t.Errorf("omitted = %d, want 2", got.Omitted)
	}
	want := []StreamMetrics{
		{DB: 0, Key: "a", Length: 5, EntriesAdded: 5, Groups: []GroupMetrics{
			{Name: "empty", Pending: 0, Consumers: 0, Lag: 5, LagKnown: true, OldestPendingAgeMs: 0},
			{Name: "g", Pending: 3, Consumers: 2, Lag: 1, LagKnown: true, OldestPendingAgeMs: 9000},
		}},
		{DB: 0, Key: "b", Length: 2, EntriesAdded: 2},
		{DB: 1, Key: "b", Length: 2, EntriesAdded: 2},
	}
	if !reflect.DeepEqual(got.Top, want) {
		t.Errorf("top =\n%+v\nwant\n%+v", got.Top, want)
	}

	// The cap: 0 details nothing; a large cap details every live stream.
	if z := ks.MetricsStats(wire.MetricsQuery{}, 10_000); len(z.Top) != 0 || z.Omitted != 5 || z.Streams != 5 {
		t.Errorf("cap 0: top %d omitted %d streams %d", len(z.Top), z.Omitted, z.Streams)
	}
	all := ks.MetricsStats(wire.MetricsQuery{MaxStreams: 100}, 10_000)
	var names []string
	for _, s := range all.Top {
		names = append(names, fmt.Sprintf("%d/%s", s.DB, s.Key))
	}
	if fmt.Sprint(names) != "[0/a 0/b 1/b 0/c 2/short]" || all.Omitted != 0 {
		t.Errorf("cap 100: %v omitted %d", names, all.Omitted)
	}
	// Before "gone" expires it counts.
	if before := ks.MetricsStats(wire.MetricsQuery{MaxStreams: 100}, 4500); before.Streams != 6 {
		t.Errorf("streams at 4500 = %d, want 6", before.Streams)
	}
	// Time never goes back: a query at an earlier time than the last
	// write (4000) is answered at that write's time.
	if early := ks.MetricsStats(wire.MetricsQuery{MaxStreams: 1}, 0); early.Top[0].Groups[1].OldestPendingAgeMs != 3000 {
		t.Errorf("age at a clamped time = %d, want 3000", early.Top[0].Groups[1].OldestPendingAgeMs)
	}
}

// TestMetricsStatsMemory checks that the metrics' memory figure is the
// memory accounting: the sum of MEMORY USAGE over the keys (without
// deadlines), as INFO sums it.
func TestMetricsStatsMemory(t *testing.T) {
	ks := New()
	for i := 1; i <= 1000; i++ {
		mustApply(t, ks, xadd("k", fmt.Sprintf("%d-1", i)), 0)
	}
	mustApply(t, ks, xadd("k2", "1-1"), 0)
	mustApply(t, ks, wire.XGroupCreate{Base: base("k"), Group: "g", ID: id(0, 0), EntriesRead: -1}, 0)
	mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "c", Count: 10,
		Streams: []wire.ReadStream{{Key: "k", New: true}}}, 0)
	got := ks.MetricsStats(wire.MetricsQuery{}, 0).MemoryBytes
	var want int64
	for _, k := range []string{"k", "k2"} {
		want += mustQuery(t, ks, wire.MemoryUsage{Base: base(k)}, 0).(int64)
	}
	if got != want || got != ks.Memory()[0].Bytes {
		t.Errorf("metrics %d bytes, MEMORY USAGE sums %d, the database %d", got, want, ks.Memory()[0].Bytes)
	}
}

// TestMetricsStatsTopMatchesSort checks the heap selection against a full
// sort on many streams with many equal lengths.
func TestMetricsStatsTopMatchesSort(t *testing.T) {
	ks := New()
	for i := 0; i < 300; i++ {
		n := i%7 + 1
		for j := 1; j <= n; j++ {
			c := xadd(fmt.Sprintf("s%03d", (i*37)%300), fmt.Sprintf("%d-1", j))
			c.DB = i % 3
			mustApply(t, ks, c, 0)
		}
	}
	all := ks.MetricsStats(wire.MetricsQuery{MaxStreams: 1000}, 0)
	if len(all.Top) != 300 {
		t.Fatalf("all: %d streams", len(all.Top))
	}
	for _, k := range []int{1, 10, 99} {
		top := ks.MetricsStats(wire.MetricsQuery{MaxStreams: k}, 0)
		if !reflect.DeepEqual(top.Top, all.Top[:k]) || top.Omitted != int64(300-k) {
			t.Errorf("cap %d: heap selection differs from the sorted prefix", k)
		}
	}
}
