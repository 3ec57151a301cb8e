package xargs

import (
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/streams"
)

// XClaim parses XCLAIM key group consumer min-idle-time id [id ...]
// [IDLE ms] [TIME ms] [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id] as
// xclaimCommand: the ID list ends at the first argument that is not an ID;
// options may repeat and IDLE/TIME set the same delivery time (the last one
// wins). Redis answers a missing key or group before any of these errors.
func XClaim(args [][]byte) (wire.XClaim, resp.Reply) {
	op := wire.XClaim{
		Base: key(args[1]), Group: string(args[2]), Consumer: string(args[3]),
		IdleMs: -1, TimeMs: -1, RetryCount: -1,
	}
	minIdle, r := IntMsg(args[4], "ERR Invalid min-idle-time argument for XCLAIM")
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
			v, r := IntMsg(args[j], "ERR Invalid IDLE option argument for XCLAIM")
			if r != nil {
				return op, r
			}
			// IDLE and TIME both set Redis's one deliverytime; a negative
			// value, or one in the future, means "now", as not given.
			op.IdleMs, op.TimeMs = nonNegative(v), -1
		case isOpt(opt, "TIME") && more > 0:
			j++
			v, r := IntMsg(args[j], "ERR Invalid TIME option argument for XCLAIM")
			if r != nil {
				return op, r
			}
			op.TimeMs, op.IdleMs = nonNegative(v), -1
		case isOpt(opt, "RETRYCOUNT") && more > 0:
			j++
			v, r := IntMsg(args[j], "ERR Invalid RETRYCOUNT option argument for XCLAIM")
			if r != nil {
				return op, r
			}
			// Redis sets the count only when retrycount >= 0.
			op.RetryCount = nonNegative(v)
		case isOpt(opt, "LASTID") && more > 0:
			j++
			id, r := StrictID(args[j])
			if r != nil {
				return op, r
			}
			op.LastID = &id
		default:
			return op, resp.ErrorReply("ERR Unrecognized XCLAIM option '" + CString(opt, len(opt)) + "'")
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

// XAutoClaim parses XAUTOCLAIM key group consumer min-idle-time start
// [COUNT n] [JUSTID]. Unlike XCLAIM, Redis parses every argument before it
// looks the group up; start is a range ID ("-", "+", "(" allowed).
func XAutoClaim(args [][]byte) (wire.XAutoClaim, resp.Reply) {
	minIdle, r := IntMsg(args[4], "ERR Invalid min-idle-time argument for XAUTOCLAIM")
	if r != nil {
		return wire.XAutoClaim{}, r
	}
	start, r := RangeStart(args[5])
	if r != nil {
		return wire.XAutoClaim{}, r
	}
	op := wire.XAutoClaim{
		Base: key(args[1]), Group: string(args[2]), Consumer: string(args[3]),
		MinIdleMs: max(minIdle, 0), Start: start, Count: 100,
	}
	// Redis caps COUNT at LONG_MAX / max(sizeof(streamID), attempts factor
	// 10) = LONG_MAX/16, so that COUNT×10 PEL probes cannot overflow.
	const maxCount = (1<<63 - 1) / 16
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case isOpt(args[j], "COUNT") && more > 0:
			n, ok := ParseInt64(args[j+1])
			if !ok || n < 1 || n > maxCount {
				return wire.XAutoClaim{}, resp.ErrorReply("ERR COUNT must be > 0")
			}
			op.Count = n
			j++
		case isOpt(args[j], "JUSTID"):
			op.JustID = true
		default:
			return wire.XAutoClaim{}, resp.ErrSyntax
		}
	}
	return op, nil
}
