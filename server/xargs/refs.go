package xargs

import (
	"streamd/replication/wire"
	"streamd/server/resp"
)

// Errors of XDELEX and XACKDEL's options (Redis 8.2's
// streamParseAckDelArgsOrReply).
const (
	ErrNumIDs      = resp.ErrorReply("ERR Number of IDs must be a positive integer")
	ErrNumIDsMatch = resp.ErrorReply("ERR The `numids` parameter must match the number of arguments")
	ErrIDSRequired = resp.ErrorReply("ERR IDS option is required")
)

// refMode parses KEEPREF, DELREF or ACKED (any case).
func refMode(opt []byte) (wire.RefMode, bool) {
	switch {
	case resp.IsOpt(opt, "KEEPREF"):
		return wire.RefKeep, true
	case resp.IsOpt(opt, "DELREF"):
		return wire.RefDelete, true
	case resp.IsOpt(opt, "ACKED"):
		return wire.RefAcked, true
	}
	return 0, false
}

// RefDelete parses the options of XDELEX (from args[2]) and XACKDEL (from
// args[3]): [KEEPREF|DELREF|ACKED] IDS numids id..., the strategy before or
// after the IDS block, case-insensitive, at most once (a second one, even
// the same, is a syntax error, as is a second IDS block). numids must be
// an integer in [1, LONG_MAX] and no more than the arguments left; fewer
// leave arguments that are parsed as options. It returns the mode and the
// ID arguments unparsed: Redis looks the key (and group) up before it
// parses them, so the planner decides which error wins.
func RefDelete(args [][]byte, pos int) (wire.RefMode, [][]byte, resp.Reply) {
	var mode wire.RefMode
	modeGiven := false
	var ids [][]byte
	for i := pos; i < len(args); {
		more := len(args) - 1 - i
		opt := args[i]
		if ids == nil && more > 0 && resp.IsOpt(opt, "IDS") {
			n, ok := ParseInt64(args[i+1])
			if !ok || n < 1 {
				return 0, nil, ErrNumIDs
			}
			if n > int64(more-1) {
				return 0, nil, ErrNumIDsMatch
			}
			ids = args[i+2 : i+2+int(n)]
			i += 2 + int(n)
			continue
		}
		if m, ok := refMode(opt); ok && !modeGiven {
			mode, modeGiven = m, true
			i++
			continue
		}
		return 0, nil, resp.ErrSyntax
	}
	if ids == nil {
		return 0, nil, ErrIDSRequired
	}
	return mode, ids, nil
}
