package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Delivery counts what XGROUP CONFIG's settings did (issue #15), on the
// node whose clients' commands did it (the shard leader): entries
// dead-lettered and entries redelivered by a visibility timeout. The
// per-group totals of dead-lettered entries are replicated state (XINFO
// GROUPS dead-lettered); these are the rates.
type Delivery struct {
	// DeadLettered counts entries taken out of groups past MAXDELIVERIES
	// (or XNACKed FATAL), appended to the dead-letter stream or dropped.
	DeadLettered atomic.Int64
	// VisibilityRedeliveries counts entries a plain XREADGROUP ... >
	// redelivered because they were idle for the group's VISIBILITY.
	VisibilityRedeliveries atomic.Int64
}

var (
	descDeadLettered = prometheus.NewDesc("streamd_dead_lettered_total",
		"Entries dead-lettered by consumer groups (MAXDELIVERIES reached or XNACK FATAL): appended to the group's DEADLETTER stream, or dropped without one.", nil, nil)
	descVisibilityRedeliveries = prometheus.NewDesc("streamd_visibility_redeliveries_total",
		"Pending entries redelivered by a plain XREADGROUP because they were idle for the group's VISIBILITY timeout.", nil, nil)
)

// describeDelivery sends the descriptions of this file's metrics.
func describeDelivery(ch chan<- *prometheus.Desc) {
	ch <- descDeadLettered
	ch <- descVisibilityRedeliveries
}

// collectDelivery sends this file's metrics.
func collectDelivery(ch chan<- prometheus.Metric, d *Delivery) {
	ch <- prometheus.MustNewConstMetric(descDeadLettered, prometheus.CounterValue, float64(d.DeadLettered.Load()))
	ch <- prometheus.MustNewConstMetric(descVisibilityRedeliveries, prometheus.CounterValue, float64(d.VisibilityRedeliveries.Load()))
}
