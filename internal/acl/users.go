package acl

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Users is a set of users. A Users value is not modified once published:
// SetUser and DelUser are applied to a Clone, which is then published.
type Users struct {
	cat   *Catalog
	users map[string]*User
}

// NewUsers returns a set holding only the default user, as Redis starts:
// "user default on nopass sanitize-payload ~* &* +@all".
func NewUsers(cat *Catalog) *Users {
	u := &Users{cat: cat, users: map[string]*User{}}
	u.users["default"] = defaultUser(cat)
	return u
}

// defaultUser is createDefaultUser.
func defaultUser(cat *Catalog) *User {
	d := newUser(cat, "default")
	for _, r := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		if err := d.set(r); err != nil {
			panic("acl: default user: " + err.Error())
		}
	}
	return d
}

// Catalog is the catalog the users' rules are resolved against.
func (u *Users) Catalog() *Catalog { return u.cat }

// Clone returns a copy that can be modified without affecting u (users
// themselves are shared: they are replaced, never modified).
func (u *Users) Clone() *Users {
	n := &Users{cat: u.cat, users: make(map[string]*User, len(u.users))}
	for k, v := range u.users {
		n.users[k] = v
	}
	return n
}

// hasSpaces is ACLStringHasSpaces: any isspace byte or NUL.
func hasSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

// mergeSelectorArgs is ACLMergeSelectorArguments: arguments from one
// starting with "(" (and not ending with ")") to one ending with ")" are
// joined with spaces into one selector rule. ok is false on an unmatched
// parenthesis, with the index of the argument that opened it.
func mergeSelectorArgs(args []string) (merged []string, bad int, ok bool) {
	open := -1
	var sel string
	for j, op := range args {
		if open == -1 && op != "" && op[0] == '(' && op[len(op)-1] != ')' {
			sel, open = op, j
			continue
		}
		if open != -1 {
			sel += " " + op
			if op != "" && op[len(op)-1] == ')' {
				open = -1
				merged = append(merged, sel)
			}
			continue
		}
		merged = append(merged, op)
	}
	if open != -1 {
		return nil, open, false
	}
	return merged, 0, true
}

// SetUser is ACL SETUSER: it creates the user if absent and applies the
// rules in order, all or nothing. The error's text is Redis's reply without
// the "ERR " prefix ("Error in ACL SETUSER modifier '<rule>': Syntax error",
// "Unmatched parenthesis in acl selector starting at '<arg>'.", "Usernames
// can't contain spaces or null characters").
func (u *Users) SetUser(name string, rules []string) error {
	if hasSpaces(name) {
		return errors.New("Usernames can't contain spaces or null characters")
	}
	merged, bad, ok := mergeSelectorArgs(rules)
	if !ok {
		return fmt.Errorf("Unmatched parenthesis in acl selector starting at '%s'.", rules[bad])
	}
	var tmp *User
	if old := u.users[name]; old != nil {
		tmp = old.clone()
	} else {
		tmp = newUser(u.cat, name)
	}
	for _, r := range merged {
		if err := tmp.set(r); err != nil {
			return fmt.Errorf("Error in ACL SETUSER modifier '%s': %s", r, err)
		}
	}
	u.users[name] = tmp
	return nil
}

// DelUser removes a user; false if there was none. Refusing to delete
// "default" is the caller's (ACL DELUSER's) business.
func (u *Users) DelUser(name string) bool {
	if _, ok := u.users[name]; !ok {
		return false
	}
	delete(u.users, name)
	return true
}

// Get returns the user, or nil.
func (u *Users) Get(name string) *User { return u.users[name] }

// Names returns the user names, sorted bytewise (ACL USERS).
func (u *Users) Names() []string {
	names := make([]string, 0, len(u.users))
	for n := range u.users {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// List is ACL LIST: "user <name> <rules>" per user, sorted by name.
func (u *Users) List() []string {
	names := u.Names()
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "user " + n + " " + u.users[n].Describe()
	}
	return out
}

// FileText is what ACL SAVE writes: the ACL LIST lines, each ending in "\n".
func (u *Users) FileText() string {
	var b strings.Builder
	for _, l := range u.List() {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// ParseFile is ParseFileNamed with the file name "aclfile".
func ParseFile(cat *Catalog, text string) (*Users, error) {
	return ParseFileNamed(cat, "aclfile", text)
}

// ParseFileNamed parses aclfile content (Redis's ACLLoadFromFile): one
// "user <name> <rules...>" per line, arguments separated by single spaces,
// blank lines skipped (a NUL byte cuts its line as Redis's fgets/sdscat
// reading does). A file without a default user gets NewUsers's
// default user. On errors it returns nil and an error whose text is what
// ACL LOAD replies after "ERR ": every problem found, with filename and line
// number as Redis reports them, then "WARNING: ACL errors detected, no
// change to the previously active ACL rules was performed".
func ParseFileNamed(cat *Catalog, filename, text string) (*Users, error) {
	set := &Users{cat: cat, users: map[string]*User{}}
	var errs strings.Builder
	text = dropNULs(text)
	for i, line := range strings.Split(text, "\n") {
		linenum := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ")
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", filename, linenum)
			continue
		}
		name := argv[1]
		if hasSpaces(name) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", filename, linenum, name)
			continue
		}
		if set.users[name] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", name, linenum)
			continue
		}
		usr := newUser(cat, name)
		set.users[name] = usr
		merged, _, ok := mergeSelectorArgs(argv[2:])
		if !ok {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", filename, linenum)
			continue
		}
		reported := false
		for _, op := range merged {
			op = strings.Trim(op, "\t\r\n")
			err := usr.set(op)
			switch {
			case err == nil:
			case err == errUnknown:
				fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", filename, linenum, op, err)
			case !reported:
				fmt.Fprintf(&errs, "%s:%d: %s. ", filename, linenum, err)
				reported = true
			}
		}
	}
	if errs.Len() > 0 {
		errs.WriteString("WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
		return nil, errors.New(errs.String())
	}
	if set.users["default"] == nil {
		set.users["default"] = defaultUser(cat)
	}
	return set, nil
}

// dropNULs is how Redis reads the file: fgets chunks of up to 1023 bytes
// (or through a newline), each appended up to its first NUL byte.
func dropNULs(text string) string {
	if strings.IndexByte(text, 0) < 0 {
		return text
	}
	var b strings.Builder
	for text != "" {
		n := strings.IndexByte(text, '\n') + 1
		if n == 0 || n > 1023 {
			n = min(len(text), 1023)
		}
		chunk := text[:n]
		text = text[n:]
		if nul := strings.IndexByte(chunk, 0); nul >= 0 {
			chunk = chunk[:nul]
		}
		b.WriteString(chunk)
	}
	return b.String()
}

// splitArgs is Redis's sdssplitargs: space-separated arguments with "..."
// (C escapes, \xHH) and '...' quoting. ok is false on unbalanced quotes.
func splitArgs(line string) ([]string, bool) {
	var args []string
	i := 0
	isSpace := func(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' }
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return args, true
		}
		var cur []byte
		inq, insq, done := false, false, false
		for !done {
			if inq {
				if i >= len(line) {
					return nil, false
				}
				if line[i] == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]) {
					cur = append(cur, hexVal(line[i+2])*16+hexVal(line[i+3]))
					i += 3
				} else if line[i] == '\\' && i+1 < len(line) {
					i++
					switch line[i] {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, line[i])
					}
				} else if line[i] == '"' {
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				} else {
					cur = append(cur, line[i])
				}
			} else if insq {
				if i >= len(line) {
					return nil, false
				}
				if line[i] == '\\' && i+1 < len(line) && line[i+1] == '\'' {
					i++
					cur = append(cur, '\'')
				} else if line[i] == '\'' {
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				} else {
					cur = append(cur, line[i])
				}
			} else {
				if i >= len(line) {
					done = true
					break
				}
				switch c := line[i]; {
				case isSpace(c):
					done = true
				case c == '"':
					inq = true
				case c == '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if i < len(line) {
				i++
			}
		}
		args = append(args, string(cur))
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
