package acl

import (
	"errors"
	"strings"
)

// Key permissions of a key pattern (Redis's ACL_READ_PERMISSION,
// ACL_WRITE_PERMISSION).
const (
	permRead  = 1
	permWrite = 2
	permAll   = permRead | permWrite
)

// Rule errors: their texts are Redis's ACLSetUserStringError.
var (
	errUnknown = errors.New("Unknown command or category name in ACL")
	errSyntax  = errors.New("Syntax error")
	errAllKeys = errors.New("Adding a pattern after the * pattern (or the " +
		"'allkeys' flag) is not valid and does not have any effect. Try " +
		"'resetkeys' to start with an empty list of patterns")
	errAllChannels = errors.New("Adding a pattern after the * pattern (or the " +
		"'allchannels' flag) is not valid and does not have any effect. Try " +
		"'resetchannels' to start with an empty list of channels")
	errNoSuchPass = errors.New("The password you are trying to remove from the user does not exist")
	errBadHash    = errors.New("The password hash must be exactly 64 characters and contain " +
		"only lowercase hexadecimal characters")
	errFirstArgSub = errors.New("Allowing first-arg of a subcommand is not supported")
)

type keyPattern struct {
	pattern string
	flags   int
}

// String is Redis's sdsCatPatternString: "~p", "%R~p" or "%W~p".
func (k keyPattern) String() string {
	switch k.flags {
	case permRead:
		return "%R~" + k.pattern
	case permWrite:
		return "%W~" + k.pattern
	}
	return "~" + k.pattern
}

// selector is Redis's aclSelector: the root one holds the user's own
// command/key/channel rules, the others come from "(...)" rules.
type selector struct {
	cat         *Catalog
	allKeys     bool
	allChannels bool
	allCommands bool // SELECTOR_FLAG_ALLCOMMANDS: cleared by any removal
	future      bool // the reserved "future commands" bit: +@all / -@all
	patterns    []keyPattern
	channels    []string
	allowed     []uint64
	firstArgs   map[int][]string // command id → allowed first arguments
	cmdRules    []string         // command_rules: "+get", "-@hash", "+select|0"
}

func newSelector(cat *Catalog) *selector {
	return &selector{cat: cat, allowed: make([]uint64, (cat.size()+63)/64)}
}

func (s *selector) clone() *selector {
	n := *s
	n.patterns = append([]keyPattern(nil), s.patterns...)
	n.channels = append([]string(nil), s.channels...)
	n.allowed = append([]uint64(nil), s.allowed...)
	n.cmdRules = append([]string(nil), s.cmdRules...)
	n.firstArgs = nil
	if s.firstArgs != nil {
		n.firstArgs = map[int][]string{}
		for k, v := range s.firstArgs {
			n.firstArgs[k] = append([]string(nil), v...)
		}
	}
	return &n
}

func (s *selector) bit(id int) bool { return s.allowed[id/64]&(1<<(id%64)) != 0 }

func (s *selector) setBit(id int, on bool) {
	if on {
		s.allowed[id/64] |= 1 << (id % 64)
	} else {
		s.allowed[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

// changePerm is ACLChangeSelectorPerm: the command and all its subcommands.
func (s *selector) changePerm(id int, allow bool) {
	s.setBit(id, allow)
	delete(s.firstArgs, id)
	for _, sub := range s.cat.subs[id] {
		s.setBit(sub, allow)
	}
}

func (s *selector) addFirstArg(id int, arg string) {
	if s.firstArgs == nil {
		s.firstArgs = map[int][]string{}
	}
	for _, a := range s.firstArgs[id] {
		if strings.EqualFold(a, arg) {
			return
		}
	}
	s.firstArgs[id] = append(s.firstArgs[id], arg)
}

// updateRules is ACLUpdateCommandRules: drop the earlier rules this one
// supersedes (the same name, or a subcommand/first-arg of it), then append.
func (s *selector) updateRules(rule string, allow bool) {
	rule = strings.ToLower(rule)
	kept := s.cmdRules[:0]
	for _, r := range s.cmdRules {
		name := r[1:]
		if name == rule || (strings.HasPrefix(name, rule) && name[len(rule)] == '|') {
			continue
		}
		kept = append(kept, r)
	}
	s.cmdRules = kept
	if allow {
		s.cmdRules = append(s.cmdRules, "+"+rule)
	} else {
		s.cmdRules = append(s.cmdRules, "-"+rule)
	}
}

// set applies one selector rule (Redis's ACLSetSelector).
func (s *selector) set(op string) error {
	if op == "" {
		return nil
	}
	lower := strings.ToLower(op)
	switch {
	case lower == "allkeys" || op == "~*":
		s.allKeys = true
		s.patterns = nil
	case lower == "resetkeys":
		s.allKeys = false
		s.patterns = nil
	case lower == "allchannels" || op == "&*":
		s.allChannels = true
		s.channels = nil
	case lower == "resetchannels":
		s.allChannels = false
		s.channels = nil
	case lower == "allcommands" || lower == "+@all":
		for i := range s.allowed {
			s.allowed[i] = ^uint64(0)
		}
		s.allCommands, s.future = true, true
		s.cmdRules, s.firstArgs = nil, nil
	case lower == "nocommands" || lower == "-@all":
		for i := range s.allowed {
			s.allowed[i] = 0
		}
		s.allCommands, s.future = false, false
		s.cmdRules, s.firstArgs = nil, nil
	case op[0] == '~' || op[0] == '%':
		return s.addKeyPattern(op)
	case op[0] == '&':
		if s.allChannels {
			return errAllChannels
		}
		ch := op[1:]
		for _, c := range s.channels {
			if c == ch {
				return nil
			}
		}
		s.channels = append(s.channels, ch)
	case len(op) > 1 && op[1] == '@' && (op[0] == '+' || op[0] == '-'):
		cat := strings.ToLower(op[2:])
		if !isCategory(cat) {
			return errUnknown
		}
		for _, id := range s.cat.cats[cat] {
			s.changePerm(id, op[0] == '+')
		}
		s.updateRules("@"+cat, op[0] == '+')
	case op[0] == '+':
		return s.allowCommand(op[1:])
	case op[0] == '-':
		id, ok := s.cat.lookup(op[1:])
		if !ok {
			return errUnknown
		}
		s.changePerm(id, false)
		s.updateRules(s.cat.names[id], false)
	default:
		return errSyntax
	}
	return nil
}

func (s *selector) addKeyPattern(op string) error {
	if s.allKeys {
		return errAllKeys
	}
	flags, offset := 0, 1
	if op[0] == '%' {
		for ; offset < len(op); offset++ {
			c := op[offset]
			if (c == 'R' || c == 'r') && flags&permRead == 0 {
				flags |= permRead
			} else if (c == 'W' || c == 'w') && flags&permWrite == 0 {
				flags |= permWrite
			} else if c == '~' {
				offset++
				break
			} else {
				return errSyntax
			}
		}
	} else {
		flags = permAll
	}
	if flags == 0 {
		return errSyntax
	}
	pat := ""
	if offset < len(op) {
		pat = op[offset:]
	}
	for i := range s.patterns {
		if s.patterns[i].pattern == pat {
			s.patterns[i].flags |= flags
			return nil
		}
	}
	s.patterns = append(s.patterns, keyPattern{pattern: pat, flags: flags})
	return nil
}

// allowCommand is "+cmd", "+container|sub" and the first-arg form
// "+cmd|arg" (deprecated in Redis but accepted).
func (s *selector) allowCommand(name string) error {
	p := strings.LastIndexByte(name, '|')
	if p < 0 {
		id, ok := s.cat.lookup(name)
		if !ok {
			return errUnknown
		}
		s.changePerm(id, true)
		s.updateRules(s.cat.names[id], true)
		return nil
	}
	base, sub := name[:p], name[p+1:]
	id, ok := s.cat.lookup(base)
	if !ok {
		return errUnknown
	}
	if s.cat.parent[id] >= 0 {
		return errFirstArgSub
	}
	if sub == "" {
		return errSyntax
	}
	if len(s.cat.subs[id]) > 0 {
		sid, ok := s.cat.lookup(name)
		if !ok {
			return errUnknown
		}
		s.changePerm(sid, true)
	} else {
		s.addFirstArg(id, sub)
	}
	s.updateRules(name, true)
	return nil
}

// describeCommands is ACLDescribeSelectorCommandRules (Redis 7.2): +@all
// or -@all, then the rules as they were given, superseded ones dropped.
func (s *selector) describeCommands() string {
	base := "-@all"
	if s.future {
		base = "+@all"
	}
	if len(s.cmdRules) == 0 {
		return base
	}
	return base + " " + strings.Join(s.cmdRules, " ")
}

func (s *selector) describeKeys() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.patterns))
	for i, p := range s.patterns {
		parts[i] = p.String()
	}
	return strings.Join(parts, " ")
}

func (s *selector) describeChannels() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// describe is ACLDescribeSelector: keys, channels, command rules.
func (s *selector) describe() string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, p := range s.patterns {
			b.WriteString(p.String())
			b.WriteByte(' ')
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.describeCommands())
	return b.String()
}

// fields is aclAddReplySelectorDescription: commands, keys, channels.
func (s *selector) fields() []Field {
	return []Field{
		{Name: "commands", Value: s.describeCommands()},
		{Name: "keys", Value: s.describeKeys()},
		{Name: "channels", Value: s.describeChannels()},
	}
}

// rules is the selector as rules that rebuild it exactly (User.Rules).
func (s *selector) rules() []string {
	var out []string
	if s.allKeys {
		out = append(out, "allkeys")
	} else {
		for _, p := range s.patterns {
			switch p.flags {
			case permRead:
				out = append(out, "%R~"+p.pattern)
			case permWrite:
				out = append(out, "%W~"+p.pattern)
			default:
				out = append(out, "%RW~"+p.pattern)
			}
		}
	}
	if s.allChannels {
		out = append(out, "allchannels")
	} else {
		for _, c := range s.channels {
			out = append(out, "&"+c)
		}
	}
	return append(out, strings.Fields(s.describeCommands())...)
}
