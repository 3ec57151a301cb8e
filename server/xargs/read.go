package xargs

import (
	"math"
	"time"

	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/streams"
)

// Errors of xreadCommand (Redis 7.0 texts; 7.0 names XREAD in the
// unbalanced-list error for both commands).
const (
	ErrXReadUnbalanced = resp.ErrorReply("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
	ErrXReadGroupOpt   = resp.ErrorReply("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
	ErrXReadNoAck      = resp.ErrorReply("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
	ErrXReadMissGroup  = resp.ErrorReply("ERR Missing GROUP option for XREADGROUP")
	ErrXReadGroupDolar = resp.ErrorReply("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read " +
		"the history of this consumer by specifying a proper ID, or use the > ID to get new messages. " +
		"The $ ID would just return an empty result set.")
	ErrXReadGT = resp.ErrorReply("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
)

// Read is the parsed form of XREAD/XREADGROUP's options.
type Read struct {
	// Block is set by BLOCK, Timeout is its value (0 waits forever).
	Block   bool
	Timeout time.Duration
	// Count is COUNT's value, 0 (no limit) when absent or negative.
	Count int64
	// Group and Consumer are GROUP's (XREADGROUP), NoAck is NOACK.
	Group, Consumer []byte
	NoAck           bool
	// Keys and IDs are the two halves of the STREAMS list.
	Keys, IDs [][]byte
	// Claim is CLAIM (XREADGROUP, Redis 8.4), MinIdleMs its value (the
	// last CLAIM wins).
	Claim     bool
	MinIdleMs int64
	// MaxCount and MaxSize are MAXCOUNT and MAXSIZE (Redis 8.10), 0 when
	// absent.
	MaxCount, MaxSize int64
}

// ParseRead mirrors the option loop of Redis's xreadCommand: options in any
// order until STREAMS (each needing its argument, else "syntax error"), the
// last COUNT/BLOCK wins, a negative COUNT means no limit. group is true for
// XREADGROUP; nowMs is the time in Unix milliseconds, for BLOCK's range
// check.
func ParseRead(args [][]byte, group bool, nowMs int64) (*Read, resp.Reply) {
	a := &Read{}
	streamsAt := 0
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		switch o := args[i]; {
		case isOpt(o, "BLOCK") && more > 0:
			i++
			ms, ok := ParseInt64(args[i])
			if !ok {
				return nil, ErrTimeoutNotInt
			}
			if ms < 0 {
				return nil, ErrTimeoutNegative
			}
			if ms > math.MaxInt64-nowMs {
				return nil, ErrTimeoutRange
			}
			a.Block = true
			a.Timeout = DurationMs(ms)
		case isOpt(o, "COUNT") && more > 0:
			i++
			n, r := Int(args[i])
			if r != nil {
				return nil, r
			}
			a.Count = max(n, 0)
		case isOpt(o, "STREAMS") && more > 0:
			streamsAt = i + 1
			n := len(args) - streamsAt
			if n%2 != 0 {
				return nil, ErrXReadUnbalanced
			}
			a.Keys = args[streamsAt : streamsAt+n/2]
			a.IDs = args[streamsAt+n/2:]
			i = len(args)
		case isOpt(o, "GROUP") && more >= 2:
			if !group {
				return nil, ErrXReadGroupOpt
			}
			a.Group, a.Consumer = args[i+1], args[i+2]
			i += 2
		case isOpt(o, "NOACK"):
			if !group {
				return nil, ErrXReadNoAck
			}
			a.NoAck = true
		default:
			next, ok, r := a.readOpt(args, i, group)
			if r != nil {
				return nil, r
			}
			if !ok {
				return nil, resp.ErrSyntax
			}
			i = next
		}
	}
	if streamsAt == 0 {
		return nil, resp.ErrSyntax
	}
	if r := a.checkCaps(); r != nil {
		return nil, r
	}
	if group && a.Group == nil {
		return nil, ErrXReadMissGroup
	}
	return a, nil
}

// DurationMs converts BLOCK's milliseconds; one too large for a Duration
// (about 292 years) waits forever, as it would in practice.
func DurationMs(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// ReadStreams parses XREAD's IDs: "$" reads after the maximum ID for now and
// its index is listed in dollar (the planner resolves it once subscribed),
// "+" reads the last entry (Redis 7.4), ">" is refused, any other a strict
// ID.
func (a *Read) ReadStreams() (rs []wire.ReadStream, dollar []int, r resp.Reply) {
	rs = make([]wire.ReadStream, len(a.Keys))
	for i, k := range a.Keys {
		s := wire.ReadStream{Key: string(k)}
		switch id := a.IDs[i]; string(id) {
		case "$":
			s.ID = streams.MaxID
			dollar = append(dollar, i)
		case "+":
			s.Last = true
		case ">":
			return nil, nil, ErrXReadGT
		default:
			if s.ID, r = StrictID(id); r != nil {
				return nil, nil, r
			}
		}
		rs[i] = s
	}
	return rs, dollar, nil
}

// GroupStreams parses XREADGROUP's IDs: ">" reads entries never delivered
// to the group, "$" is refused, any other a strict ID (the consumer's
// history). On an error, at is the stream whose ID is bad: Redis looks up
// every key and group up to it first.
func (a *Read) GroupStreams() (rs []wire.ReadStream, at int, r resp.Reply) {
	rs = make([]wire.ReadStream, len(a.Keys))
	for i, k := range a.Keys {
		s := wire.ReadStream{Key: string(k)}
		switch id := a.IDs[i]; string(id) {
		case ">":
			s.New = true
		case "$":
			return nil, i, ErrXReadGroupDolar
		default:
			if s.ID, r = StrictID(id); r != nil {
				return nil, i, r
			}
		}
		rs[i] = s
	}
	return rs, 0, nil
}
