package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// RetentionStats are the retention figures (issue #15): the server's
// retention sweep sets Held and adds to GroupsExpired on the shards this
// node leads.
type RetentionStats struct {
	// Held is the entries retention holds back because a group still
	// needs them (XINFO STREAM retention-held summed over the streams of
	// the shards this node leads, as of the sweep's last full pass).
	Held atomic.Int64
	// GroupsExpired counts the consumer groups this node's sweep destroyed
	// for GROUP-IDLE-EXPIRE.
	GroupsExpired atomic.Int64
}

var (
	descRetentionHeld = prometheus.NewDesc("streamd_retention_held_entries",
		"Stream entries retention (XCFGSET MAXLEN/MAXAGE) keeps because a consumer group still needs them, over the shards this node leads.",
		nil, nil)
	descGroupsExpired = prometheus.NewDesc("streamd_groups_expired_total",
		"Consumer groups destroyed by GROUP-IDLE-EXPIRE (by this node's sweep, as leader).", nil, nil)
)

// describeRetention sends the retention metrics' descriptions.
func describeRetention(ch chan<- *prometheus.Desc) {
	ch <- descRetentionHeld
	ch <- descGroupsExpired
}

// collectRetention sends the retention metrics.
func collectRetention(ch chan<- prometheus.Metric, r *RetentionStats) {
	ch <- prometheus.MustNewConstMetric(descRetentionHeld, prometheus.GaugeValue, float64(r.Held.Load()))
	ch <- prometheus.MustNewConstMetric(descGroupsExpired, prometheus.CounterValue, float64(r.GroupsExpired.Load()))
}
