package server

import (
	"math"

	"streamd/replication/wire"
	"streamd/server/xargs"
	"streamd/server/xreply"
)

// cmdXPENDING plans XPENDING key group (the summary) or XPENDING key group
// [IDLE min-idle-time] start end count [consumer] (arguments: xargs.XPending,
// parsed before Redis looks the group up).
func cmdXPENDING(c *Client, args [][]byte) (Plan, Reply) {
	op, emptyConsumer, r := xargs.XPending(args)
	if r != nil {
		return Plan{}, r
	}
	op.DB = c.DB()
	switch {
	case op.Summary:
		return Plan{Op: op, Format: xreply.PendingSummary}, nil
	case emptyConsumer:
		return emptyConsumerPending(op)
	}
	return Plan{Op: op, Format: xreply.PendingEntries}, nil
}

// emptyConsumerPending plans the extended form for the consumer named ""
// (Redis accepts the empty name), which the wire reads as "all consumers":
// it asks for every pending entry in the range and keeps that consumer's,
// up to the count.
func emptyConsumerPending(op wire.XPending) (Plan, Reply) {
	limit := op.Count
	op.Count = math.MaxInt64
	return Plan{Op: op, Format: xreply.PendingOf(limit)}, nil
}
