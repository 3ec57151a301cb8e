// Package xargs parses the stream commands' arguments: integers, stream IDs
// and range bounds, and each command's options, into the typed operations of
// replication/wire (and, sharing the integer parser, SCAN's, FLUSHDB's and
// the EXPIRE family's). Everything here is a function of the argument bytes
// alone (no client, no keyspace): a parser returns the operation with the
// key set and the database left 0 (the server's planner fills it in) and,
// on a bad argument, the error reply Redis sends, with its exact text.
//
// Where Redis looks the key (or group) up before it parses an argument, the
// parser still reports the argument error; the planner decides, from the
// keyspace, which of the two answers wins.
package xargs

import (
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/streams"
)

// ParseInt64 parses b as Redis's string2ll does: an optional '-', then
// digits with no leading zero (except "0" itself), no '+', no spaces, and
// no overflow. "-0" and "007" are refused, as Redis refuses them.
func ParseInt64(b []byte) (int64, bool) { return resp.ParseInt64(b) }

// Int parses an integer argument, answering Redis's
// getLongLongFromObjectOrReply error when it is not one.
func Int(b []byte) (int64, resp.Reply) {
	return IntMsg(b, resp.ErrNotInteger)
}

// IntMsg is Int with the command's own message (Redis passes a custom msg
// to getLongLongFromObjectOrReply, e.g. "ERR Invalid IDLE option argument
// for XCLAIM").
func IntMsg(b []byte, msg resp.ErrorReply) (int64, resp.Reply) {
	v, ok := ParseInt64(b)
	if !ok {
		return 0, msg
	}
	return v, nil
}

// StrictID parses an ID naming an entry ("-" and "+" refused), as Redis's
// streamParseStrictIDOrReply with a missing sequence of 0.
func StrictID(b []byte) (streams.ID, resp.Reply) {
	id, err := streams.ParseStrictID(b, 0)
	if err != nil {
		return streams.ID{}, ErrInvalidID
	}
	return id, nil
}

// StrictIDs parses every argument as a strict ID, failing on the first
// that is not one.
func StrictIDs(args [][]byte) ([]streams.ID, resp.Reply) {
	ids := make([]streams.ID, len(args))
	for i, a := range args {
		id, r := StrictID(a)
		if r != nil {
			return nil, r
		}
		ids[i] = id
	}
	return ids, nil
}

// intervalID parses a range bound as Redis's streamParseIntervalIDOrReply:
// "(" makes it exclusive (and then the rest is parsed strictly, so "(-" is an
// invalid ID), otherwise "-" and "+" are allowed; a missing sequence takes
// missingSeq (0 for a start, MaxUint64 for an end).
func intervalID(b []byte, missingSeq uint64) (id streams.ID, exclusive bool, r resp.Reply) {
	var err error
	if len(b) > 1 && b[0] == '(' {
		exclusive = true
		id, err = streams.ParseStrictID(b[1:], missingSeq)
	} else {
		id, err = streams.ParseID(b, missingSeq)
	}
	if err != nil {
		return streams.ID{}, false, ErrInvalidID
	}
	return id, exclusive, nil
}

// RangeStart parses an inclusive start bound; an exclusive bound moves
// to the next ID, and "(" on the maximum ID is Redis's "invalid start ID".
func RangeStart(b []byte) (streams.ID, resp.Reply) {
	id, ex, r := intervalID(b, 0)
	if r != nil {
		return id, r
	}
	if ex {
		next, ok := id.Next()
		if !ok {
			return id, ErrStartID
		}
		id = next
	}
	return id, nil
}

// RangeEnd parses an inclusive end bound; an exclusive bound moves to the
// previous ID, and "(0-0" is Redis's "invalid end ID".
func RangeEnd(b []byte) (streams.ID, resp.Reply) {
	id, ex, r := intervalID(b, ^uint64(0))
	if r != nil {
		return id, r
	}
	if ex {
		prev, ok := id.Prev()
		if !ok {
			return id, ErrEndID
		}
		id = prev
	}
	return id, nil
}

// key is the wire Base of a command naming key, database 0: the planner
// sets the client's.
func key(b []byte) wire.Base { return wire.Base{Key: string(b)} }

// isOpt is resp.IsOpt: arg equals the upper-case option name in any ASCII
// case.
func isOpt(arg []byte, name string) bool { return resp.IsOpt(arg, name) }

// CString is b as Redis prints a C string: up to the first NUL, at most n
// bytes.
func CString(b []byte, n int) string {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}
