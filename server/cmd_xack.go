package server

import (
	"streamd/replication/wire"
	"streamd/server/xreply"
	"streamd/streams"
)

// errNoKeyOrGroup is the NOGROUP text of XCLAIM, XAUTOCLAIM and XPENDING.
func errNoKeyOrGroup(key, group []byte) ErrorReply {
	return ErrorReply("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(group) + "'")
}

// cmdXACK plans XACK key group id [id ...]. Redis answers 0 for a missing
// key or group before it parses the IDs, and parses them all before it
// acknowledges any ("all or nothing").
func cmdXACK(c *Client, args [][]byte) (*Plan, Reply) {
	ids, r := strictIDsArg(args[3:])
	if r != nil {
		return groupFirst(c, args[1], args[2], Int(0), Int(0), r)
	}
	op := wire.XAck{Base: keyBase(c, args[1]), Group: string(args[2]), IDs: ids}
	return &Plan{Op: op, Format: xreply.Int}, nil
}

// cmdXCLAIM plans XCLAIM key group consumer min-idle-time id [id ...]
// [IDLE ms] [TIME ms] [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id]. As
// xclaimCommand: a missing key or group is NOGROUP before any argument
// error; the ID list ends at the first argument that is not an ID; options
// may repeat and IDLE/TIME set the same delivery time (the last one wins).
func cmdXCLAIM(c *Client, args [][]byte) (*Plan, Reply) {
	op, r := parseXClaim(c, args)
	if r != nil {
		return groupFirst(c, args[1], args[2],
			errNoKeyOrGroup(args[1], args[2]), errNoKeyOrGroup(args[1], args[2]), r)
	}
	return &Plan{Op: op, Format: xreply.Claimed(op.JustID)}, nil
}

// parseXClaim parses XCLAIM's arguments after the key, group and consumer.
func parseXClaim(c *Client, args [][]byte) (wire.XClaim, Reply) {
	op := wire.XClaim{
		Base: keyBase(c, args[1]), Group: string(args[2]), Consumer: string(args[3]),
		IdleMs: -1, TimeMs: -1, RetryCount: -1,
	}
	minIdle, r := intArgMsg(args[4], "ERR Invalid min-idle-time argument for XCLAIM")
	if r != nil {
		return op, r
	}
	op.MinIdleMs = max(minIdle, 0)
	j := 5
	for ; j < len(args); j++ {
		id, err := streams.ParseStrictID(args[j], 0)
		if err != nil {
			break
		}
		op.IDs = append(op.IDs, id)
	}
	for ; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := args[j]
		switch {
		case isOpt(opt, "FORCE"):
			op.Force = true
		case isOpt(opt, "JUSTID"):
			op.JustID = true
		case isOpt(opt, "IDLE") && more > 0:
			j++
			v, r := intArgMsg(args[j], "ERR Invalid IDLE option argument for XCLAIM")
			if r != nil {
				return op, r
			}
			// IDLE and TIME both set Redis's one deliverytime; a negative
			// value, or one in the future, means "now", as not given.
			op.IdleMs, op.TimeMs = nonNegative(v), -1
		case isOpt(opt, "TIME") && more > 0:
			j++
			v, r := intArgMsg(args[j], "ERR Invalid TIME option argument for XCLAIM")
			if r != nil {
				return op, r
			}
			op.TimeMs, op.IdleMs = nonNegative(v), -1
		case isOpt(opt, "RETRYCOUNT") && more > 0:
			j++
			v, r := intArgMsg(args[j], "ERR Invalid RETRYCOUNT option argument for XCLAIM")
			if r != nil {
				return op, r
			}
			// Redis sets the count only when retrycount >= 0.
			op.RetryCount = nonNegative(v)
		case isOpt(opt, "LASTID") && more > 0:
			j++
			id, r := strictIDArg(args[j])
			if r != nil {
				return op, r
			}
			op.LastID = &id
		default:
			return op, ErrorReply("ERR Unrecognized XCLAIM option '" + cString(opt, len(opt)) + "'")
		}
	}
	return op, nil
}

// nonNegative maps a negative option value to -1, the wire's "not given",
// where Redis treats every negative value as not given.
func nonNegative(v int64) int64 {
	if v < 0 {
		return -1
	}
	return v
}

// cmdXAUTOCLAIM plans XAUTOCLAIM key group consumer min-idle-time start
// [COUNT n] [JUSTID]. Unlike XCLAIM, Redis parses every argument before it
// looks the group up; start is a range ID ("-", "+", "(" allowed).
func cmdXAUTOCLAIM(c *Client, args [][]byte) (*Plan, Reply) {
	minIdle, r := intArgMsg(args[4], "ERR Invalid min-idle-time argument for XAUTOCLAIM")
	if r != nil {
		return nil, r
	}
	start, r := rangeStartArg(args[5])
	if r != nil {
		return nil, r
	}
	op := wire.XAutoClaim{
		Base: keyBase(c, args[1]), Group: string(args[2]), Consumer: string(args[3]),
		MinIdleMs: max(minIdle, 0), Start: start, Count: 100,
	}
	// Redis caps COUNT at LONG_MAX / max(sizeof(streamID), attempts factor
	// 10) = LONG_MAX/16, so that COUNT×10 PEL probes cannot overflow.
	const maxCount = (1<<63 - 1) / 16
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case isOpt(args[j], "COUNT") && more > 0:
			n, ok := parseInt64(args[j+1])
			if !ok || n < 1 || n > maxCount {
				return nil, ErrorReply("ERR COUNT must be > 0")
			}
			op.Count = n
			j++
		case isOpt(args[j], "JUSTID"):
			op.JustID = true
		default:
			return nil, errSyntax
		}
	}
	return &Plan{Op: op, Format: xreply.AutoClaimed(op.JustID)}, nil
}
