package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// TransferHold counts the writes held during planned leadership transfers
// (transfer-hold-timeout, issue #15), on the node the client sent them to.
type TransferHold struct {
	// Held counts writes held while their shard's leadership was being
	// transferred, to be sent to the new leader.
	Held atomic.Int64
	// Failed counts held writes that found no new leader within
	// transfer-hold-timeout and failed (not applied).
	Failed atomic.Int64
}

var (
	descTransferHeld = prometheus.NewDesc("streamd_transfer_held_writes_total",
		"Writes held during a planned leadership transfer instead of answering TRYAGAIN, then sent to the new leader.", nil, nil)
	descTransferHoldFailed = prometheus.NewDesc("streamd_transfer_hold_failed_total",
		"Held writes that found no new leader within transfer-hold-timeout and failed with TRYAGAIN (not applied).", nil, nil)
)

// describeTransferHold sends the descriptions of this file's metrics.
func describeTransferHold(ch chan<- *prometheus.Desc) {
	ch <- descTransferHeld
	ch <- descTransferHoldFailed
}

// collectTransferHold sends this file's metrics.
func collectTransferHold(ch chan<- prometheus.Metric, h *TransferHold) {
	ch <- prometheus.MustNewConstMetric(descTransferHeld, prometheus.CounterValue, float64(h.Held.Load()))
	ch <- prometheus.MustNewConstMetric(descTransferHoldFailed, prometheus.CounterValue, float64(h.Failed.Load()))
}
