package xargs

import (
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/streams"
)

// Errors of the trim clause, in streamParseAddOrTrimArgsOrReply's words,
// and xaddCommand's arity check.
const (
	ErrTrimBoth       = resp.ErrorReply("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
	ErrMaxLenNegative = resp.ErrorReply("ERR The MAXLEN argument must be >= 0.")
	ErrLimitNegative  = resp.ErrorReply("ERR The LIMIT argument must be >= 0.")
	ErrLimitNoTrim    = resp.ErrorReply("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
	ErrXTrimNoTrim    = resp.ErrorReply("ERR syntax error, XTRIM must be called with a trimming strategy")
	ErrLimitNoApprox  = resp.ErrorReply("ERR syntax error, LIMIT cannot be used without the special ~ option")
	ErrXAddArity      = resp.ErrorReply("ERR wrong number of arguments for 'xadd' command")
)

// XAdd parses XADD key [NOMKSTREAM] [KEEPREF|DELREF|ACKED]
// [IDMPAUTO pid | IDMP pid iid] [MAXLEN|MINID
// [=|~] threshold [LIMIT count]] *|ms-*|ms-seq field value [field value ...]. The fields
// alias args, which the stream then keeps: safe because the request reader
// allocates every argument afresh.
func XAdd(args [][]byte) (wire.XAdd, resp.Reply) {
	a, r := parseAddTrim(args, true)
	if r != nil {
		return wire.XAdd{}, r
	}
	// xaddCommand's arity check: at least one pair after the ID, and pairs.
	fields := len(args) - (a.next + 1)
	if fields < 2 || fields%2 == 1 {
		return wire.XAdd{}, ErrXAddArity
	}
	return wire.XAdd{
		Base:       key(args[1]),
		NoMkStream: a.noMkStream,
		Trim:       a.trim,
		ID:         a.id,
		Fields:     args[a.next+1:],
		IDMP:       a.idmp.clause(args[a.next+1:]),
	}, nil
}

// XTrim parses XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
// [KEEPREF|DELREF|ACKED].
func XTrim(args [][]byte) (wire.XTrim, resp.Reply) {
	a, r := parseAddTrim(args, false)
	if r != nil {
		return wire.XTrim{}, r
	}
	return wire.XTrim{Base: key(args[1]), Trim: a.trim}, nil
}

// addTrim is what streamParseAddOrTrimArgsOrReply parses.
type addTrim struct {
	trim       wire.Trim
	noMkStream bool
	id         streams.IDSpec
	idmp       idmpClause
	// next is the index after the options: XADD's ID position (len(args)
	// when no ID was reached), len(args) for XTRIM.
	next int
}

// parseAddTrim mirrors Redis's streamParseAddOrTrimArgsOrReply for XADD
// (xadd true) and XTRIM: options in any order from args[2]; for XADD the
// first token that is not an option is the ID ("*" shortcuts the loop).
// MAXLEN/MINID/LIMIT take a value only when one follows ("moreargs"); the
// "~"/"=" marker is taken only when a threshold follows it. KEEPREF,
// DELREF or ACKED (Redis 8.2) is taken once: a second one is, for XADD, the
// ID (an invalid one), for XTRIM a syntax error.
func parseAddTrim(args [][]byte, xadd bool) (addTrim, resp.Reply) {
	a := addTrim{trim: wire.Trim{Limit: -1}, id: streams.IDSpec{Auto: true}}
	var limit int64 // Redis's args->limit, 0 until LIMIT is parsed
	limitGiven, refGiven := false, false
	i := 2
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			a.next = i
			return a.finish(xadd, limit, limitGiven)
		case isOpt(opt, "MAXLEN") && more > 0:
			if a.trim.Strategy != wire.TrimNone {
				return a, ErrTrimBoth
			}
			i = a.trimMarker(args, i, more)
			v, r := Int(args[i+1])
			if r != nil {
				return a, r
			}
			if v < 0 {
				return a, ErrMaxLenNegative
			}
			i++
			a.trim.Strategy, a.trim.MaxLen = wire.TrimMaxLen, v
		case isOpt(opt, "MINID") && more > 0:
			if a.trim.Strategy != wire.TrimNone {
				return a, ErrTrimBoth
			}
			i = a.trimMarker(args, i, more)
			id, r := StrictID(args[i+1])
			if r != nil {
				return a, r
			}
			i++
			a.trim.Strategy, a.trim.MinID = wire.TrimMinID, id
		case isOpt(opt, "LIMIT") && more > 0:
			v, r := Int(args[i+1])
			if r != nil {
				return a, r
			}
			if v < 0 {
				return a, ErrLimitNegative
			}
			limit, limitGiven = v, true
			i++
		case xadd && isOpt(opt, "NOMKSTREAM"):
			a.noMkStream = true
		case !refGiven && isRefMode(opt):
			a.trim.Ref, _ = refMode(opt)
			refGiven = true
		case xadd && isOpt(opt, "IDMPAUTO") && more > 0:
			var r resp.Reply
			if i, r = a.idmp.parse(args, i, true); r != nil {
				return a, r
			}
		case xadd && isOpt(opt, "IDMP") && more > 1:
			var r resp.Reply
			if i, r = a.idmp.parse(args, i, false); r != nil {
				return a, r
			}
		case xadd:
			spec, err := streams.ParseIDSpec(opt)
			if err != nil {
				return a, ErrInvalidID
			}
			a.id = spec
			a.next = i
			return a.finish(xadd, limit, limitGiven)
		default:
			return a, resp.ErrSyntax
		}
	}
	a.next = i
	return a.finish(xadd, limit, limitGiven)
}

// isRefMode reports whether opt is KEEPREF, DELREF or ACKED.
func isRefMode(opt []byte) bool {
	_, ok := refMode(opt)
	return ok
}

// trimMarker consumes MAXLEN/MINID's optional "~" or "=" (only when a
// threshold follows it) and returns the index before the threshold.
func (a *addTrim) trimMarker(args [][]byte, i, more int) int {
	a.trim.Approx = false
	if more >= 2 {
		next := args[i+1]
		if len(next) == 1 && (next[0] == '~' || next[0] == '=') {
			a.trim.Approx = next[0] == '~'
			return i + 1
		}
	}
	return i
}

// finish applies the checks Redis makes after the option loop, in its order.
func (a addTrim) finish(xadd bool, limit int64, limitGiven bool) (addTrim, resp.Reply) {
	// Redis tests the parsed value, not whether LIMIT was given: "LIMIT 0"
	// without a strategy gets past this check and fails on the next ones.
	if limit != 0 && a.trim.Strategy == wire.TrimNone {
		return a, ErrLimitNoTrim
	}
	if !xadd && a.trim.Strategy == wire.TrimNone {
		return a, ErrXTrimNoTrim
	}
	if limitGiven {
		if !a.trim.Approx {
			return a, ErrLimitNoApprox
		}
		a.trim.Limit = limit
	}
	if a.trim.Strategy == wire.TrimNone {
		// XADD KEEPREF|DELREF|ACKED without trimming does nothing with
		// it: logged as before Redis 8.2.
		a.trim.Ref = wire.RefKeep
	}
	// Only "*": a client may not choose the ID of an idempotent entry.
	if a.idmp.given && !a.id.Auto {
		return a, ErrIDMPAutoID
	}
	return a, nil
}
