package logstore

import (
	"slices"
	"sync/atomic"
	"time"
)

// fsyncBounds are the upper bounds of the fsync latency histogram's buckets
// (FsyncStats.Buckets); a last, implicit bucket holds everything slower.
var fsyncBounds = [...]time.Duration{
	50 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
	25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// fsyncHist counts fsync durations in fsyncBounds with atomic counters (no
// lock: the log store's writer and the everysec tick record concurrently
// with a scrape). The zero value is ready.
type fsyncHist struct {
	counts [len(fsyncBounds) + 1]atomic.Uint64 // per bucket (not cumulative); the last is +Inf
	sumNs  atomic.Int64
	total  atomic.Uint64
}

// observe records one fsync of duration d.
func (h *fsyncHist) observe(d time.Duration) {
	i := 0
	for i < len(fsyncBounds) && d > fsyncBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNs.Add(int64(d))
	h.total.Add(1)
}

// time runs fn and records its duration.
func (h *fsyncHist) time(fn func() error) error {
	start := time.Now()
	err := fn()
	h.observe(time.Since(start))
	return err
}

// FsyncStats is a snapshot of a store's fsync latency histogram: every
// fsync of the log (the wal store times each segment fsync; the bolt store
// times each committing write transaction, which includes its two fsyncs,
// and each everysec Sync).
type FsyncStats struct {
	// Buckets are the buckets' upper bounds; Counts[i] is how many fsyncs took at most
	// Buckets[i] (cumulative, as Prometheus buckets are).
	Buckets []time.Duration
	Counts  []uint64
	// Count is every fsync recorded (the +Inf bucket), Sum their total time.
	Count uint64
	Sum   time.Duration
}

// snapshot reads the histogram. Counters are read one by one while others
// may add, so Count is taken first and the cumulative counts are capped by
// it, keeping the snapshot monotonic across buckets.
func (h *fsyncHist) snapshot() FsyncStats {
	st := FsyncStats{Buckets: slices.Clone(fsyncBounds[:]), Counts: make([]uint64, len(fsyncBounds))}
	st.Count = h.total.Load()
	st.Sum = time.Duration(h.sumNs.Load())
	var cum uint64
	for i := range fsyncBounds {
		cum += h.counts[i].Load()
		st.Counts[i] = min(cum, st.Count)
	}
	return st
}
