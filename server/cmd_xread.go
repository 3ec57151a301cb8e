package server

import (
	"math"
	"time"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/xreply"
	"streamd/streams"
)

// Errors of xreadCommand (Redis 7.0 texts; 7.0 names XREAD in the
// unbalanced-list error for both commands).
const (
	errXReadUnbalanced = ErrorReply("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
	errXReadGroupOpt   = ErrorReply("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
	errXReadNoAck      = ErrorReply("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
	errXReadMissGroup  = ErrorReply("ERR Missing GROUP option for XREADGROUP")
	errXReadGroupDolar = ErrorReply("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read " +
		"the history of this consumer by specifying a proper ID, or use the > ID to get new messages. " +
		"The $ ID would just return an empty result set.")
	errXReadGT = ErrorReply("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
)

// xreadArgs is the parsed form of XREAD/XREADGROUP.
type xreadArgs struct {
	block           bool
	timeout         time.Duration
	count           int64
	group, consumer []byte
	noack           bool
	keys, ids       [][]byte
}

// parseXRead mirrors the option loop of Redis's xreadCommand: options in any
// order until STREAMS (each needing its argument, else "syntax error"), the
// last COUNT/BLOCK wins, a negative COUNT means no limit.
func parseXRead(args [][]byte, group bool) (*xreadArgs, Reply) {
	a := &xreadArgs{}
	streamsAt := 0
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		switch o := args[i]; {
		case isOpt(o, "BLOCK") && more > 0:
			i++
			ms, ok := parseInt64(args[i])
			if !ok {
				return nil, errTimeoutNotInt
			}
			if ms < 0 {
				return nil, errTimeoutNegative
			}
			if ms > math.MaxInt64-time.Now().UnixMilli() {
				return nil, errTimeoutRange
			}
			a.block = true
			a.timeout = durationMs(ms)
		case isOpt(o, "COUNT") && more > 0:
			i++
			n, r := intArg(args[i])
			if r != nil {
				return nil, r
			}
			a.count = max(n, 0)
		case isOpt(o, "STREAMS") && more > 0:
			streamsAt = i + 1
			n := len(args) - streamsAt
			if n%2 != 0 {
				return nil, errXReadUnbalanced
			}
			a.keys = args[streamsAt : streamsAt+n/2]
			a.ids = args[streamsAt+n/2:]
			i = len(args)
		case isOpt(o, "GROUP") && more >= 2:
			if !group {
				return nil, errXReadGroupOpt
			}
			a.group, a.consumer = args[i+1], args[i+2]
			i += 2
		case isOpt(o, "NOACK"):
			if !group {
				return nil, errXReadNoAck
			}
			a.noack = true
		default:
			return nil, errSyntax
		}
	}
	if streamsAt == 0 {
		return nil, errSyntax
	}
	if group && a.group == nil {
		return nil, errXReadMissGroup
	}
	return a, nil
}

// durationMs converts BLOCK's milliseconds; one too large for a Duration
// (about 292 years) waits forever, as it would in practice.
func durationMs(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// cmdXREAD plans XREAD [COUNT n] [BLOCK ms] STREAMS key… id…. "$" reads
// after the stream's last ID at the time of the command: nothing now, so the
// first try reads after the maximum ID for it, and a blocking read resolves
// it (wire.LastIDs) once subscribed, keeping it across wake-ups. "+" reads
// the last entry (Redis 7.4).
func cmdXREAD(c *Client, args [][]byte) (*Plan, Reply) {
	a, r := parseXRead(args, false)
	if r != nil {
		return nil, r
	}
	q := wire.XRead{DB: c.DB(), Count: a.count, Streams: make([]wire.ReadStream, len(a.keys))}
	var dollar []int
	for i, k := range a.keys {
		rs := wire.ReadStream{Key: string(k)}
		switch id := a.ids[i]; string(id) {
		case "$":
			rs.ID = streams.MaxID
			dollar = append(dollar, i)
		case "+":
			rs.Last = true
		case ">":
			return nil, errXReadGT
		default:
			parsed, r := strictIDArg(id)
			if r != nil {
				return nil, r
			}
			rs.ID = parsed
		}
		q.Streams[i] = rs
	}
	p := &Plan{Op: q, Format: xreadFormat(c)}
	if a.block {
		p.Block = &Blocking{Timeout: a.timeout}
		if len(dollar) > 0 {
			p.Block.Prepare = func(s *Server, p *Plan) Reply {
				return resolveDollar(s, p, dollar)
			}
		}
	}
	return p, nil
}

// resolveDollar sets the "$" streams of a blocking XREAD to their last IDs.
func resolveDollar(s *Server, p *Plan, dollar []int) Reply {
	q := p.Op.(wire.XRead)
	names := make([]string, len(dollar))
	for i, j := range dollar {
		names[i] = q.Streams[j].Key
	}
	res, err := s.keyShard(names[0]).Query(wire.LastIDs{DB: q.DB, Names: names})
	if err != nil {
		return xreply.Error(err)
	}
	ids, _ := res.([]streams.ID)
	rs := append([]wire.ReadStream(nil), q.Streams...)
	for i, j := range dollar {
		if i < len(ids) {
			rs[j].ID = ids[i]
		}
	}
	q.Streams = rs
	p.Op = q
	return nil
}

// cmdXREADGROUP plans XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK]
// STREAMS key… id…. ">" reads entries never delivered to the group; any
// other ID reads the consumer's pending history (never blocks).
func cmdXREADGROUP(c *Client, args [][]byte) (*Plan, Reply) {
	a, r := parseXRead(args, true)
	if r != nil {
		return nil, r
	}
	cmd := wire.XReadGroup{DB: c.DB(), Group: string(a.group), Consumer: string(a.consumer),
		Count: a.count, NoAck: a.noack, Streams: make([]wire.ReadStream, len(a.keys))}
	for i, k := range a.keys {
		rs := wire.ReadStream{Key: string(k)}
		switch id := a.ids[i]; string(id) {
		case ">":
			rs.New = true
		case "$":
			return nil, groupCheckedError(c, a, i, errXReadGroupDolar)
		default:
			parsed, r := strictIDArg(id)
			if r != nil {
				return nil, groupCheckedError(c, a, i, r)
			}
			rs.ID = parsed
		}
		cmd.Streams[i] = rs
	}
	p := &Plan{Op: cmd, Format: xreadFormat(c)}
	if a.block {
		p.Block = &Blocking{Timeout: a.timeout, Group: true}
	}
	return p, nil
}

// groupCheckedError answers an ID error at stream i of XREADGROUP the way
// Redis orders its checks: it looks each key and group up before parsing the
// key's ID, so a missing key or group among streams 0..i answers NOGROUP
// first.
func groupCheckedError(c *Client, a *xreadArgs, i int, idErr Reply) Reply {
	for _, k := range a.keys[:i+1] {
		res, err := c.srv.keyShard(string(k)).Query(wire.XInfoGroups{Base: wire.Base{DB: c.DB(), Key: string(k)}})
		found := false
		if err == nil {
			for _, g := range res.([]state.GroupInfo) {
				if g.Name == string(a.group) {
					found = true
					break
				}
			}
		}
		if !found {
			return ErrorReply("NOGROUP No such key '" + string(k) + "' or consumer group '" +
				string(a.group) + "' in XREADGROUP with GROUP option")
		}
	}
	return idErr
}

// xreadFormat renders an XREAD/XREADGROUP answer (xreply.Read) in the
// client's protocol at the time of the answer.
func xreadFormat(c *Client) func(any, error) Reply {
	return func(res any, err error) Reply { return xreply.Read(res, err, c.Proto()) }
}
