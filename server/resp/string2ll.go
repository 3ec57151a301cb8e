package resp

import "streamd/internal/redisint"

// ParseInt64 parses b as Redis's string2ll does: an optional '-', then
// digits with no leading zero (except "0" itself), no '+', no spaces, and
// no overflow. "-0" and "007" are refused, as Redis refuses them. It is
// how Redis reads the lengths of a request ("*N", "$N") and every integer
// argument.
func ParseInt64(b []byte) (int64, bool) { return redisint.ParseInt64(b) }
