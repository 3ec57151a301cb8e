package resp

// AppendRepr appends p quoted as Redis's sdscatrepr: in double quotes, \\
// and \" escaped, \n \r \t \a \b as such, other bytes outside printable
// ASCII as \xhh.
func AppendRepr(b, p []byte) []byte {
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
