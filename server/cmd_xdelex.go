package server

import (
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/server/xargs"
	"streamd/server/xreply"
)

// Redis 8.2's XDELEX and XACKDEL (redis8-streams.md §1). KEEPREF, DELREF
// and ACKED on XADD/XTRIM are parsed with the trim clause (xargs.XAdd,
// xargs.XTrim).

// xdelexCommands are the rows of XDELEX and XACKDEL, with Redis 8.2's
// arity, flags and ACL categories.
func xdelexCommands() []*Command {
	rwFast := []string{"write", "fast"}
	acl := []string{"@write", "@stream", "@fast"}
	return []*Command{
		keyCommand("xdelex", -5, rwFast, acl,
			"Deletes one or multiple entries from the stream.", "8.2.0", cmdXDELEX),
		keyCommand("xackdel", -6, rwFast, acl,
			"Acknowledges and conditionally deletes one or multiple entries (messages) for a stream consumer group.",
			"8.2.0", cmdXACKDEL),
	}
}

// refCodes is an array of n -1s: XDELEX/XACKDEL's answer for a missing key
// (or group).
func refCodes(n int) Reply {
	out := make(resp.Array, n)
	for i := range out {
		out[i] = Int(wire.RefNotFound)
	}
	return out
}

// refResult is XDELEX/XACKDEL's Format: an array of integers, one per ID
// (the same in RESP2 and RESP3).
func refResult(res any, err error) Reply {
	if err != nil {
		return xreply.Error(err)
	}
	r, _ := res.(wire.RefResult)
	out := make(resp.Array, len(r.Codes))
	for i, c := range r.Codes {
		out[i] = Int(c)
	}
	return out
}

// cmdXDELEX plans XDELEX key [KEEPREF|DELREF|ACKED] IDS numids id [id ...].
// As xdelexCommand: options first (their errors win), then a missing key
// answers -1 for every ID before the IDs are parsed, then the IDs (all of
// them before anything is deleted).
func cmdXDELEX(c *Client, args [][]byte) (Plan, Reply) {
	mode, idArgs, r := xargs.RefDelete(args, 2)
	if r != nil {
		return Plan{}, r
	}
	ids, r := xargs.StrictIDs(idArgs)
	if r != nil {
		return keyFirst(c, args[1], refCodes(len(idArgs)), r)
	}
	return Plan{Op: wire.XDelEx{Base: keyBase(c, args[1]), Mode: mode, IDs: ids}, Format: refResult}, nil
}

// cmdXACKDEL plans XACKDEL key group [KEEPREF|DELREF|ACKED] IDS numids id
// [id ...]: as XDELEX, a missing key or group answering -1 for every ID
// before the IDs are parsed.
func cmdXACKDEL(c *Client, args [][]byte) (Plan, Reply) {
	mode, idArgs, r := xargs.RefDelete(args, 3)
	if r != nil {
		return Plan{}, r
	}
	ids, r := xargs.StrictIDs(idArgs)
	if r != nil {
		missing := refCodes(len(idArgs))
		return groupFirst(c, args[1], args[2], missing, missing, r)
	}
	op := wire.XAckDel{Base: keyBase(c, args[1]), Group: string(args[2]), Mode: mode, IDs: ids}
	return Plan{Op: op, Format: refResult}, nil
}
