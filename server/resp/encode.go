package resp

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// AppendReply renders r in the given protocol (2 or 3) at the end of b.
// This is the one place the RESP2/RESP3 shapes live: handlers build Reply
// values and never write bytes.
func AppendReply(b []byte, r Reply, proto int) []byte {
	switch v := r.(type) {
	case SimpleString:
		return AppendLine(b, '+', string(v))
	case ErrorReply:
		return AppendLine(b, '-', string(v))
	case Int:
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(v), 10)
		return append(b, '\r', '\n')
	case Bulk:
		if v == nil {
			return AppendNull(b, proto, '$')
		}
		return AppendBulk(b, '$', []byte(v))
	case Array:
		if v == nil {
			return AppendNull(b, proto, '*')
		}
		b = AppendHeader(b, '*', len(v))
		for _, e := range v {
			b = AppendReply(b, e, proto)
		}
		return b
	case Map:
		if proto == 3 {
			b = AppendHeader(b, '%', len(v))
		} else {
			b = AppendHeader(b, '*', 2*len(v))
		}
		for _, kv := range v {
			b = AppendReply(b, kv.K, proto)
			b = AppendReply(b, kv.V, proto)
		}
		return b
	case Set:
		b = AppendHeader(b, aggregate(proto, '~'), len(v))
		for _, e := range v {
			b = AppendReply(b, e, proto)
		}
		return b
	case Push:
		b = AppendHeader(b, aggregate(proto, '>'), len(v))
		for _, e := range v {
			b = AppendReply(b, e, proto)
		}
		return b
	case Double:
		s := FormatDouble(float64(v))
		if proto == 3 {
			return AppendLine(b, ',', s)
		}
		return AppendBulk(b, '$', []byte(s))
	case Verbatim:
		if proto == 3 {
			return AppendBulk(b, '=', append([]byte("txt:"), v...))
		}
		return AppendBulk(b, '$', []byte(v))
	case Appender:
		return v.AppendRESP(b, proto)
	case Null:
		return AppendNull(b, proto, '$')
	case NullArray:
		return AppendNull(b, proto, '*')
	case nil:
		return AppendNull(b, proto, '$')
	default:
		// A handler returned a type the contract does not have: a bug. Say
		// so on the wire rather than desynchronise the connection.
		return AppendLine(b, '-', fmt.Sprintf("ERR internal error: unsupported reply type %T", r))
	}
}

// aggregate picks the RESP3 type byte, or "*" (an array) for RESP2.
func aggregate(proto int, resp3 byte) byte {
	if proto == 3 {
		return resp3
	}
	return '*'
}

// AppendNull appends a null: "_" in RESP3, else resp2 ('$' or '*')
// followed by "-1".
func AppendNull(b []byte, proto int, resp2 byte) []byte {
	if proto == 3 {
		return append(b, '_', '\r', '\n')
	}
	return append(b, resp2, '-', '1', '\r', '\n')
}

// AppendHeader appends an aggregate or bulk header: type byte t, then n.
func AppendHeader(b []byte, t byte, n int) []byte {
	b = append(b, t)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// AppendBulk appends s as a length-prefixed string of type t ('$', '=',
// '!').
func AppendBulk(b []byte, t byte, s []byte) []byte {
	b = AppendHeader(b, t, len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendLine appends a status or error line of type t. Redis replaces CR and LF in
// these with spaces (addReplyErrorLength / addReplyStatusLength callers
// sanitize), since a newline would end the line early.
func AppendLine(b []byte, t byte, s string) []byte {
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

// FormatDouble renders a double as Redis 7.2 does: the shortest
// representation that round-trips, and inf / -inf / nan.
func FormatDouble(f float64) string {
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

// AppendCommand renders args as a RESP multibulk request ("*N" and N bulk
// strings), the form RequestReader reads.
func AppendCommand(b []byte, args ...[]byte) []byte {
	b = AppendHeader(b, '*', len(args))
	for _, a := range args {
		b = AppendBulk(b, '$', a)
	}
	return b
}
