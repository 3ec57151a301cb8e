package server

import (
	"math"

	"streamd/replication/wire"
	"streamd/server/xreply"
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
		return &Plan{Op: op, Format: xreply.PendingSummary}, nil
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
	return &Plan{Op: op, Format: xreply.PendingEntries}, nil
}

// emptyConsumerPending plans the extended form for the consumer named ""
// (Redis accepts the empty name), which the wire reads as "all consumers":
// it asks for every pending entry in the range and keeps that consumer's,
// up to the count.
func emptyConsumerPending(op wire.XPending) (*Plan, Reply) {
	limit := op.Count
	op.Count = math.MaxInt64
	return &Plan{Op: op, Format: xreply.PendingOf(limit)}, nil
}
