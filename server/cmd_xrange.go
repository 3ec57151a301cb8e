package server

import (
	"streamd/replication/wire"
	"streamd/server/xreply"
	"streamd/streams"
)

// cmdXRANGE plans XRANGE key start end [COUNT n].
func cmdXRANGE(c *Client, args [][]byte) (*Plan, Reply) {
	return xrangeGeneric(c, args, false)
}

// cmdXREVRANGE plans XREVRANGE key end start [COUNT n].
func cmdXREVRANGE(c *Client, args [][]byte) (*Plan, Reply) {
	return xrangeGeneric(c, args, true)
}

// xrangeGeneric mirrors xrangeGenericCommand: the start bound is parsed
// first (for XREVRANGE it is the last of the two), then the end, then
// COUNT options (the last one wins; a negative COUNT is 0). COUNT 0 replies a
// null array on an existing stream but the empty array on a missing key,
// because Redis looks the key up before it tests the count.
func xrangeGeneric(c *Client, args [][]byte, rev bool) (*Plan, Reply) {
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = args[3], args[2]
	}
	start, r := rangeStartArg(startArg)
	if r != nil {
		return nil, r
	}
	end, r := rangeEndArg(endArg)
	if r != nil {
		return nil, r
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if isOpt(args[j], "COUNT") && len(args)-j-1 >= 1 {
			n, r := intArg(args[j+1])
			if r != nil {
				return nil, r
			}
			count = max(n, 0)
			j++
			continue
		}
		return nil, errSyntax
	}
	if count == 0 {
		return keyFirst(c, args[1], Array{}, NullArray{})
	}
	op := wire.XRange{Base: keyBase(c, args[1]), Start: start, End: end, Count: count, Rev: rev}
	return &Plan{Op: op, Format: xreply.EntriesResult}, nil
}

// cmdXLEN plans XLEN key.
func cmdXLEN(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.XLen{Base: keyBase(c, args[1])}, Format: xreply.Int}, nil
}

// cmdXDEL plans XDEL key id [id ...]. Redis looks the key up before it
// parses the IDs (so it never deletes some and then fails), hence a bad ID on
// a missing key answers 0.
func cmdXDEL(c *Client, args [][]byte) (*Plan, Reply) {
	ids, r := strictIDsArg(args[2:])
	if r != nil {
		return keyFirst(c, args[1], Int(0), r)
	}
	return &Plan{Op: wire.XDel{Base: keyBase(c, args[1]), IDs: ids}, Format: xreply.Int}, nil
}

// strictIDsArg parses every argument as a strict ID, failing on the first
// that is not one.
func strictIDsArg(args [][]byte) ([]streams.ID, Reply) {
	ids := make([]streams.ID, len(args))
	for i, a := range args {
		id, r := strictIDArg(a)
		if r != nil {
			return nil, r
		}
		ids[i] = id
	}
	return ids, nil
}

// Errors of XSETID's own argument checks (xsetidCommand).
const (
	errEntriesAddedNegative = ErrorReply("ERR entries_added must be positive")
	errSetIDBelowMaxDeleted = ErrorReply("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
)

// cmdXSETID plans XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id].
// Redis parses every argument (options repeatable, the last one wins) before
// it looks the key up; MAXDELETEDID above last-id is refused while parsing.
func cmdXSETID(c *Client, args [][]byte) (*Plan, Reply) {
	last, r := strictIDArg(args[2])
	if r != nil {
		return nil, r
	}
	op := wire.XSetID{Base: keyBase(c, args[1]), LastID: last, EntriesAdded: -1}
	for i := 3; i < len(args); i += 2 {
		more := len(args) - 1 - i
		switch {
		case isOpt(args[i], "ENTRIESADDED") && more > 0:
			n, r := intArg(args[i+1])
			if r != nil {
				return nil, r
			}
			if n < 0 {
				return nil, errEntriesAddedNegative
			}
			op.EntriesAdded = n
		case isOpt(args[i], "MAXDELETEDID") && more > 0:
			id, r := strictIDArg(args[i+1])
			if r != nil {
				return nil, r
			}
			if last.Less(id) {
				return nil, errSetIDBelowMaxDeleted
			}
			op.MaxDeletedID = &id
		default:
			return nil, errSyntax
		}
	}
	return &Plan{Op: op, Format: xreply.OK}, nil
}
