package server

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"streamd/config"
	"streamd/internal/acl"
	"streamd/replication/wire"
)

// Where users come from (README "ACL users"): the replicated state holds
// them (ACL SETUSER/DELUSER/LOAD go through shard 0's log). The
// configuration only says what an operator asked for at start-up: when
// this node leads shard 0 (a single node at once), aclFromConfig proposes
// what differs from the state — an aclfile's users replace all of them (as
// Redis loads its aclfile at start-up), a "user" line replaces that user,
// and requirepass becomes the default user's only password.

// errNoACLFile is ACL LOAD/SAVE's reply without an aclfile.
const errNoACLFile = ErrorReply("ERR This Redis instance is not configured to use an ACL file. You may want " +
	"to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a " +
	"Redis configuration file set) in order to store users in the Redis configuration.")

// usersOp is the ACL LOAD operation that replaces every user with those
// of users: per user the engine's Rules (which rebuild it exactly, with
// passwords as hashes), sorted by name.
func usersOp(users *acl.Users) wire.ACLLoad {
	var op wire.ACLLoad
	for _, name := range users.Names() {
		op.Users = append(op.Users, wire.ACLUser{Name: name, Rules: users.Get(name).Rules()})
	}
	return op
}

// readACLFile parses the aclfile; its error is ACL LOAD's reply text
// without "ERR ".
func (s *Server) readACLFile(path string) (*acl.Users, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.New("Error loading ACLs, opening file '" + path + "': " + strerror(err))
	}
	return acl.ParseFileNamed(s.acl.catalog, path, string(data))
}

// cmdACLLOAD is ACL LOAD: this node's aclfile replaces every user (through
// shard 0's log, so every node gets them).
func (s *Server) cmdACLLOAD(c *Client, args [][]byte) Reply {
	path := s.config().ACLFile
	if path == "" {
		return errNoACLFile
	}
	users, err := s.readACLFile(path)
	if err != nil {
		return ErrorReply("ERR " + err.Error())
	}
	s.acl.changeMu.Lock()
	defer s.acl.changeMu.Unlock()
	op := usersOp(users)
	if r := s.aclWrite(c, op, aclLoadArgs(op)); r != "" {
		return r
	}
	return OK
}

// aclLoadCommand is the internal command a node sends shard 0's leader
// for its ACL LOAD (the users it read from its own file):
// STREAMD.ACLLOAD name count rule... name count rule... It is checked as
// ACL LOAD for the connection's user.
const aclLoadCommand = "STREAMD.ACLLOAD"

// aclLoadArgs is the forwarded form of op.
func aclLoadArgs(op wire.ACLLoad) [][]byte {
	args := [][]byte{[]byte(aclLoadCommand)}
	for _, u := range op.Users {
		args = append(args, []byte(u.Name), []byte(strconv.Itoa(len(u.Rules))))
		args = append(args, toArgs(u.Rules)...)
	}
	return args
}

// runACLLoad runs STREAMD.ACLLOAD from another node (shard 0's leader
// receives it): the users are checked with the engine, then proposed.
func (s *Server) runACLLoad(c *Client, args [][]byte) Reply {
	load := s.cmds.get("acl").sub("load")
	if d := s.aclCheck(c, load, [][]byte{[]byte("ACL"), []byte("LOAD")}); d != nil {
		return s.aclDenied(c, d, aclCtxTop)
	}
	var op wire.ACLLoad
	check := acl.NewUsers(s.acl.catalog)
	for i := 1; i < len(args); {
		if i+1 >= len(args) {
			return errSyntax
		}
		n, err := strconv.Atoi(string(args[i+1]))
		if err != nil || n < 0 || i+2+n > len(args) {
			return errSyntax
		}
		u := wire.ACLUser{Name: string(args[i])}
		for _, r := range args[i+2 : i+2+n] {
			u.Rules = append(u.Rules, string(r))
		}
		if err := check.SetUser(u.Name, u.Rules); err != nil {
			return ErrorReply("ERR " + err.Error())
		}
		op.Users = append(op.Users, u)
		i += 2 + n
	}
	if !slices.IsSortedFunc(op.Users, func(a, b wire.ACLUser) int { return strings.Compare(a.Name, b.Name) }) {
		return errSyntax
	}
	s.acl.changeMu.Lock()
	defer s.acl.changeMu.Unlock()
	if r := s.aclWrite(c, op, nil); r != "" {
		return r
	}
	return OK
}

// cmdACLSAVE is ACL SAVE: the users this node holds, written to its
// aclfile (atomically: a temporary file renamed over it).
func (s *Server) cmdACLSAVE(c *Client, args [][]byte) Reply {
	path := s.config().ACLFile
	if path == "" {
		return errNoACLFile
	}
	if err := writeFileAtomic(path, []byte(s.aclNow().users.FileText())); err != nil {
		s.log.Warn("ACL SAVE failed", "file", path, "err", err)
		return ErrorReply("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
	}
	return OK
}

// writeFileAtomic writes data to a temporary file beside path, syncs it
// and renames it over path.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// configUsers returns what the configuration asks for: the aclfile's
// users (replace all: file true), or the "user" lines' users, and the
// requirepass rules for the default user (nil when requirepass is unset).
func (s *Server) configUsers(cfg config.Config) (file *acl.Users, lines []wire.ACLUser, pass []string, err error) {
	if cfg.ACLFile != "" {
		if file, err = s.readACLFile(cfg.ACLFile); err != nil {
			return nil, nil, nil, err
		}
	}
	check := acl.NewUsers(s.acl.catalog)
	for _, l := range cfg.UserLines() {
		rules := append([]string{"reset"}, l[1:]...)
		if err := check.SetUser(l[0], rules); err != nil {
			return nil, nil, nil, errors.New("Error in user declaration '" + strings.Join(l, " ") + "': " + err.Error())
		}
		lines = append(lines, wire.ACLUser{Name: l[0], Rules: hashPasswords(rules)})
	}
	if cfg.RequirePass != "" {
		pass = requirePassRules(cfg.RequirePass)
	}
	return file, lines, pass, nil
}

// requirePassRules are the default user's rules for requirepass pw
// (Redis's ACLUpdateDefaultUserPassword): the one password pw, or
// nopass for "".
func requirePassRules(pw string) []string {
	if pw == "" {
		return []string{"resetpass", "nopass"}
	}
	return []string{"resetpass", "#" + acl.HashPassword(pw)}
}

// CheckACLConfig checks the configuration's users (the aclfile and the
// "user" lines) with the ACL engine, for cmd/streamd to refuse to start
// with Redis's message as Redis does.
func (s *Server) CheckACLConfig() error {
	_, _, _, err := s.configUsers(s.config())
	return err
}

// aclFromConfig proposes to shard 0 (led here) the users the
// configuration asks for that the state does not hold yet, once per
// process: the first time this node leads shard 0 (as Redis reads its
// configuration's users at start-up only).
//
// It reports false when a proposal failed (this node lost the leadership,
// or no quorum answered in time: a cluster whose other members are still
// starting); the caller tries again while this node leads (untilApplied).
func (s *Server) aclFromConfig() (ok bool) {
	sh := s.node.Shard(0)
	if sh == nil {
		return true
	}
	file, lines, pass, err := s.configUsers(s.config())
	if err != nil {
		s.log.Warn("ACL users from the configuration not applied", "err", err)
		return true
	}
	s.acl.changeMu.Lock()
	defer s.acl.changeMu.Unlock()
	if s.acl.configApplied {
		return true
	}
	s.rebuildACL()
	failed := false
	defer func() { s.acl.configApplied = !failed }()
	defer func() { ok = !failed }()
	propose := func(op wire.Command) bool {
		if _, err := sh.Propose(op); err != nil {
			s.log.Warn("could not apply the configured ACL users", "err", err)
			failed = true
			return false
		}
		s.aclStateChanged()
		return true
	}
	if file != nil && !sameUsers(s.aclNow().users, file) {
		if !propose(usersOp(file)) {
			return
		}
	}
	for _, l := range lines {
		want := acl.NewUsers(s.acl.catalog)
		want.SetUser(l.Name, l.Rules)
		if have := s.aclNow().users.Get(l.Name); have == nil || !slices.Equal(have.Rules(), want.Get(l.Name).Rules()) {
			if !propose(wire.ACLSetUser{Name: l.Name, Rules: l.Rules, Replace: true}) {
				return
			}
		}
	}
	if pass != nil {
		// Compared with what the state holds (the view applies
		// requirepass locally while the state has no default user).
		held, _ := sh.ACLUsers()
		inState := slices.ContainsFunc(held, func(u wire.ACLUser) bool { return u.Name == "default" })
		d := s.aclNow().users.Get("default")
		if !inState || d == nil || d.NoPass() || len(d.Passwords()) != 1 ||
			d.Passwords()[0] != acl.HashPassword(s.config().RequirePass) {
			propose(s.defaultUserOp(pass))
		}
	}
	return
}

// sameUsers reports whether a and b hold the same users with the same
// rules.
func sameUsers(a, b *acl.Users) bool {
	names := a.Names()
	if !slices.Equal(names, b.Names()) {
		return false
	}
	for _, n := range names {
		if !slices.Equal(a.Get(n).Rules(), b.Get(n).Rules()) {
			return false
		}
	}
	return true
}

// setRequirePass is CONFIG SET requirepass: the default user's password
// becomes pw alone (or nopass for ""), through shard 0's log.
func (s *Server) setRequirePass(c *Client, pw string) ErrorReply {
	rules := requirePassRules(pw)
	s.acl.changeMu.Lock()
	defer s.acl.changeMu.Unlock()
	s.rebuildACL()
	fwd := append([][]byte{[]byte("ACL"), []byte("SETUSER"), []byte("default")}, toArgs(rules)...)
	return s.aclWrite(c, s.defaultUserOp(rules), fwd)
}

// defaultUserOp is the write that applies rules to the default user as
// the view holds it: its whole resulting definition (as ACL SETUSER
// proposes).
func (s *Server) defaultUserOp(rules []string) wire.ACLSetUser {
	users := s.aclNow().users.Clone()
	if err := users.SetUser("default", rules); err != nil {
		// requirePassRules are always valid; append them as they are.
		return wire.ACLSetUser{Name: "default", Rules: rules}
	}
	return wire.ACLSetUser{Name: "default", Rules: users.Get("default").Rules(), Replace: true}
}
