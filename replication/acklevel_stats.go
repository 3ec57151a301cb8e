package replication

import (
	"time"

	"streamd/replication/logstore"
	"streamd/streams"
)

// AckLatency is a histogram of the time from proposing an XADD to
// answering it, at one ack level (the log store's latency histogram, with
// the fsync histogram's buckets).
type AckLatency = logstore.LatencyStats

// XAddAckLatency returns the latency histograms of the XADDs this shard
// answered (successfully) once committed (quorum: every XADD of a QUORUM
// stream, and those of a LEADER stream that waited) and once in the
// leader's log (leader).
func (s *Shard) XAddAckLatency() (quorum, leader AckLatency) {
	return s.acks.quorumLat.Snapshot(), s.acks.leaderLat.Snapshot()
}

// observeQuorum records a committed XADD's answer time (p.start is zero
// for other writes).
func (t *ackTracker) observeQuorum(p *Pending, res any, err error) {
	if p.start.IsZero() || err != nil {
		return
	}
	if _, ok := res.(streams.ID); ok {
		t.quorumLat.Observe(time.Since(p.start))
	}
}
