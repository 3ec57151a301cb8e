package server

import (
	"math"
	"strconv"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/xargs"
)

// cmdXPENDING plans XPENDING key group (the summary) or XPENDING key group
// [IDLE min-idle-time] start end count [consumer] (arguments: xargs.XPending,
// parsed before Redis looks the group up).
func cmdXPENDING(c *Client, args [][]byte) (*Plan, Reply) {
	op, emptyConsumer, r := xargs.XPending(args)
	if r != nil {
		return nil, r
	}
	op.DB = c.DB()
	switch {
	case op.Summary:
		return &Plan{Op: op, Format: formatPendingSummary}, nil
	case emptyConsumer:
		return emptyConsumerPending(op)
	}
	return &Plan{Op: op, Format: formatPendingEntries}, nil
}

// emptyConsumerPending plans the extended form for the consumer named ""
// (Redis accepts the empty name), which the wire reads as "all consumers":
// it asks for every pending entry in the range and keeps that consumer's,
// up to the count.
func emptyConsumerPending(op wire.XPending) (*Plan, Reply) {
	limit := op.Count
	op.Count = math.MaxInt64
	return &Plan{Op: op, Format: func(res any, err error) Reply {
		if err != nil {
			return errorFormat(err)
		}
		all, _ := res.([]state.PendingEntry)
		own := []state.PendingEntry{}
		for _, p := range all {
			if int64(len(own)) == limit {
				break
			}
			if p.Consumer == "" {
				own = append(own, p)
			}
		}
		return formatPendingEntries(own, nil)
	}}, nil
}

// formatPendingSummary is the summary form: [count, min-id, max-id,
// [[consumer, count]...]] with each consumer's count a bulk string (Redis's
// addReplyBulkLongLong), and null, null, null-array when nothing is pending.
func formatPendingSummary(res any, err error) Reply {
	if err != nil {
		return errorFormat(err)
	}
	ps, _ := res.(state.PendingSummary)
	if ps.Count == 0 {
		return Array{Int(0), Null{}, Null{}, NullArray{}}
	}
	consumers := Array{}
	for _, cp := range ps.Consumers {
		if cp.Count == 0 {
			continue // Redis lists only consumers with pending entries
		}
		consumers = append(consumers, Array{Bulk(cp.Name), Bulk(strconv.AppendInt(nil, cp.Count, 10))})
	}
	return Array{Int(ps.Count), idReply(ps.Min), idReply(ps.Max), consumers}
}

// formatPendingEntries is the extended form: [[id, consumer, idle-ms,
// delivery-count]...].
func formatPendingEntries(res any, err error) Reply {
	if err != nil {
		return errorFormat(err)
	}
	pes, _ := res.([]state.PendingEntry)
	out := make(Array, len(pes))
	for i, p := range pes {
		out[i] = Array{idReply(p.ID), Bulk(p.Consumer), Int(p.IdleMs), Int(p.Deliveries)}
	}
	return out
}
