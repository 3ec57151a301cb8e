package server

import (
	"streamd/replication/wire"
	"streamd/server/xreply"
	"streamd/streams"
)

// Errors of the trim clause, in streamParseAddOrTrimArgsOrReply's words.
const (
	errTrimBoth       = ErrorReply("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
	errMaxLenNegative = ErrorReply("ERR The MAXLEN argument must be >= 0.")
	errLimitNegative  = ErrorReply("ERR The LIMIT argument must be >= 0.")
	errLimitNoTrim    = ErrorReply("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
	errXTrimNoTrim    = ErrorReply("ERR syntax error, XTRIM must be called with a trimming strategy")
	errLimitNoApprox  = ErrorReply("ERR syntax error, LIMIT cannot be used without the special ~ option")
)

// addTrimArgs is what streamParseAddOrTrimArgsOrReply parses.
type addTrimArgs struct {
	trim       wire.Trim
	noMkStream bool
	id         streams.IDSpec
	// next is the index after the options: XADD's ID position (len(args)
	// when no ID was reached), len(args) for XTRIM.
	next int
}

// parseAddTrimArgs mirrors Redis's streamParseAddOrTrimArgsOrReply for XADD
// (xadd true) and XTRIM: options in any order from args[2]; for XADD the
// first token that is not an option is the ID ("*" shortcuts the loop).
// MAXLEN/MINID/LIMIT take a value only when one follows ("moreargs"); the
// "~"/"=" marker is taken only when a threshold follows it.
func parseAddTrimArgs(args [][]byte, xadd bool) (addTrimArgs, Reply) {
	a := addTrimArgs{trim: wire.Trim{Limit: -1}, id: streams.IDSpec{Auto: true}}
	var limit int64 // Redis's args->limit, 0 until LIMIT is parsed
	limitGiven := false
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
				return a, errTrimBoth
			}
			i = a.trimMarker(args, i, more)
			v, r := intArg(args[i+1])
			if r != nil {
				return a, r
			}
			if v < 0 {
				return a, errMaxLenNegative
			}
			i++
			a.trim.Strategy, a.trim.MaxLen = wire.TrimMaxLen, v
		case isOpt(opt, "MINID") && more > 0:
			if a.trim.Strategy != wire.TrimNone {
				return a, errTrimBoth
			}
			i = a.trimMarker(args, i, more)
			id, r := strictIDArg(args[i+1])
			if r != nil {
				return a, r
			}
			i++
			a.trim.Strategy, a.trim.MinID = wire.TrimMinID, id
		case isOpt(opt, "LIMIT") && more > 0:
			v, r := intArg(args[i+1])
			if r != nil {
				return a, r
			}
			if v < 0 {
				return a, errLimitNegative
			}
			limit, limitGiven = v, true
			i++
		case xadd && isOpt(opt, "NOMKSTREAM"):
			a.noMkStream = true
		case xadd:
			spec, err := streams.ParseIDSpec(opt)
			if err != nil {
				return a, errInvalidID
			}
			a.id = spec
			a.next = i
			return a.finish(xadd, limit, limitGiven)
		default:
			return a, errSyntax
		}
	}
	a.next = i
	return a.finish(xadd, limit, limitGiven)
}

// trimMarker consumes MAXLEN/MINID's optional "~" or "=" (only when a
// threshold follows it) and returns the index before the threshold.
func (a *addTrimArgs) trimMarker(args [][]byte, i, more int) int {
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
func (a addTrimArgs) finish(xadd bool, limit int64, limitGiven bool) (addTrimArgs, Reply) {
	// Redis tests the parsed value, not whether LIMIT was given: "LIMIT 0"
	// without a strategy gets past this check and fails on the next ones.
	if limit != 0 && a.trim.Strategy == wire.TrimNone {
		return a, errLimitNoTrim
	}
	if !xadd && a.trim.Strategy == wire.TrimNone {
		return a, errXTrimNoTrim
	}
	if limitGiven {
		if !a.trim.Approx {
			return a, errLimitNoApprox
		}
		a.trim.Limit = limit
	}
	return a, nil
}

// cmdXADD plans XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold
// [LIMIT count]] *|ms-*|ms-seq field value [field value ...].
func cmdXADD(c *Client, args [][]byte) (*Plan, Reply) {
	a, r := parseAddTrimArgs(args, true)
	if r != nil {
		return nil, r
	}
	// xaddCommand's arity check: at least one pair after the ID, and pairs.
	fields := len(args) - (a.next + 1)
	if fields < 2 || fields%2 == 1 {
		return nil, ErrorReply("ERR wrong number of arguments for 'xadd' command")
	}
	// Fields alias the request's arguments, which the stream then keeps:
	// safe because the request reader allocates every argument afresh.
	op := wire.XAdd{
		Base:       keyBase(c, args[1]),
		NoMkStream: a.noMkStream,
		Trim:       a.trim,
		ID:         a.id,
		Fields:     args[a.next+1:],
	}
	return &Plan{Op: op, Format: xreply.Added}, nil
}

// cmdXTRIM plans XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count].
// Redis 7.0 parses the arguments before it looks the key up, so argument
// errors win over a missing key.
func cmdXTRIM(c *Client, args [][]byte) (*Plan, Reply) {
	a, r := parseAddTrimArgs(args, false)
	if r != nil {
		return nil, r
	}
	return &Plan{Op: wire.XTrim{Base: keyBase(c, args[1]), Trim: a.trim}, Format: xreply.Int}, nil
}
