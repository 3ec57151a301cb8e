package xargs

import (
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/streams"
)

// XRange parses XRANGE key start end [COUNT n] (rev false) and XREVRANGE
// key end start [COUNT n] as xrangeGenericCommand: the start bound first
// (for XREVRANGE the last of the two), then the end, then COUNT options (the
// last one wins; a negative COUNT is 0; none is -1).
func XRange(args [][]byte, rev bool) (wire.XRange, resp.Reply) {
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = args[3], args[2]
	}
	start, r := RangeStart(startArg)
	if r != nil {
		return wire.XRange{}, r
	}
	end, r := RangeEnd(endArg)
	if r != nil {
		return wire.XRange{}, r
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if isOpt(args[j], "COUNT") && len(args)-j-1 >= 1 {
			n, r := Int(args[j+1])
			if r != nil {
				return wire.XRange{}, r
			}
			count = max(n, 0)
			j++
			continue
		}
		return wire.XRange{}, resp.ErrSyntax
	}
	return wire.XRange{Base: key(args[1]), Start: start, End: end, Count: count, Rev: rev}, nil
}

// Errors of XSETID's own argument checks (xsetidCommand).
const (
	ErrEntriesAddedNegative = resp.ErrorReply("ERR entries_added must be positive")
	ErrSetIDBelowMaxDeleted = resp.ErrorReply("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
)

// XSetID parses XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]:
// options repeatable, the last one wins; MAXDELETEDID above last-id is
// refused.
func XSetID(args [][]byte) (wire.XSetID, resp.Reply) {
	last, r := StrictID(args[2])
	if r != nil {
		return wire.XSetID{}, r
	}
	op := wire.XSetID{Base: key(args[1]), LastID: last, EntriesAdded: -1}
	for i := 3; i < len(args); i += 2 {
		more := len(args) - 1 - i
		switch {
		case isOpt(args[i], "ENTRIESADDED") && more > 0:
			n, r := Int(args[i+1])
			if r != nil {
				return wire.XSetID{}, r
			}
			if n < 0 {
				return wire.XSetID{}, ErrEntriesAddedNegative
			}
			op.EntriesAdded = n
		case isOpt(args[i], "MAXDELETEDID") && more > 0:
			id, r := StrictID(args[i+1])
			if r != nil {
				return wire.XSetID{}, r
			}
			if last.Less(id) {
				return wire.XSetID{}, ErrSetIDBelowMaxDeleted
			}
			op.MaxDeletedID = &id
		default:
			return wire.XSetID{}, resp.ErrSyntax
		}
	}
	return op, nil
}

// XPending parses XPENDING key group (Summary set) or XPENDING key group
// [IDLE min-idle-time] start end count [consumer]. As xpendingCommand: 3
// arguments or 6 to 9; the extended form's arguments in Redis's order
// (IDLE's value, then count, then start and end); an argument past the
// consumer is ignored, as Redis ignores it. IdleMs is -1 without IDLE.
// emptyConsumer reports a consumer named "" (Redis accepts the empty name),
// which the wire's Consumer cannot tell from none.
func XPending(args [][]byte) (op wire.XPending, emptyConsumer bool, r resp.Reply) {
	op = wire.XPending{Base: key(args[1]), Group: string(args[2]), IdleMs: -1}
	if len(args) == 3 {
		op.Summary = true
		return op, false, nil
	}
	if len(args) < 6 || len(args) > 9 {
		return op, false, resp.ErrSyntax
	}
	startIdx := 3
	if isOpt(args[3], "IDLE") {
		idle, r := Int(args[4])
		if r != nil {
			return op, false, r
		}
		if len(args) < 8 {
			return op, false, resp.ErrSyntax
		}
		op.IdleMs = idle
		startIdx += 2
	}
	count, r := Int(args[startIdx+2])
	if r != nil {
		return op, false, r
	}
	op.Count = max(count, 0)
	if op.Start, r = RangeStart(args[startIdx]); r != nil {
		return op, false, r
	}
	if op.End, r = RangeEnd(args[startIdx+1]); r != nil {
		return op, false, r
	}
	if startIdx+3 < len(args) {
		op.Consumer = string(args[startIdx+3])
		emptyConsumer = op.Consumer == ""
	}
	return op, emptyConsumer, nil
}

// XInfoStream parses XINFO STREAM key [FULL [COUNT n]]: a negative COUNT
// is the default 10 and COUNT 0 means every entry. Redis looks the key up
// before it parses the options, so the planner answers a missing key first.
func XInfoStream(args [][]byte) (wire.XInfoStream, resp.Reply) {
	op := wire.XInfoStream{Base: key(args[2]), Count: 10}
	switch opts := args[3:]; len(opts) {
	case 0:
	case 1, 3:
		if !isOpt(opts[0], "FULL") {
			return op, SubcommandSyntaxError("XINFO", args[1])
		}
		op.Full = true
		if len(opts) == 3 {
			if !isOpt(opts[1], "COUNT") {
				return op, SubcommandSyntaxError("XINFO", args[1])
			}
			n, r := Int(opts[2])
			if r != nil {
				return op, r
			}
			if n >= 0 {
				op.Count = n
			}
		}
	default:
		return op, SubcommandSyntaxError("XINFO", args[1])
	}
	return op, nil
}

// ErrValueEntriesRead is XGROUP's error for an ENTRIESREAD below -1.
const ErrValueEntriesRead = resp.ErrorReply("ERR value for ENTRIESREAD must be positive or -1")

// xgroupOptions is the option loop xgroupCommand runs from args[5] before it
// looks the key up: MKSTREAM (CREATE only) and ENTRIESREAD n (CREATE and
// SETID), repeatable; anything else is the subcommand syntax error.
func xgroupOptions(args [][]byte, create bool) (mkStream bool, entriesRead int64, r resp.Reply) {
	entriesRead = -1
	for i := 5; i < len(args); {
		switch {
		case create && isOpt(args[i], "MKSTREAM"):
			mkStream = true
			i++
		case isOpt(args[i], "ENTRIESREAD") && i+1 < len(args):
			n, r := Int(args[i+1])
			if r != nil {
				return false, 0, r
			}
			// -1 is SCG_INVALID_ENTRIES_READ: "unknown", accepted.
			if n < 0 && n != -1 {
				return false, 0, ErrValueEntriesRead
			}
			entriesRead = n
			i += 2
		default:
			return false, 0, SubcommandSyntaxError("XGROUP", args[1])
		}
	}
	return mkStream, entriesRead, nil
}

// XGroupCreate parses XGROUP CREATE key group id|$ [MKSTREAM]
// [ENTRIESREAD n]. Redis's order: options (an error there is early), then
// (without MKSTREAM) the key must exist, then at most 8 arguments, then the
// ID ("$" or strict): an error there is late, answered only on an existing
// key (with MKSTREAM it is early).
func XGroupCreate(args [][]byte) (op wire.XGroupCreate, early, late resp.Reply) {
	mk, entriesRead, r := xgroupOptions(args, true)
	if r != nil {
		return op, r, nil
	}
	op = wire.XGroupCreate{Base: key(args[2]), Group: string(args[3]), MkStream: mk, EntriesRead: entriesRead}
	switch {
	case len(args) > 8:
		late = SubcommandSyntaxError("XGROUP", args[1])
	case string(args[4]) == "$":
		op.Dollar = true
	default:
		op.ID, late = StrictID(args[4])
	}
	if late != nil && mk {
		return op, late, nil
	}
	return op, nil, late
}

// XGroupSetID parses XGROUP SETID key group id|$ [ENTRIESREAD n]. The ID
// is a range ID ("-" and "+" allowed, "(" not). An options error is early;
// the arity and the ID are late: Redis checks the key and the group first.
func XGroupSetID(args [][]byte) (op wire.XGroupSetID, early, late resp.Reply) {
	_, entriesRead, r := xgroupOptions(args, false)
	if r != nil {
		return op, r, nil
	}
	op = wire.XGroupSetID{Base: key(args[2]), Group: string(args[3]), EntriesRead: entriesRead}
	switch {
	case len(args) != 5 && len(args) != 7:
		late = SubcommandSyntaxError("XGROUP", args[1])
	case string(args[4]) == "$":
		op.Dollar = true
	default:
		id, err := streams.ParseID(args[4], 0)
		if err != nil {
			late = ErrInvalidID
		}
		op.ID = id
	}
	return op, nil, late
}
