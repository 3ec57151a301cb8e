package server

import (
	"math"
	"strconv"

	"streamd/replication/state"
	"streamd/replication/wire"
)

// cmdXPENDING plans XPENDING key group (the summary) or XPENDING key group
// [IDLE min-idle-time] start end count [consumer]. As xpendingCommand: 3
// arguments or 6 to 9; the extended form's arguments are parsed before the
// group is looked up (IDLE's value, then count, then start and end); an
// argument past the consumer is ignored, as Redis ignores it.
func cmdXPENDING(c *Client, args [][]byte) (*Plan, Reply) {
	op := wire.XPending{Base: keyBase(c, args[1]), Group: string(args[2]), IdleMs: -1}
	if len(args) == 3 {
		op.Summary = true
		return &Plan{Op: op, Format: formatPendingSummary}, nil
	}
	if len(args) < 6 || len(args) > 9 {
		return nil, errSyntax
	}
	startIdx := 3
	if isOpt(args[3], "IDLE") {
		idle, r := intArg(args[4])
		if r != nil {
			return nil, r
		}
		if len(args) < 8 {
			return nil, errSyntax
		}
		op.IdleMs = idle
		startIdx += 2
	}
	count, r := intArg(args[startIdx+2])
	if r != nil {
		return nil, r
	}
	op.Count = max(count, 0)
	if op.Start, r = rangeStartArg(args[startIdx]); r != nil {
		return nil, r
	}
	if op.End, r = rangeEndArg(args[startIdx+1]); r != nil {
		return nil, r
	}
	if startIdx+3 < len(args) {
		op.Consumer = string(args[startIdx+3])
		if op.Consumer == "" {
			return emptyConsumerPending(op)
		}
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
