// Package redisint reads integers as Redis's string2ll does (Redis's
// util.c, and listpack's lpStringToInt64, which is the same rule): the
// request reader's lengths, integer arguments, and which stream values a
// listpack would store as integers. It imports nothing of streamd's.
package redisint

// longStrSize is Redis's LONG_STR_SIZE (21): string2ll refuses inputs of
// that length or more before looking at them.
const longStrSize = 21

// ParseInt64 parses b as Redis's string2ll does: an optional '-', then
// digits with no leading zero (except "0" itself), no '+', no spaces, and
// no overflow. "-0" and "007" are refused, as Redis refuses them. It is
// how Redis reads the lengths of a request ("*N", "$N") and every integer
// argument.
func ParseInt64(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n >= longStrSize {
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
