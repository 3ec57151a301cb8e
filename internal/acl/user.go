package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// Sanitize-payload flags (Redis's USER_FLAG_SANITIZE_PAYLOAD[_SKIP]).
const (
	sanitizeNone = iota
	sanitizeOn
	sanitizeSkip
)

// User is one ACL user. A User reachable from a published Users value is
// never modified: SetUser builds a new one.
type User struct {
	name      string
	enabled   bool
	nopass    bool
	sanitize  int
	passwords []string // SHA-256 hex, in the order they were added
	selectors []*selector
	cat       *Catalog
}

// Field is one name/value pair of a map reply (ACL GETUSER, ACL LOG). Value
// is a string, a []string (an array; ACL GETUSER's "flags" is a set in
// RESP3), a [][]Field (an array of maps), an int64 or a float64 (a double).
type Field struct {
	Name  string
	Value any
}

// newUser is ACLCreateUser (Redis 7.2): off, sanitize-payload, no
// passwords, no keys, no channels, no commands.
func newUser(cat *Catalog, name string) *User {
	return &User{name: name, sanitize: sanitizeOn, cat: cat, selectors: []*selector{newSelector(cat)}}
}

func (u *User) clone() *User {
	n := *u
	n.passwords = append([]string(nil), u.passwords...)
	n.selectors = make([]*selector, len(u.selectors))
	for i, s := range u.selectors {
		n.selectors[i] = s.clone()
	}
	return &n
}

// Name is the user's name.
func (u *User) Name() string { return u.name }

// Enabled reports the "on" flag.
func (u *User) Enabled() bool { return u.enabled }

// NoPass reports the "nopass" flag.
func (u *User) NoPass() bool { return u.nopass }

// Passwords returns the stored SHA-256 hashes (hex), in order.
func (u *User) Passwords() []string { return append([]string{}, u.passwords...) }

// CheckPassword reports whether pass is one of the user's passwords (any
// password for a nopass user), comparing SHA-256 hashes in constant time.
// It does not look at Enabled: AUTH must also refuse a user that is off.
func (u *User) CheckPassword(pass string) bool {
	if u.nopass {
		return true
	}
	h := HashPassword(pass)
	ok := 0
	for _, p := range u.passwords {
		ok |= subtle.ConstantTimeCompare([]byte(h), []byte(p))
	}
	return ok == 1
}

// HashPassword is the lower-case SHA-256 hex that ">pass" stores.
func HashPassword(pass string) string {
	sum := sha256.Sum256([]byte(pass))
	return hex.EncodeToString(sum[:])
}

// validHash is ACLCheckPasswordHash: 64 lower-case hex characters.
func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// set applies one rule (Redis's ACLSetUser).
func (u *User) set(op string) error {
	if op == "" {
		return nil
	}
	switch lower := strings.ToLower(op); {
	case lower == "on":
		u.enabled = true
	case lower == "off":
		u.enabled = false
	case lower == "skip-sanitize-payload":
		u.sanitize = sanitizeSkip
	case lower == "sanitize-payload":
		u.sanitize = sanitizeOn
	case lower == "nopass":
		u.nopass = true
		u.passwords = nil
	case lower == "resetpass":
		u.nopass = false
		u.passwords = nil
	case op[0] == '>' || op[0] == '#':
		h := op[1:]
		if op[0] == '>' {
			h = HashPassword(op[1:])
		} else if !validHash(h) {
			return errBadHash
		}
		found := false
		for _, p := range u.passwords {
			if p == h {
				found = true
			}
		}
		if !found {
			u.passwords = append(u.passwords, h)
		}
		u.nopass = false
	case op[0] == '<' || op[0] == '!':
		h := op[1:]
		if op[0] == '<' {
			h = HashPassword(op[1:])
		} else if !validHash(h) {
			return errBadHash
		}
		for i, p := range u.passwords {
			if p == h {
				u.passwords = append(u.passwords[:i:i], u.passwords[i+1:]...)
				return nil
			}
		}
		return errNoSuchPass
	case op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(u.cat)
		args, ok := splitArgs(op[1 : len(op)-1])
		if ok {
			for _, a := range args {
				if err := s.set(a); err != nil {
					return err
				}
			}
		}
		u.selectors = append(u.selectors, s)
	case lower == "clearselectors":
		u.selectors = u.selectors[:1]
	case lower == "reset":
		for _, r := range []string{"resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload", "clearselectors", "-@all"} {
			if err := u.set(r); err != nil {
				panic("acl: reset: " + err.Error())
			}
		}
	default:
		return u.selectors[0].set(op)
	}
	return nil
}

// flags is ACLUserFlags's order: on, off, nopass, skip-sanitize-payload,
// sanitize-payload.
func (u *User) flags() []string {
	f := []string{}
	if u.enabled {
		f = append(f, "on")
	} else {
		f = append(f, "off")
	}
	if u.nopass {
		f = append(f, "nopass")
	}
	switch u.sanitize {
	case sanitizeSkip:
		f = append(f, "skip-sanitize-payload")
	case sanitizeOn:
		f = append(f, "sanitize-payload")
	}
	return f
}

// Describe is the rules part of the user's ACL LIST line (Redis's
// ACLDescribeUser): flags, "#hash" passwords, the root selector's keys,
// channels and commands, then each selector in parentheses.
func (u *User) Describe() string {
	var b strings.Builder
	for _, f := range u.flags() {
		b.WriteString(f + " ")
	}
	for _, p := range u.passwords {
		b.WriteString("#" + p + " ")
	}
	b.WriteString(u.selectors[0].describe())
	for _, s := range u.selectors[1:] {
		b.WriteString(" (" + s.describe() + ")")
	}
	return b.String()
}

// GetUser is ACL GETUSER's reply as plain data, in Redis 7.2's order:
// flags ([]string, a set in RESP3), passwords ([]string), commands, keys,
// channels (strings), selectors ([][]Field, each commands/keys/channels).
func (u *User) GetUser() []Field {
	out := []Field{
		{Name: "flags", Value: u.flags()},
		{Name: "passwords", Value: u.Passwords()},
	}
	out = append(out, u.selectors[0].fields()...)
	sels := [][]Field{}
	for _, s := range u.selectors[1:] {
		sels = append(sels, s.fields())
	}
	return append(out, Field{Name: "selectors", Value: sels})
}

// Rules returns SETUSER rules that turn any user (new or existing) into
// exactly this one. Unlike Describe's text, which Redis cannot always read
// back (a "%RW~*" pattern shows as "~*", which means allkeys), they always
// round-trip: use them to replicate or snapshot users.
func (u *User) Rules() []string {
	out := append([]string{"reset"}, u.flags()...)
	for _, p := range u.passwords {
		out = append(out, "#"+p)
	}
	out = append(out, u.selectors[0].rules()...)
	for _, s := range u.selectors[1:] {
		toks := s.rules()
		for i, t := range toks {
			toks[i] = quoteArg(t)
		}
		out = append(out, "("+strings.Join(toks, " ")+")")
	}
	return out
}

// quoteArg quotes an argument for splitArgs when it needs it.
func quoteArg(s string) string {
	plain := s != ""
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c > ' ' && c < 0x7f && c != '"' && c != '\'' && c != '\\'
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c >= 0x7f:
			b.WriteString("\\x")
			b.WriteString(hex.EncodeToString([]byte{c}))
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
