package server

import (
	"streamd/replication/wire"
	"streamd/server/xargs"
	"streamd/server/xreply"
)

// errNoKeyOrGroup is the NOGROUP text of XCLAIM, XAUTOCLAIM and XPENDING.
func errNoKeyOrGroup(key, group []byte) ErrorReply {
	return ErrorReply("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(group) + "'")
}

// cmdXACK plans XACK key group id [id ...]. Redis answers 0 for a missing
// key or group before it parses the IDs, and parses them all before it
// acknowledges any ("all or nothing").
func cmdXACK(c *Client, args [][]byte) (Plan, Reply) {
	ids, r := xargs.StrictIDs(args[3:])
	if r != nil {
		return groupFirst(c, args[1], args[2], Int(0), Int(0), r)
	}
	op := wire.XAck{Base: keyBase(c, args[1]), Group: string(args[2]), IDs: ids}
	return Plan{Op: op, Format: xreply.Int}, nil
}

// cmdXCLAIM plans XCLAIM key group consumer min-idle-time id [id ...]
// [IDLE ms] [TIME ms] [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id]
// (arguments: xargs.XClaim). As xclaimCommand, a missing key or group is
// NOGROUP before any argument error.
func cmdXCLAIM(c *Client, args [][]byte) (Plan, Reply) {
	op, r := xargs.XClaim(args)
	if r != nil {
		return groupFirst(c, args[1], args[2],
			errNoKeyOrGroup(args[1], args[2]), errNoKeyOrGroup(args[1], args[2]), r)
	}
	op.DB = c.DB()
	justID := op.JustID
	return Plan{Op: op, Format: xreply.Claimed(justID)}, nil
}

// cmdXAUTOCLAIM plans XAUTOCLAIM key group consumer min-idle-time start
// [COUNT n] [JUSTID] (arguments: xargs.XAutoClaim, all parsed before Redis
// looks the group up).
func cmdXAUTOCLAIM(c *Client, args [][]byte) (Plan, Reply) {
	op, r := xargs.XAutoClaim(args)
	if r != nil {
		return Plan{}, r
	}
	op.DB = c.DB()
	justID := op.JustID
	return Plan{Op: op, Format: xreply.AutoClaimed(justID)}, nil
}
