package server

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"streamd/streams"
)

// appendReply renders r in the given protocol (2 or 3). This is the one
// place the RESP2/RESP3 shapes live: handlers build Reply values and never
// write bytes.
func appendReply(b []byte, r Reply, proto int) []byte {
	switch v := r.(type) {
	case SimpleString:
		return appendLine(b, '+', string(v))
	case ErrorReply:
		return appendLine(b, '-', string(v))
	case Int:
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(v), 10)
		return append(b, '\r', '\n')
	case Bulk:
		if v == nil {
			return appendNull(b, proto, '$')
		}
		return appendBulk(b, '$', []byte(v))
	case Array:
		if v == nil {
			return appendNull(b, proto, '*')
		}
		b = appendHeader(b, '*', len(v))
		for _, e := range v {
			b = appendReply(b, e, proto)
		}
		return b
	case Map:
		if proto == 3 {
			b = appendHeader(b, '%', len(v))
		} else {
			b = appendHeader(b, '*', 2*len(v))
		}
		for _, kv := range v {
			b = appendReply(b, kv.K, proto)
			b = appendReply(b, kv.V, proto)
		}
		return b
	case Set:
		b = appendHeader(b, aggregate(proto, '~'), len(v))
		for _, e := range v {
			b = appendReply(b, e, proto)
		}
		return b
	case Push:
		b = appendHeader(b, aggregate(proto, '>'), len(v))
		for _, e := range v {
			b = appendReply(b, e, proto)
		}
		return b
	case Double:
		s := formatDouble(float64(v))
		if proto == 3 {
			return appendLine(b, ',', s)
		}
		return appendBulk(b, '$', []byte(s))
	case Verbatim:
		if proto == 3 {
			return appendBulk(b, '=', append([]byte("txt:"), v...))
		}
		return appendBulk(b, '$', []byte(v))
	case IDBulk:
		return appendIDBulk(b, streams.ID(v))
	case EntryReply:
		b = append(b, '*', '2', '\r', '\n')
		b = appendIDBulk(b, v.ID)
		if v.Fields == nil {
			return appendNull(b, proto, '*')
		}
		b = appendHeader(b, '*', len(v.Fields))
		for _, f := range v.Fields {
			b = appendBulk(b, '$', f)
		}
		return b
	case Null:
		return appendNull(b, proto, '$')
	case NullArray:
		return appendNull(b, proto, '*')
	case nil:
		return appendNull(b, proto, '$')
	default:
		// A handler returned a type the contract does not have: a bug. Say
		// so on the wire rather than desynchronise the connection.
		return appendLine(b, '-', fmt.Sprintf("ERR internal error: unsupported reply type %T", r))
	}
}

// aggregate picks the RESP3 type byte, or "*" (an array) for RESP2.
func aggregate(proto int, resp3 byte) byte {
	if proto == 3 {
		return resp3
	}
	return '*'
}

func appendNull(b []byte, proto int, resp2 byte) []byte {
	if proto == 3 {
		return append(b, '_', '\r', '\n')
	}
	return append(b, resp2, '-', '1', '\r', '\n')
}

// appendIDBulk writes id as the bulk string "ms-seq" without building the
// string first.
func appendIDBulk(b []byte, id streams.ID) []byte {
	var digits [41]byte // two uint64s (20 digits each) and the dash
	s := id.Append(digits[:0])
	return appendBulk(b, '$', s)
}

func appendHeader(b []byte, t byte, n int) []byte {
	b = append(b, t)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, t byte, s []byte) []byte {
	b = appendHeader(b, t, len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// appendLine writes a status or error line. Redis replaces CR and LF in
// these with spaces (addReplyErrorLength / addReplyStatusLength callers
// sanitize), since a newline would end the line early.
func appendLine(b []byte, t byte, s string) []byte {
	b = append(b, t)
	if strings.ContainsAny(s, "\r\n") {
		s = strings.Map(func(r rune) rune {
			if r == '\r' || r == '\n' {
				return ' '
			}
			return r
		}, s)
	}
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// formatDouble renders a double as Redis 7.2 does: the shortest
// representation that round-trips, and inf / -inf / nan.
func formatDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
