package xargs

import (
	"math"

	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/streams"
)

// Errors of Redis 8.4's XREADGROUP CLAIM and 8.10's MAXCOUNT / MAXSIZE.
// The CLAIM texts are Redis's; the MAXCOUNT / MAXSIZE ones are ours (no
// Redis 8.10 source was available: see README "Differences from Redis 8").
const (
	ErrXReadClaim       = resp.ErrorReply("ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.")
	ErrClaimNotInt      = resp.ErrorReply("ERR min-idle-time is not an integer or out of range")
	ErrClaimNegative    = resp.ErrorReply("ERR min-idle-time must be a positive integer")
	ErrMaxCountPositive = resp.ErrorReply("ERR MAXCOUNT must be a positive integer")
	ErrMaxSizePositive  = resp.ErrorReply("ERR MAXSIZE must be a positive integer")
	ErrMaxCountBelow    = resp.ErrorReply("ERR MAXCOUNT must be greater than or equal to COUNT")
)

// Errors of XNACK (Redis 8.8, after #15091), in the order Redis checks
// them after the key and group lookup.
const (
	ErrNackMode          = resp.ErrorReply("ERR mode must be SILENT, FAIL, or FATAL")
	ErrNackNumIDs        = resp.ErrorReply("ERR numids must be a positive integer")
	ErrNackNumIDsMatch   = resp.ErrorReply("ERR number of IDs doesn't match numids")
	ErrNackRetryNegative = resp.ErrorReply("ERR Invalid RETRYCOUNT value, must be >= 0")
	ErrNackExpectedIDS   = resp.ErrorReply("ERR syntax error, expected IDS keyword")
)

// readOpt parses XREAD/XREADGROUP's Redis 8 options at args[i] (CLAIM,
// MAXCOUNT, MAXSIZE, each with a value at args[i+1]); ok is false when
// args[i] is none of them (or has no value).
func (a *Read) readOpt(args [][]byte, i int, group bool) (next int, ok bool, r resp.Reply) {
	if i+1 >= len(args) {
		return i, false, nil
	}
	switch o := args[i]; {
	case isOpt(o, "CLAIM"):
		if !group {
			return i, true, ErrXReadClaim
		}
		ms, ok := ParseInt64(args[i+1])
		if !ok {
			return i, true, ErrClaimNotInt
		}
		if ms < 0 {
			return i, true, ErrClaimNegative
		}
		a.Claim, a.MinIdleMs = true, ms
	case isOpt(o, "MAXCOUNT"):
		n, r := Int(args[i+1])
		if r != nil {
			return i, true, r
		}
		if n <= 0 {
			return i, true, ErrMaxCountPositive
		}
		a.MaxCount = n
	case isOpt(o, "MAXSIZE"):
		n, r := Int(args[i+1])
		if r != nil {
			return i, true, r
		}
		if n <= 0 {
			return i, true, ErrMaxSizePositive
		}
		a.MaxSize = n
	default:
		return i, false, nil
	}
	return i + 1, true, nil
}

// checkCaps is the check after the option loop: MAXCOUNT must not be below
// a COUNT given with it.
func (a *Read) checkCaps() resp.Reply {
	if a.MaxCount > 0 && a.Count > 0 && a.MaxCount < a.Count {
		return ErrMaxCountBelow
	}
	return nil
}

// XNack parses XNACK key group (SILENT|FAIL|FATAL) IDS numids id…
// [RETRYCOUNT n] [FORCE] (Redis 8.8's xnackCommand): the mode is argv[3];
// IDS, RETRYCOUNT and FORCE follow in any order; IDs are parsed last, so a
// bad ID loses to every option error. The planner looks the key and group
// up first (they win over any of these errors).
func XNack(args [][]byte) (wire.XNack, resp.Reply) {
	op := wire.XNack{Base: key(args[1]), Group: string(args[2]), RetryCount: -1}
	switch m := args[3]; {
	case isOpt(m, "SILENT"):
		op.Mode = wire.NackSilent
	case isOpt(m, "FAIL"):
		op.Mode = wire.NackFail
	case isOpt(m, "FATAL"):
		op.Mode = wire.NackFatal
	default:
		return op, ErrNackMode
	}
	var idArgs [][]byte
	seenIDs := false
	for i := 4; i < len(args); i++ {
		more := len(args) - i - 1
		switch o := args[i]; {
		case isOpt(o, "IDS") && more > 0:
			n, ok := ParseInt64(args[i+1])
			if !ok || n <= 0 || n > math.MaxInt32 {
				return op, ErrNackNumIDs
			}
			if n > int64(more-1) {
				return op, ErrNackNumIDsMatch
			}
			idArgs = args[i+2 : i+2+int(n)]
			seenIDs = true
			i += 1 + int(n)
		case isOpt(o, "RETRYCOUNT") && more > 0:
			n, r := Int(args[i+1])
			if r != nil {
				return op, r
			}
			if n < 0 {
				return op, ErrNackRetryNegative
			}
			op.RetryCount = n
			i++
		case isOpt(o, "FORCE"):
			op.Force = true
		default:
			return op, resp.ErrorReply("ERR Unrecognized XNACK option '" + string(o) + "'")
		}
	}
	if !seenIDs {
		return op, ErrNackExpectedIDS
	}
	ids := make([]streams.ID, len(idArgs))
	for i, a := range idArgs {
		id, r := StrictID(a)
		if r != nil {
			return op, r
		}
		ids[i] = id
	}
	op.IDs = ids
	return op, nil
}
