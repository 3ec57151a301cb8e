// Package glob matches Redis glob-style patterns, as KEYS, SCAN MATCH,
// CONFIG GET and COMMAND LIST FILTERBY PATTERN do.
package glob

// Match reports whether s matches pattern, with the semantics of Redis's
// stringmatchlen (util.c) in its case-sensitive form:
//
//   - any run of bytes, including none
//     ?       any single byte
//     [abc]   one byte of the set; [^abc] one byte not in it; [a-z] a range
//     (reversed ranges such as [z-a] are accepted, as in Redis)
//     \x      the byte x literally (also inside brackets)
//
// Matching is byte-wise, like Redis: a multi-byte UTF-8 character is several
// "?"s. An unterminated "[" matches up to the end of the pattern, and a
// trailing "\" matches a literal backslash, again as Redis does.
func Match(pattern, s string) bool {
	return match(pattern, s, false, 0)
}

// MatchFold is Match ignoring ASCII case (Redis's nocase flag, used by
// CONFIG GET, whose names are case-insensitive).
func MatchFold(pattern, s string) bool {
	return match(pattern, s, true, 0)
}

// maxNesting bounds the recursion on "*" the way Redis 7 does
// (stringmatchlen_impl's nesting limit), so that a pattern made of many stars
// cannot take exponential time.
const maxNesting = 1000

func lower(b byte, fold bool) byte {
	if fold && b >= 'A' && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

func match(p, s string, fold bool, nesting int) bool {
	skip := false
	return matchImpl(p, s, fold, &skip, nesting)
}

// matchImpl is stringmatchlen_impl. skipLonger is Redis's
// skipLongerMatches: once the rest of the pattern after a "*" failed against
// every suffix of s, no shorter suffix (tried by an outer "*") can match
// either, so the outer loops stop instead of going exponential.
func matchImpl(p, s string, fold bool, skipLonger *bool, nesting int) bool {
	if nesting > maxNesting {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if matchImpl(p[1:], s, fold, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			var ok bool
			p, ok = matchClass(p[1:], s[0], fold)
			if !ok {
				return false
			}
			s = s[1:]
			if len(p) == 0 {
				// Redis: an unterminated class ends the pattern here.
				return len(s) == 0
			}
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			if lower(p[0], fold) != lower(s[0], fold) {
				return false
			}
			s = s[1:]
		default:
			if lower(p[0], fold) != lower(s[0], fold) {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			// Only once the string is used up do trailing stars match the
			// empty rest. Like Redis, an empty s never enters the loop, so
			// "*" does not match "" (KEYS and SCAN special-case a lone "*").
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// matchClass matches c against the bracket expression starting just after
// "[". It returns the pattern positioned on the closing "]" (or empty when the
// class is unterminated) and whether c is in the class.
func matchClass(p string, c byte, fold bool) (string, bool) {
	not := false
	if len(p) > 0 && p[0] == '^' {
		not = true
		p = p[1:]
	}
	found := false
	for {
		if len(p) == 0 {
			break
		}
		if p[0] == '\\' && len(p) >= 2 {
			p = p[1:]
			if lower(p[0], fold) == lower(c, fold) {
				found = true
			}
		} else if p[0] == ']' {
			break
		} else if len(p) >= 3 && p[1] == '-' {
			start, end := lower(p[0], fold), lower(p[2], fold)
			if start > end {
				start, end = end, start
			}
			lc := lower(c, fold)
			p = p[2:]
			if lc >= start && lc <= end {
				found = true
			}
		} else if lower(p[0], fold) == lower(c, fold) {
			found = true
		}
		p = p[1:]
	}
	if not {
		found = !found
	}
	return p, found
}
