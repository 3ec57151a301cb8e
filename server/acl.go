package server

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"streamd/internal/acl"
	"streamd/server/router"
)

// ACL users (Redis 7 semantics). The users live in shard 0's replicated
// state as rule tokens (replication/state/acl.go); every node compiles
// them with the ACL engine (internal/acl) into an aclView, rebuilt when
// the shard reports a change (an ACL write applied, a snapshot restored),
// followers included. Each client names its user; the connection
// goroutine caches the compiled *acl.User and whether it may run
// everything, and looks again only when the view's version moved, so the
// check costs an atomic load and a comparison for a "+@all ~*" user.

// aclView is one compiled set of users.
type aclView struct {
	ver   uint64
	users *acl.Users
	// authRequired is Redis's authRequired(): the default user has a
	// password or is off, so a new connection must AUTH first.
	authRequired bool
	// defaultNoPass is Redis's DefaultUser->flags & USER_FLAG_NOPASS: the
	// default user needs no password (protected mode asks).
	defaultNoPass bool
	// nobody is a user with no permission at all: the rights of an
	// internal connection before the forwarding node names its client's
	// user, or of a client whose user was just deleted.
	nobody *acl.User
}

// aclState is the server's ACL machinery.
type aclState struct {
	catalog *acl.Catalog
	view    atomic.Pointer[aclView]
	// mu makes rebuilds one at a time (and versions increase in the
	// order views are published).
	mu   sync.Mutex
	next uint64
	log  *acl.Log
	// stateVer is the shard's ACL version the view was built from.
	stateVer uint64
	// changeMu serialises this node's ACL writes (SETUSER, DELUSER,
	// LOAD, requirepass), so each is validated against the users the
	// previous one left.
	changeMu sync.Mutex
	// configApplied is set once the configuration's users were applied
	// (the first time this process led shard 0): a later leadership does
	// not apply them again over the users changed since.
	configApplied bool
}

// clientACL is a client's ACL state. name is read by other goroutines
// (CLIENT LIST, CLIENT KILL USER, disconnecting a deleted user's
// clients); the rest is the connection goroutine's cache.
type clientACL struct {
	name atomic.Pointer[string]
	ver  uint64
	user *acl.User
	all  bool
	// writing is set while the client's own ACL write runs, and stays
	// set once it deleted the client's user: the connection closes after
	// the reply (aclWrite), not at once, whichever sweep comes late.
	writing atomic.Bool
	// dropped is set once the close of the connection because its user
	// was deleted was logged (every sweep closes it: see aclStateChanged).
	dropped atomic.Bool
}

// userName returns the client's user name ("" for an internal connection
// whose client's user was not named yet).
func (c *Client) userName() string {
	if p := c.acl.name.Load(); p != nil {
		return *p
	}
	return ""
}

// setUser makes name the client's user and drops the cached one.
func (c *Client) setUser(name string) {
	c.acl.name.Store(&name)
	c.acl.ver = 0
	c.acl.user = nil
	c.acl.all = false
}

// aclCatalog builds the engine's catalog from the command table: every
// command and subcommand with its categories (without '@').
func aclCatalog(t *commandTable) *acl.Catalog {
	var cmds []acl.Command
	for _, c := range t.sorted {
		for _, x := range append([]*Command{c}, c.Subcommands...) {
			cats := make([]string, len(x.ACL))
			for i, a := range x.ACL {
				cats[i] = strings.TrimPrefix(a, "@")
			}
			cmds = append(cmds, acl.Command{Name: x.Name, Categories: cats, NoAuth: hasFlag(x, "no_auth")})
		}
	}
	return acl.NewCatalog(cmds)
}

// initACL builds the catalog and the first view, and follows shard 0's
// ACL changes from now on.
func (s *Server) initACL() {
	s.acl.catalog = aclCatalog(s.cmds)
	s.acl.log = acl.NewLog(s.cfg.ACLLogMaxLen)
	// Followed before the first build: a change applied in between (a
	// cluster member catching up while it starts) would otherwise reach
	// neither.
	if sh := s.node.Shard(0); sh != nil {
		sh.OnACLChange(func() { go s.aclStateChanged() })
	}
	s.rebuildACL()
}

// aclStateChanged rebuilds the view after shard 0's users changed and
// closes the connections of users that no longer exist (but the one whose
// own ACL write is running: see aclWrite). The sweep runs even when
// another goroutine (the FSM's change callback) built the view first:
// when an ACL write returns, its deleted users' connections are closed,
// not about to be.
func (s *Server) aclStateChanged() {
	s.rebuildACL()
	v := s.aclNow()
	for _, o := range s.clientList() {
		name := o.userName()
		if name == "" || v.users.Get(name) != nil {
			continue
		}
		if o.internal || o.acl.writing.Load() {
			// A forwarded client's user is gone: the connection keeps
			// no rights (its node disconnects the client itself).
			continue
		}
		// Logged once, closed by every sweep: the one that logged may
		// not have closed it yet when another sweep's write answers.
		if o.acl.dropped.CompareAndSwap(false, true) {
			s.log.Info("closing the connection of a deleted ACL user", "id", o.id, "user", name)
		}
		o.nc.Close()
	}
}

// rebuildACL compiles shard 0's users into a new view and publishes it
// (nil when nothing changed since the last build).
func (s *Server) rebuildACL() *aclView {
	s.acl.mu.Lock()
	defer s.acl.mu.Unlock()
	users := acl.NewUsers(s.acl.catalog)
	heldDefault := false
	if sh := s.node.Shard(0); sh != nil {
		if sh.ACLVersion() == s.acl.stateVer && s.acl.view.Load() != nil {
			return nil
		}
		held, ver := sh.ACLUsers()
		s.acl.stateVer = ver
		for _, u := range held {
			heldDefault = heldDefault || u.Name == "default"
			if err := users.SetUser(u.Name, u.Rules); err != nil {
				// The server validated the rules before proposing
				// them; a rule this build refuses leaves the user as
				// far as it got.
				s.log.Warn("ACL user rules refused", "user", u.Name, "err", err)
			}
		}
	}
	if pw := s.config().RequirePass; pw != "" && !heldDefault {
		// requirepass protects this node from the start, before the
		// state (a follower still catching up, a single node before
		// aclFromConfig) holds the default user's password.
		users.SetUser("default", requirePassRules(pw))
	}
	nobodies := acl.NewUsers(s.acl.catalog)
	nobodies.SetUser("nobody", []string{"reset"})
	s.acl.next++
	v := &aclView{ver: s.acl.next, users: users, nobody: nobodies.Get("nobody")}
	if d := users.Get("default"); d != nil {
		v.authRequired = !d.NoPass() || !d.Enabled()
		v.defaultNoPass = d.NoPass()
	}
	s.acl.view.Store(v)
	return v
}

// aclNow returns the current view.
func (s *Server) aclNow() *aclView { return s.acl.view.Load() }

// defaultAuthed reports whether a new connection (user default) is
// authenticated from the start: the default user is on and "nopass".
func (s *Server) defaultAuthed() bool { return !s.aclNow().authRequired }

// clientUser returns the client's compiled user, refreshing the cache
// when the view moved; nil when the user does not exist (any more).
func (s *Server) clientUser(c *Client) *acl.User {
	v := s.aclNow()
	if c.acl.ver != v.ver {
		c.acl.ver = v.ver
		c.acl.user = nil
		c.acl.all = false
		if name := c.userName(); name != "" {
			c.acl.user = v.users.Get(name)
		}
		if c.acl.user == nil {
			c.acl.user = v.nobody
		} else {
			c.acl.all = allowsAll(c.acl.user)
		}
	}
	return c.acl.user
}

// allowsAll reports whether u may run every command on every key (the
// engine's AllowsAll: then no check is needed per command).
func allowsAll(u *acl.User) bool { return u.AllowsAll() }

// aclCheck checks cmd with args against the client's user; nil means
// allowed. A "+@all ~*" user costs a version comparison.
func (s *Server) aclCheck(c *Client, cmd *Command, args [][]byte) *acl.Denial {
	u := s.clientUser(c)
	if c.acl.all {
		return nil
	}
	return checkUser(u, cmd, args)
}

// checkUser checks cmd with args against u (ACL DRYRUN, EXEC's queue,
// the dispatcher).
func checkUser(u *acl.User, cmd *Command, args [][]byte) *acl.Denial {
	name, sub := cmd.Name, ""
	if cmd.parent != nil {
		name = cmd.parent.Name
		sub = cmd.Name[len(name)+1:]
	} else if len(args) > 1 {
		sub = string(args[1])
	}
	var buf [4]acl.KeyRef
	refs := buf[:0]
	if cmd.hasKeys() {
		for i, k := range commandKeys(cmd, args) {
			a := cmd.keyAccessOf(i)
			refs = append(refs, acl.KeyRef{Key: k, Read: a.read, Write: a.write})
		}
	}
	return u.Check(name, sub, refs)
}

// ACL LOG contexts.
const (
	aclCtxTop   = "toplevel"
	aclCtxMulti = "multi"
)

// errNoUserNamed answers a connection from another node that has not
// named its client's user (STREAMD.AUTHAS): it may run nothing.
const errNoUserNamed = ErrorReply("NOPERM this connection from another node has not named its client's user")

// aclDenied records a denial in ACL LOG and returns the NOPERM reply.
func (s *Server) aclDenied(c *Client, d *acl.Denial, context string) ErrorReply {
	user := c.userName()
	s.aclLogAdd(c, acl.LogEntry{Reason: d.Reason.String(), Context: context, Object: d.Object, Username: user})
	if user == "" {
		return errNoUserNamed
	}
	return ErrorReply(d.NoPerm(user))
}

// aclLogAdd adds an entry with the client's CLIENT LIST line.
func (s *Server) aclLogAdd(c *Client, e acl.LogEntry) {
	e.ClientInfo = c.info(time.Now()).Line()
	s.acl.log.Add(e, time.Now().UnixMilli())
}

// aclContext is the ACL LOG context of a command the client sends now.
func aclContext(c *Client) string {
	if c.inMulti() {
		return aclCtxMulti
	}
	return aclCtxTop
}

// execDenied is EXEC's reply for a queued command the user may no longer
// run (Redis's execCommand re-checks each one).
func execDenied(d *acl.Denial) ErrorReply {
	why := "no permission to execute the command or subcommand"
	switch d.Reason {
	case acl.DeniedKey:
		why = "no permission to touch the specified keys"
	case acl.DeniedChannel:
		why = "no permission to access one of the channels used as arguments"
	}
	return ErrorReply("NOPERM ACLs rules changed between the moment the transaction was accumulated " +
		"and the EXEC call. This command is no longer allowed for the following reason: " + why)
}

// authAsCommand is the internal command with which a forwarding node
// names the user of the client it forwards for (router.Upstream sends it
// before the client's first request and again when the client's user
// changes): STREAMD.AUTHAS <user>. Only connections from other nodes may
// send it; on the client port it is an unknown command. The connection
// then runs every command as that user; a user this node does not know
// leaves it with no rights.
const authAsCommand = router.AuthAsCommand

// runAuthAs runs STREAMD.AUTHAS on an internal connection.
func (s *Server) runAuthAs(c *Client, args [][]byte) Reply {
	if len(args) != 2 {
		return ErrorReply("ERR wrong number of arguments for '" + authAsCommand + "' command")
	}
	name := string(args[1])
	if s.aclNow().users.Get(name) == nil {
		c.acl.name.Store(nil)
		c.acl.ver = 0
		return ErrorReply("ERR User '" + cString(args[1], 128) + "' not found")
	}
	c.setUser(name)
	return OK
}
