package acl

import (
	"strings"

	"streamd/internal/glob"
)

// KeyRef is one key a command touches with what it does to it (from the
// command's key specs: Read for the access flag, Write for insert, update
// or delete). A key with neither only has to match some pattern.
type KeyRef struct {
	Key         []byte
	Read, Write bool
}

// Reason is why a check failed. The values are ordered as Redis orders
// ACL_DENIED_*: when no selector allows a command, the highest reason
// found is reported.
type Reason int

// Denial reasons (Redis's ACL_DENIED_CMD, _KEY, _AUTH, _CHANNEL).
const (
	DeniedCommand Reason = iota + 1
	DeniedKey
	DeniedAuth
	DeniedChannel
)

// String is ACL LOG's "reason" field: command, key, auth, channel.
func (r Reason) String() string {
	switch r {
	case DeniedCommand:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedAuth:
		return "auth"
	case DeniedChannel:
		return "channel"
	}
	return "unknown"
}

// Denial is a failed check: the reason and the object ACL LOG records
// (the command's full name, "xinfo|stream" for a subcommand, or the key).
type Denial struct {
	Reason Reason
	Object string
}

// NoPerm is the error reply for the denial (Redis 7.2's non-verbose
// getAclErrorMessage with the NOPERM code).
func (d *Denial) NoPerm(user string) string {
	switch d.Reason {
	case DeniedCommand:
		return "NOPERM User " + user + " has no permissions to run the '" + d.Object + "' command"
	case DeniedKey:
		return "NOPERM No permissions to access a key"
	case DeniedChannel:
		return "NOPERM No permissions to access a channel"
	}
	return "WRONGPASS invalid username-password pair or user is disabled."
}

// DryRun is ACL DRYRUN's bulk-string reply for the denial (the verbose
// message, naming the key or channel).
func (d *Denial) DryRun(user string) string {
	switch d.Reason {
	case DeniedCommand:
		return "User " + user + " has no permissions to run the '" + d.Object + "' command"
	case DeniedKey:
		return "User " + user + " has no permissions to access the '" + d.Object + "' key"
	case DeniedChannel:
		return "User " + user + " has no permissions to access the '" + d.Object + "' channel"
	}
	return "WRONGPASS invalid username-password pair or user is disabled."
}

// Check says whether the user may run cmd (the top-level name, lower case)
// with sub on keys; nil means allowed. sub is the subcommand for a
// container ("stream" for XINFO STREAM; an unknown one is checked as the
// container) and, for a command without subcommands, its first argument
// (so that first-arg rules such as +select|0 apply; "" when there is none).
// keys must be in argument order: when every selector refuses, Redis
// reports the denial with the highest reason and, among key denials, the
// last key. The user's on/off flag is not looked at (that is AUTH's).
func (u *User) Check(cmd, sub string, keys []KeyRef) *Denial {
	cat := u.cat
	cmd = strings.ToLower(cmd)
	id, known := cat.ids[cmd]
	if known && cat.parent[id] >= 0 {
		known = false
	}
	full := cmd
	firstArg := ""
	if known && len(cat.subs[id]) > 0 {
		if sid, ok := cat.ids[cmd+"|"+strings.ToLower(sub)]; ok && sub != "" {
			id, full = sid, cmd+"|"+strings.ToLower(sub)
		}
	} else {
		firstArg = sub
	}
	best := &Denial{Reason: DeniedCommand, Object: full}
	bestIdx := -1
	for _, s := range u.selectors {
		reason, idx := s.check(id, known, firstArg, keys)
		if reason == 0 {
			return nil
		}
		if reason > best.Reason || (reason == best.Reason && idx > bestIdx) {
			best.Reason, bestIdx = reason, idx
			if reason == DeniedKey {
				best.Object = string(keys[idx].Key)
			}
		}
	}
	return best
}

// check is ACLSelectorCheckCmd: 0 if allowed, else the reason and, for a
// key, its index.
func (s *selector) check(id int, known bool, firstArg string, keys []KeyRef) (Reason, int) {
	if !s.allCommands && !(known && s.cat.noAuth[id]) {
		if !known {
			return DeniedCommand, -1
		}
		if !s.bit(id) {
			allowed := false
			if firstArg != "" {
				for _, a := range s.firstArgs[id] {
					if strings.EqualFold(a, firstArg) {
						allowed = true
						break
					}
				}
			}
			if !allowed {
				return DeniedCommand, -1
			}
		}
	}
	if s.allKeys {
		return 0, -1
	}
	for i, k := range keys {
		if !s.keyAllowed(k) {
			return DeniedKey, i
		}
	}
	return 0, -1
}

// keyAllowed is ACLSelectorCheckKey: some pattern with at least the
// permissions the access needs matches the key.
func (s *selector) keyAllowed(k KeyRef) bool {
	if s.allKeys {
		return true
	}
	need := 0
	if k.Read {
		need |= permRead
	}
	if k.Write {
		need |= permWrite
	}
	key := string(k.Key)
	for _, p := range s.patterns {
		if p.flags&need != need {
			continue
		}
		if glob.Match(p.pattern, key) {
			return true
		}
	}
	return false
}

// AllowsAll reports whether Check allows the user everything whatever the
// command and keys: its root selector has all commands with nothing taken
// away since (+@all / allcommands) and all keys (~* / allkeys). A server
// can skip Check for such a user.
func (u *User) AllowsAll() bool {
	s := u.selectors[0]
	return s.allCommands && s.allKeys
}
