package server

import (
	"regexp"
	"strings"
)

// ACL replies that Redis 7.2 changed from 7.0: streamd answers as 7.2, so
// against a 7.0 reference server its reply is mapped back before the
// comparison (a deliberate, counted difference).

// noPermUser72 is 7.2's NOPERM text for a command; 7.0 said "this user".
var noPermUser72 = regexp.MustCompile(`NOPERM User \S* has no permissions to run the '([^']*)' command$`)

// aclTo70 rewrites streamd's reply to cmd as Redis 7.0 would give it and
// reports whether anything changed.
func aclTo70(cmd []string, v Value) (Value, bool) {
	isACL := func(sub string) bool {
		return cmd[0] == "ACL" && len(cmd) > 1 && strings.EqualFold(cmd[1], sub)
	}
	changed := false
	var walk func(v Value) Value
	walk = func(v Value) Value {
		switch v.Kind {
		case '-':
			if m := noPermUser72.FindStringSubmatchIndex(v.Str); m != nil {
				v.Str = v.Str[:m[0]] + "NOPERM this user has no permissions to run the '" + v.Str[m[2]:m[3]] + "' command"
				changed = true
			} else if strings.HasSuffix(v.Str, "NOPERM No permissions to access a key") {
				v.Str = strings.TrimSuffix(v.Str, "NOPERM No permissions to access a key") +
					"NOPERM this user has no permissions to access one of the keys used as arguments"
				changed = true
			}
			return v
		case '$', '+':
			if isACL("LIST") && strings.Contains(v.Str, " sanitize-payload") {
				v.Str = strings.Replace(v.Str, " sanitize-payload", "", 1)
				changed = true
			}
			if isACL("DRYRUN") && strings.HasPrefix(v.Str, "User ") {
				if i := strings.Index(v.Str, " has no permissions"); i > 0 {
					v.Str = "This user" + v.Str[i:]
					changed = true
				}
			}
			return v
		case '*', '%', '~':
		default:
			return v
		}
		var es []Value
		keyed := isKeyed(v)
		for i := 0; i < len(v.Elems); i++ {
			e := v.Elems[i]
			if keyed && i%2 == 0 && isACL("LOG") &&
				(e.Str == "entry-id" || e.Str == "timestamp-created" || e.Str == "timestamp-last-updated") {
				i++
				changed = true
				continue
			}
			if isACL("GETUSER") && e.Kind != '*' && e.Kind != '~' && e.Str == "sanitize-payload" {
				changed = true
				continue
			}
			es = append(es, walk(e))
		}
		v.Elems = es
		return v
	}
	out := walk(v)
	return out, changed
}
