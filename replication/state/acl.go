package state

import (
	"encoding/binary"
	"math"
	"slices"
	"sort"

	"streamd/replication/wire"
)

// ACL users are held as data (wire.ACLUser: a name and the rule tokens
// that define it), sorted by name. The state machine never interprets the
// rules: the server validated them before proposing and compiles them with
// the ACL engine (internal/acl) whenever they change.

// aclSetUser appends the rules to the user's (creating it), or replaces
// them.
func (ks *Keyspace) aclSetUser(c wire.ACLSetUser) (any, error) {
	i, found := ks.aclFind(c.Name)
	if !found {
		ks.acl = slices.Insert(ks.acl, i, wire.ACLUser{Name: c.Name})
	}
	u := &ks.acl[i]
	if c.Replace {
		u.Rules = slices.Clone(c.Rules)
	} else {
		u.Rules = append(slices.Clip(u.Rules), c.Rules...)
	}
	return nil, nil
}

// aclDelUser deletes the named users and returns how many existed.
func (ks *Keyspace) aclDelUser(c wire.ACLDelUser) (any, error) {
	var n int64
	for _, name := range c.Names {
		if i, found := ks.aclFind(name); found {
			ks.acl = slices.Delete(ks.acl, i, i+1)
			n++
		}
	}
	return n, nil
}

// aclLoad replaces every user; a later duplicate name replaces an earlier.
func (ks *Keyspace) aclLoad(c wire.ACLLoad) (any, error) {
	ks.acl = nil
	for _, u := range c.Users {
		ks.aclSetUser(wire.ACLSetUser{Name: u.Name, Rules: u.Rules, Replace: true})
	}
	return nil, nil
}

// aclFind returns where name is (or would be inserted) in ks.acl.
func (ks *Keyspace) aclFind(name string) (int, bool) {
	i := sort.Search(len(ks.acl), func(i int) bool { return ks.acl[i].Name >= name })
	return i, i < len(ks.acl) && ks.acl[i].Name == name
}

// ACLUsers returns a copy of the users, sorted by name (nil: none were
// ever set, every node starts with Redis's default user alone).
func (ks *Keyspace) ACLUsers() []wire.ACLUser {
	return cloneACL(ks.acl)
}

func cloneACL(users []wire.ACLUser) []wire.ACLUser {
	if users == nil {
		return nil
	}
	out := make([]wire.ACLUser, len(users))
	for i, u := range users {
		out[i] = wire.ACLUser{Name: u.Name, Rules: slices.Clone(u.Rules)}
	}
	return out
}

// writeACL adds the users record (only when there are users, so a state
// without any gives the same bytes as before ACL users existed):
//
//	acl  tagACL | uv users | (str name | uv rules | str rule...)...
func (sw *snapWriter) writeACL(users []wire.ACLUser) {
	if len(users) == 0 {
		return
	}
	sw.start(tagACL)
	sw.b = binary.AppendUvarint(sw.b, uint64(len(users)))
	for _, u := range users {
		sw.b = appendString(sw.b, u.Name)
		sw.b = binary.AppendUvarint(sw.b, uint64(len(u.Rules)))
		for _, r := range u.Rules {
			sw.b = appendString(sw.b, r)
		}
	}
	sw.end()
}

// readACL reads the users record after its tag.
func (sr *snapReader) readACL(ks *Keyspace) {
	sr.records++
	n := sr.count("user", math.MaxInt32)
	for i := uint64(0); i < n && sr.err == nil; i++ {
		name := sr.string()
		if sr.err == nil && i > 0 && name <= ks.acl[len(ks.acl)-1].Name {
			sr.badf("user %q after user %q", name, ks.acl[len(ks.acl)-1].Name)
			return
		}
		nr := sr.count("rule", math.MaxInt32)
		u := wire.ACLUser{Name: name}
		for j := uint64(0); j < nr && sr.err == nil; j++ {
			u.Rules = append(u.Rules, sr.string())
		}
		ks.acl = append(ks.acl, u)
	}
	if sr.err == nil && n == 0 {
		sr.badf("users record with no users")
	}
}
