package server

import (
	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/server/xreply"
	"streamd/streams"
)

// Argument parsing shared by the stream commands. Every helper answers with
// Redis's exact error reply so a planner can return it as is.

// maxLongStr mirrors Redis's LONG_STR_SIZE (21): string2ll refuses inputs of
// that length or more before looking at them.
const maxLongStr = 21

// parseInt64 parses b as Redis's string2ll does: an optional '-', then
// digits with no leading zero (except "0" itself), no '+', no spaces, and
// no overflow. "-0" and "007" are refused, as Redis refuses them.
func parseInt64(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n >= maxLongStr {
		return 0, false
	}
	if n == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	if b[0] == '-' {
		neg = true
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1)/10 || v*10 > 1<<64-1-d {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true // -(1<<63) wraps to MinInt64 exactly
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// intArg parses an integer argument, answering Redis's
// getLongLongFromObjectOrReply error when it is not one.
func intArg(b []byte) (int64, Reply) {
	return intArgMsg(b, errNotInteger)
}

// intArgMsg is intArg with the command's own message (Redis passes a custom
// msg to getLongLongFromObjectOrReply, e.g. "ERR Invalid IDLE option
// argument for XCLAIM").
func intArgMsg(b []byte, msg ErrorReply) (int64, Reply) {
	v, ok := parseInt64(b)
	if !ok {
		return 0, msg
	}
	return v, nil
}

// strictIDArg parses an ID naming an entry ("-" and "+" refused), as Redis's
// streamParseStrictIDOrReply with a missing sequence of 0.
func strictIDArg(b []byte) (streams.ID, Reply) {
	id, err := streams.ParseStrictID(b, 0)
	if err != nil {
		return streams.ID{}, errInvalidID
	}
	return id, nil
}

// intervalIDArg parses a range bound as Redis's streamParseIntervalIDOrReply:
// "(" makes it exclusive (and then the rest is parsed strictly, so "(-" is an
// invalid ID), otherwise "-" and "+" are allowed; a missing sequence takes
// missingSeq (0 for a start, MaxUint64 for an end).
func intervalIDArg(b []byte, missingSeq uint64) (id streams.ID, exclusive bool, r Reply) {
	var err error
	if len(b) > 1 && b[0] == '(' {
		exclusive = true
		id, err = streams.ParseStrictID(b[1:], missingSeq)
	} else {
		id, err = streams.ParseID(b, missingSeq)
	}
	if err != nil {
		return streams.ID{}, false, errInvalidID
	}
	return id, exclusive, nil
}

// rangeStartArg parses an inclusive start bound; an exclusive bound moves
// to the next ID, and "(" on the maximum ID is Redis's "invalid start ID".
func rangeStartArg(b []byte) (streams.ID, Reply) {
	id, ex, r := intervalIDArg(b, 0)
	if r != nil {
		return id, r
	}
	if ex {
		next, ok := id.Next()
		if !ok {
			return id, errStartID
		}
		id = next
	}
	return id, nil
}

// rangeEndArg parses an inclusive end bound; an exclusive bound moves to the
// previous ID, and "(0-0" is Redis's "invalid end ID".
func rangeEndArg(b []byte) (streams.ID, Reply) {
	id, ex, r := intervalIDArg(b, ^uint64(0))
	if r != nil {
		return id, r
	}
	if ex {
		prev, ok := id.Prev()
		if !ok {
			return id, errEndID
		}
		id = prev
	}
	return id, nil
}

// subcommandSyntaxError is Redis's addReplySubcommandSyntaxError: the
// subcommand as the client typed it, and the container in upper case.
func subcommandSyntaxError(container string, sub []byte) ErrorReply {
	return ErrorReply("ERR unknown subcommand or wrong number of arguments for '" +
		cString(sub, 128) + "'. Try " + container + " HELP.")
}

// keyBase is the wire Base of a command naming key in the client's database.
func keyBase(c *Client, key []byte) wire.Base {
	return wire.Base{DB: c.DB(), Key: string(key)}
}

// Some Redis commands look the key (or the key and group) up before they
// parse the rest of their arguments, so a bad argument on a missing key
// answers as the missing key does (XDEL nokey bad → 0). A planner cannot see
// the keyspace, so it plans a read that decides between the two answers:
// the state check first, then the argument error, as Redis orders them.

// keyFirst plans a TYPE read of key: missing is the reply when the key does
// not exist, otherwise argErr.
func keyFirst(c *Client, key []byte, missing, argErr Reply) (*Plan, Reply) {
	return &Plan{
		Op: wire.Type{Base: keyBase(c, key)},
		Format: func(res any, err error) Reply {
			if err != nil {
				return xreply.Error(err)
			}
			if t, _ := res.(string); t == "none" {
				return missing
			}
			return argErr
		},
	}, nil
}

// groupFirst plans an XINFO GROUPS read of key: noKey is the reply when the
// key does not exist, noGroup when it has no group named group, otherwise
// argErr.
func groupFirst(c *Client, key, group []byte, noKey, noGroup, argErr Reply) (*Plan, Reply) {
	return &Plan{
		Op: wire.XInfoGroups{Base: keyBase(c, key)},
		Format: func(res any, err error) Reply {
			if err != nil {
				// The only error XINFO GROUPS has on a stream-only
				// keyspace is "no such key".
				return noKey
			}
			groups, _ := res.([]state.GroupInfo)
			for _, g := range groups {
				if g.Name == string(group) {
					return argErr
				}
			}
			return noGroup
		},
	}, nil
}

// isOpt is resp.IsOpt: arg equals the upper-case option name in any ASCII
// case.
func isOpt(arg []byte, name string) bool { return resp.IsOpt(arg, name) }
