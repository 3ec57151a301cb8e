package config

import "bytes"

// The config file's quoting is Redis's: lines are split as sdssplitargs
// splits them and CONFIG REWRITE quotes strings as sdscatrepr does. (The
// server has its own copies for the inline protocol and MONITOR: config
// imports no other streamd package.)

// splitArgs is Redis's sdssplitargs: words separated by blanks; "double
// quoted" words with \n \r \t \b \a \\ \" and \xHH escapes; 'single quoted'
// words with only \' ; a closing quote must be followed by a blank or the
// end. ok is false on unbalanced quotes.
func splitArgs(line []byte) (args [][]byte, ok bool) {
	i := 0
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i == len(line) {
			return args, true
		}
		var cur []byte
		inDQ, inSQ, done := false, false, false
		for !done {
			if inDQ {
				switch {
				case i == len(line):
					return nil, false
				case line[i] == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, hexVal(line[i+2])<<4|hexVal(line[i+3]))
					i += 3
				case line[i] == '\\' && i+1 < len(line):
					i++
					c := line[i]
					switch c {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					}
					cur = append(cur, c)
				case line[i] == '"':
					if i+1 < len(line) && !isBlank(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			} else if inSQ {
				switch {
				case i == len(line):
					return nil, false
				case line[i] == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				case line[i] == '\'':
					if i+1 < len(line) && !isBlank(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			} else {
				switch {
				case i == len(line):
					done = true
				case isBlank(line[i]):
					done = true
				case line[i] == '"':
					inDQ = true
				case line[i] == '\'':
					inSQ = true
				default:
					cur = append(cur, line[i])
				}
			}
			if i < len(line) {
				i++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return bytes.IndexByte([]byte("0123456789abcdefABCDEF"), c) >= 0
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// appendRepr appends p quoted as Redis's sdscatrepr: in double quotes, \\
// and \" escaped, \n \r \t \a \b as such, other bytes outside printable
// ASCII as \xhh.
func appendRepr(b, p []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range p {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if ch >= 0x20 && ch <= 0x7e {
				b = append(b, ch)
			} else {
				b = append(b, '\\', 'x', hex[ch>>4], hex[ch&0xf])
			}
		}
	}
	return append(b, '"')
}
