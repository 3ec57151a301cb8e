package xargs

import (
	"math"
	"strings"

	"streamd/replication/wire"
	"streamd/server/resp"
)

// ErrInvalidCursor is parseScanCursorOrReply's error.
const ErrInvalidCursor = resp.ErrorReply("ERR invalid cursor")

// ScanCursor mirrors Redis 7.0's parseScanCursorOrReply, which uses
// strtoul: an optional sign ("-1" wraps to 2^64-1, as strtoul negates),
// decimal digits, no leading space, no overflow.
func ScanCursor(b []byte) (uint64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// Scan parses SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]: the cursor
// first, then the options (COUNT < 1 is a syntax error, as in
// scanGenericCommand; MATCH "*" matches without a pattern).
func Scan(args [][]byte) (wire.Scan, resp.Reply) {
	cursor, ok := ScanCursor(args[1])
	if !ok {
		return wire.Scan{}, ErrInvalidCursor
	}
	q := wire.Scan{Cursor: cursor, Count: 10}
	for i := 2; i < len(args); i++ {
		more := len(args) - 1 - i
		switch o := args[i]; {
		case isOpt(o, "COUNT") && more > 0:
			i++
			n, r := Int(args[i])
			if r != nil {
				return wire.Scan{}, r
			}
			if n < 1 {
				return wire.Scan{}, resp.ErrSyntax
			}
			q.Count = n
		case isOpt(o, "MATCH") && more > 0:
			i++
			q.Match = string(args[i])
			if q.Match == "*" { // Redis skips matching for "*"
				q.Match = ""
			}
		case isOpt(o, "TYPE") && more > 0:
			i++
			q.Type = string(args[i])
		default:
			return wire.Scan{}, resp.ErrSyntax
		}
	}
	return q, nil
}

// Flush checks FLUSHDB/FLUSHALL's optional ASYNC|SYNC.
func Flush(args [][]byte) resp.Reply {
	if len(args) == 1 || (len(args) == 2 && (isOpt(args[1], "ASYNC") || isOpt(args[1], "SYNC"))) {
		return nil
	}
	return resp.ErrSyntax
}

// Expire parses EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT key time [NX|XX|GT|LT]
// as Redis 7's expireGenericCommand: options first
// (parseExtendedExpireArgumentsOrReply), then the time, whose conversion to
// an absolute unix time in ms must not overflow ("invalid expire time in
// '<cmd>' command"; nowMs is the time in Unix milliseconds). The options
// are passed as combined flags.
func Expire(args [][]byte, relative, seconds bool, nowMs int64) (wire.Expire, resp.Reply) {
	var nx, xx, gt, lt bool
	for _, o := range args[3:] {
		switch {
		case isOpt(o, "NX"):
			nx = true
		case isOpt(o, "XX"):
			xx = true
		case isOpt(o, "GT"):
			gt = true
		case isOpt(o, "LT"):
			lt = true
		default:
			return wire.Expire{}, resp.ErrorReply("ERR Unsupported option " + CString(o, 1<<20))
		}
	}
	if nx && (xx || gt || lt) {
		return wire.Expire{}, resp.ErrorReply("ERR NX and XX, GT or LT options at the same time are not compatible")
	}
	if gt && lt {
		return wire.Expire{}, resp.ErrorReply("ERR GT and LT options at the same time are not compatible")
	}
	when, r := Int(args[2])
	if r != nil {
		return wire.Expire{}, r
	}
	invalid := resp.ErrorReply("ERR invalid expire time in '" + strings.ToLower(string(args[0])) + "' command")
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return wire.Expire{}, invalid
		}
		when *= 1000
	}
	if relative && when > math.MaxInt64-nowMs {
		return wire.Expire{}, invalid
	}
	cond := wire.ExpireAlways
	for _, f := range []struct {
		on   bool
		flag wire.ExpireCond
	}{{nx, wire.ExpireNX}, {xx, wire.ExpireXX}, {gt, wire.ExpireGT}, {lt, wire.ExpireLT}} {
		if f.on {
			cond |= f.flag
		}
	}
	return wire.Expire{Base: key(args[1]), Ms: when, Relative: relative, Cond: cond}, nil
}
