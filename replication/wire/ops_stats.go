package wire

// MetricsQuery asks a shard for the figures /metrics exports about its
// keyspace: totals (keys, entries, groups, consumers, pending entries,
// estimated memory) over every database, and per-stream and per-group
// details for at most MaxStreams streams, the longest first (ties by name,
// then database).
//
// It is deliberately not a Query (it has no query method and no codec
// case): it is answered locally by replication.Shard.MetricsStats, so it
// is never logged, forwarded or queued in a transaction.
// Result: *state.MetricsStats.
type MetricsQuery struct {
	// MaxStreams caps the streams detailed (0: none, totals only).
	MaxStreams int
}
