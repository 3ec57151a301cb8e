package logstore

import (
	"slices"
	"sync/atomic"
	"time"
)

// latencyBounds are the upper bounds of a LatencyHist's buckets
// (LatencyStats.Buckets); a last, implicit bucket holds everything slower.
var latencyBounds = [...]time.Duration{
	50 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
	25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// LatencyHist counts durations in latencyBounds with atomic counters (no
// lock: the log store's writer and the everysec tick record fsyncs, raft's
// and the batcher's goroutines XADD answer times, concurrently with a
// scrape). The zero value is ready.
type LatencyHist struct {
	counts [len(latencyBounds) + 1]atomic.Uint64 // per bucket (not cumulative); the last is +Inf
	sumNs  atomic.Int64
	total  atomic.Uint64
}

// Observe records one duration d.
func (h *LatencyHist) Observe(d time.Duration) {
	i := 0
	for i < len(latencyBounds) && d > latencyBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNs.Add(int64(d))
	h.total.Add(1)
}

// time runs fn and records its duration.
func (h *LatencyHist) time(fn func() error) error {
	start := time.Now()
	err := fn()
	h.Observe(time.Since(start))
	return err
}

// LatencyStats is a snapshot of a LatencyHist.
type LatencyStats struct {
	// Buckets are the buckets' upper bounds; Counts[i] is how many took at
	// most Buckets[i] (cumulative, as Prometheus buckets are).
	Buckets []time.Duration
	Counts  []uint64
	// Count is every duration recorded (the +Inf bucket), Sum their total.
	Count uint64
	Sum   time.Duration
}

// FsyncStats is a store's fsync latency histogram: every fsync of the log
// (the wal store times each segment fsync; the bolt store times each
// committing write transaction, which includes its two fsyncs, and each
// everysec Sync).
type FsyncStats = LatencyStats

// Snapshot reads the histogram. Counters are read one by one while others
// may add, so Count is taken first and the cumulative counts are capped by
// it, keeping the snapshot monotonic across buckets.
func (h *LatencyHist) Snapshot() LatencyStats {
	st := LatencyStats{Buckets: slices.Clone(latencyBounds[:]), Counts: make([]uint64, len(latencyBounds))}
	st.Count = h.total.Load()
	st.Sum = time.Duration(h.sumNs.Load())
	var cum uint64
	for i := range latencyBounds {
		cum += h.counts[i].Load()
		st.Counts[i] = min(cum, st.Count)
	}
	return st
}
