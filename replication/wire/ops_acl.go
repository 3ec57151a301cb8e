package wire

// ACL users live in shard 0's replicated state as data the state machine
// stores without interpreting: per user, the ACL SETUSER rule tokens that
// define it, in order. The server turns clear-text passwords (">pw",
// "<pw") into "#<sha256>" / "!<sha256>" before proposing, so no password
// ever reaches the Raft log, and validates the rules with the ACL engine
// first, so applying them cannot fail.

// ACLUser is one user as the state holds it: its name and the rules that,
// applied in order to a new user, give it (ACL SETUSER semantics).
type ACLUser struct {
	Name  string
	Rules []string
}

// ACLSetUser is ACL SETUSER (and a configured "user" line): the rules are
// appended to the user's (a new user is created), or replace them when
// Replace is set. Result: nil (OK).
type ACLSetUser struct {
	Name    string
	Rules   []string
	Replace bool
}

// ACLDelUser is ACL DELUSER. Result: int64, the users that existed.
type ACLDelUser struct {
	Names []string
}

// ACLLoad replaces every user (ACL LOAD, an aclfile at start-up). Users
// must be sorted by name without duplicates. Result: nil (OK).
type ACLLoad struct {
	Users []ACLUser
}

func (ACLSetUser) command() {}
func (ACLDelUser) command() {}
func (ACLLoad) command()    {}

// Keys returns nil: users are not keys.
func (ACLSetUser) Keys() []string { return nil }

// Database returns 0.
func (ACLSetUser) Database() int { return 0 }

// Keys returns nil: users are not keys.
func (ACLDelUser) Keys() []string { return nil }

// Database returns 0.
func (ACLDelUser) Database() int { return 0 }

// Keys returns nil: users are not keys.
func (ACLLoad) Keys() []string { return nil }

// Database returns 0.
func (ACLLoad) Database() int { return 0 }

func (ACLSetUser) effects(_ any, e Effects) Effects { return e }
func (ACLDelUser) effects(_ any, e Effects) Effects { return e }
func (ACLLoad) effects(_ any, e Effects) Effects    { return e }

// IsACL reports whether cmd changes the ACL users.
func IsACL(cmd Command) bool {
	switch cmd.(type) {
	case ACLSetUser, ACLDelUser, ACLLoad:
		return true
	}
	return false
}
