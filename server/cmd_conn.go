package server

import (
	"strconv"
	"strings"

	"streamd/internal/acl"
	"streamd/internal/version"
	"streamd/server/clients"
)

// connectionCommands are PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET and
// CLIENT, with Redis 7's arity, flags and ACL categories.
func connectionCommands() []*Command {
	conn := func(name string, arity int, flags []string, summary, since string, h func(*Client, [][]byte) Reply) *Command {
		return &Command{Name: name, Arity: arity, Flags: flags, ACL: []string{"@fast", "@connection"},
			Summary: summary, Since: since, Group: "connection", Handler: h}
	}
	noAuth := []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}
	return []*Command{
		conn("ping", -1, []string{"fast"}, "Returns the server's liveliness response.", "1.0.0", cmdPING),
		conn("echo", 2, []string{"loading", "stale", "fast"}, "Returns the given string.", "1.0.0", cmdECHO),
		conn("hello", -1, noAuth, "Handshakes with the Redis server.", "6.0.0", cmdHELLO),
		conn("auth", -2, noAuth, "Authenticates the connection.", "1.0.0", cmdAUTH),
		withControl(ctlSelect, conn("select", 2, []string{"loading", "stale", "fast"}, "Changes the selected database.", "1.0.0", cmdSELECT)),
		withControl(ctlQuit, conn("quit", -1, noAuth, "Closes the connection.", "1.0.0", cmdQUIT)),
		withControl(ctlReset, conn("reset", 1, noAuth, "Resets the connection.", "6.2.0", cmdRESET)),
		clientCommand(),
	}
}

// cmdPING is PING [message]: +PONG, or the message as a bulk string.
func cmdPING(c *Client, args [][]byte) Reply {
	if len(args) > 2 {
		return ErrorReply("ERR wrong number of arguments for 'ping' command")
	}
	if len(args) == 2 {
		return Bulk(args[1])
	}
	return SimpleString("PONG")
}

// cmdECHO is ECHO message.
func cmdECHO(c *Client, args [][]byte) Reply { return Bulk(args[1]) }

// serverVersion is what INFO and HELLO report: the Redis release whose
// behaviour streamd follows (clients such as Dapr parse it as semver). It is
// version.Redis, the one constant `streamd --version` also prints.
const serverVersion = version.Redis

// cmdHELLO is HELLO [protover [AUTH username password] [SETNAME name]],
// checked in the order of Redis's helloCommand.
func cmdHELLO(c *Client, args [][]byte) Reply {
	proto := c.Proto()
	if len(args) >= 2 {
		ver, err := strconv.ParseInt(string(args[1]), 10, 64)
		if err != nil {
			return ErrorReply("ERR Protocol version is not an integer or out of range")
		}
		if ver < 2 || ver > 3 {
			return ErrorReply("NOPROTO unsupported protocol version")
		}
		proto = int(ver)
	}
	var user, pass, name []byte
	auth, setName := false, false
	for j := 2; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := string(args[j])
		switch {
		case strings.EqualFold(opt, "auth") && more >= 2:
			auth, user, pass = true, args[j+1], args[j+2]
			j += 2
		case strings.EqualFold(opt, "setname") && more >= 1:
			setName, name = true, args[j+1]
			j++
		default:
			return ErrorReply("ERR Syntax error in HELLO option '" + opt + "'")
		}
	}
	s := c.srv
	if auth {
		if r := s.authenticate(c, string(user), string(pass)); r != nil {
			return r
		}
	}
	if !c.authed.Load() && s.aclNow().authRequired {
		return ErrorReply("NOAUTH HELLO must be called with the client already authenticated, " +
			"otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate " +
			"the client and select the RESP protocol version at the same time")
	}
	if setName {
		if r := clients.ValidateName(name); r != nil {
			return r
		}
		c.mu.Lock()
		c.name = string(name)
		c.mu.Unlock()
	}
	c.proto.Store(int32(proto))
	mode := "standalone"
	if s.router.ClusterMode() {
		mode = "cluster"
	}
	return Map{
		{K: BulkString("server"), V: BulkString("redis")},
		{K: BulkString("version"), V: BulkString(serverVersion)},
		{K: BulkString("proto"), V: Int(proto)},
		{K: BulkString("id"), V: Int(c.id)},
		{K: BulkString("mode"), V: BulkString(mode)},
		{K: BulkString("role"), V: BulkString("master")},
		{K: BulkString("modules"), V: Array{}},
	}
}

// errWrongPass is Redis's AUTH failure.
const errWrongPass = ErrorReply("WRONGPASS invalid username-password pair or user is disabled.")

// authenticate checks user/pass against the ACL users (an enabled user
// with that password, or "nopass"; the engine compares hashes in constant
// time). On success the client is authenticated as user; a failure is
// recorded in ACL LOG (reason "auth").
func (s *Server) authenticate(c *Client, user, pass string) Reply {
	u := s.aclNow().users.Get(user)
	if u == nil || !u.Enabled() || !(u.NoPass() || u.CheckPassword(pass)) {
		if u == nil {
			// The same work as for a known user, so the time taken
			// does not tell which users exist.
			acl.HashPassword(pass)
		}
		s.aclLogAdd(c, acl.LogEntry{Reason: acl.DeniedAuth.String(), Context: aclContext(c), Object: "AUTH", Username: user})
		return errWrongPass
	}
	c.setUser(user)
	c.authed.Store(true)
	return nil
}

// cmdAUTH is AUTH [username] password.
func cmdAUTH(c *Client, args [][]byte) Reply {
	if len(args) > 3 {
		return errSyntax
	}
	user, pass := "default", string(args[1])
	if len(args) == 2 {
		if d := c.srv.aclNow().users.Get("default"); d != nil && d.NoPass() {
			return ErrorReply("ERR AUTH <password> called without any password configured for " +
				"the default user. Are you sure your configuration is correct?")
		}
	} else {
		user, pass = string(args[1]), string(args[2])
	}
	if r := c.srv.authenticate(c, user, pass); r != nil {
		return r
	}
	return OK
}

// numDatabases is Redis's default "databases 16".
const numDatabases = 16

// cmdSELECT is SELECT index.
func cmdSELECT(c *Client, args [][]byte) Reply {
	n, err := strconv.ParseInt(string(args[1]), 10, 64)
	if err != nil || n < -1<<31 || n > 1<<31-1 {
		return errNotInteger
	}
	if n < 0 || n >= numDatabases {
		return ErrorReply("ERR DB index is out of range")
	}
	c.db.Store(int32(n))
	return OK
}

// cmdQUIT is QUIT: +OK, then the connection closes.
func cmdQUIT(c *Client, args [][]byte) Reply {
	c.quit = true
	return OK
}

// cmdRESET is RESET: MULTI discarded, WATCH, tracking and blocking state
// dropped (resetClientState), database 0, RESP2, no name, no NO-EVICT /
// NO-TOUCH, and authenticated only if no password is required, as in
// Redis's clearClientConnectionState.
func cmdRESET(c *Client, args [][]byte) Reply {
	s := c.srv
	s.resetClientState(c)
	c.db.Store(0)
	c.proto.Store(2)
	if c.internal {
		// A connection from another node never becomes the default
		// user: it is back to no rights until its client is named.
		c.acl.name.Store(nil)
		c.acl.ver = 0
	} else {
		c.setUser("default")
		c.authed.Store(s.defaultAuthed())
	}
	c.mu.Lock()
	c.name = ""
	c.noEvict, c.noTouch = false, false
	c.mu.Unlock()
	return SimpleString("RESET")
}
