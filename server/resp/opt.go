package resp

// IsOpt reports whether arg equals the upper-case option name ignoring
// ASCII case, as Redis's strcasecmp (no Unicode folding: "ſ" is not "s").
func IsOpt(arg []byte, name string) bool {
	if len(arg) != len(name) {
		return false
	}
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}
