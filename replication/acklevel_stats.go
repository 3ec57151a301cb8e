package replication

import (
	"slices"
	"sync/atomic"
	"time"

	"streamd/streams"
)

// ackBounds are the upper bounds of the XADD answer latency histograms'
// buckets (AckLatency.Buckets); a last, implicit bucket holds the rest.
var ackBounds = [...]time.Duration{
	50 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
	25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// ackHist counts answer latencies in ackBounds (atomic: answers are given
// on raft's and the batcher's goroutines while a scrape reads).
type ackHist struct {
	counts [len(ackBounds) + 1]atomic.Uint64
	sumNs  atomic.Int64
	total  atomic.Uint64
}

func (h *ackHist) observe(d time.Duration) {
	i := 0
	for i < len(ackBounds) && d > ackBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNs.Add(int64(d))
	h.total.Add(1)
}

// AckLatency is a histogram of the time from proposing an XADD to
// answering it, at one ack level.
type AckLatency struct {
	// Buckets are the upper bounds; Counts[i] is how many answers took at
	// most Buckets[i] (cumulative, as Prometheus buckets are).
	Buckets []time.Duration
	Counts  []uint64
	// Count is every answer (the +Inf bucket), Sum their total time.
	Count uint64
	Sum   time.Duration
}

func (h *ackHist) snapshot() AckLatency {
	st := AckLatency{Buckets: slices.Clone(ackBounds[:]), Counts: make([]uint64, len(ackBounds))}
	st.Count = h.total.Load()
	st.Sum = time.Duration(h.sumNs.Load())
	var cum uint64
	for i := range ackBounds {
		cum += h.counts[i].Load()
		st.Counts[i] = min(cum, st.Count)
	}
	return st
}

// XAddAckLatency returns the latency histograms of the XADDs this shard
// answered (successfully) once committed (quorum: every XADD of a QUORUM
// stream, and those of a LEADER stream that waited) and once in the
// leader's log (leader).
func (s *Shard) XAddAckLatency() (quorum, leader AckLatency) {
	return s.acks.quorumLat.snapshot(), s.acks.leaderLat.snapshot()
}

// observeQuorum records a committed XADD's answer time (p.start is zero
// for other writes).
func (t *ackTracker) observeQuorum(p *Pending, res any, err error) {
	if p.start.IsZero() || err != nil {
		return
	}
	if _, ok := res.(streams.ID); ok {
		t.quorumLat.observe(time.Since(p.start))
	}
}
