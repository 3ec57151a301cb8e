package server

import (
	"crypto/rand"
	"strconv"
	"strings"
	"time"

	"streamd/internal/acl"
	"streamd/replication/wire"
	"streamd/server/router"
)

// aclCommand is ACL with Redis 7.2's subcommands, arities, flags and
// categories.
func (s *Server) aclCommand() *Command {
	sub := func(name string, arity int, admin bool, summary, since string, h func(*Client, [][]byte) Reply) *Command {
		flags := []string{"noscript", "loading", "stale"}
		cats := []string{"@slow"}
		if admin {
			flags = append([]string{"admin"}, flags...)
			cats = []string{"@admin", "@slow", "@dangerous"}
		}
		return &Command{Name: "acl|" + name, Arity: arity, Flags: flags, ACL: cats,
			Summary: summary, Since: since, Group: "server", Handler: h}
	}
	help := sub("help", 2, false, "Returns helpful text about the different subcommands.", "6.0.0", cmdACLHELP)
	help.Flags = []string{"loading", "stale"}
	return &Command{
		Name: "acl", Arity: -2, ACL: []string{"@slow"},
		Summary: "A container for Access List Control commands.", Since: "6.0.0", Group: "server",
		Subcommands: []*Command{
			sub("cat", -2, false, "Lists the ACL categories, or the commands inside a category.", "6.0.0", s.cmdACLCAT),
			sub("deluser", -3, true, "Deletes ACL users, and terminates their connections.", "6.0.0", s.cmdACLDELUSER),
			sub("dryrun", -4, true, "Simulates the execution of a command by a user, without executing the command.", "7.0.0", s.cmdACLDRYRUN),
			sub("genpass", -2, false, "Generates a pseudorandom, secure password that can be used to identify ACL users.", "6.0.0", cmdACLGENPASS),
			sub("getuser", 3, true, "Lists the ACL rules of a user.", "6.0.0", s.cmdACLGETUSER),
			help,
			sub("list", 2, true, "Dumps the effective rules in ACL file format.", "6.0.0", s.cmdACLLIST),
			sub("load", 2, true, "Reloads the rules from the configured ACL file.", "6.0.0", s.cmdACLLOAD),
			sub("log", -2, true, "Lists recent security events generated due to ACL rules.", "6.0.0", s.cmdACLLOG),
			sub("save", 2, true, "Saves the effective ACL rules in the configured ACL file.", "6.0.0", s.cmdACLSAVE),
			sub("setuser", -3, true, "Creates and modifies an ACL user and its rules.", "6.0.0", s.cmdACLSETUSER),
			sub("users", 2, true, "Lists all ACL users.", "6.0.0", s.cmdACLUSERS),
			sub("whoami", 2, false, "Returns the authenticated username of the current connection.", "6.0.0", cmdACLWHOAMI),
		},
	}
}

// aclHelp is ACL HELP's text (Redis 7.2).
var aclHelp = []string{
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
}

func cmdACLHELP(c *Client, args [][]byte) Reply { return helpReply("ACL", aclHelp...) }

// cmdACLWHOAMI is ACL WHOAMI: the connection's user.
func cmdACLWHOAMI(c *Client, args [][]byte) Reply { return BulkString(c.userName()) }

// cmdACLUSERS is ACL USERS: the user names, sorted.
func (s *Server) cmdACLUSERS(c *Client, args [][]byte) Reply {
	names := s.aclNow().users.Names()
	out := make(Array, len(names))
	for i, n := range names {
		out[i] = BulkString(n)
	}
	return out
}

// cmdACLLIST is ACL LIST: each user's rules in ACL file format.
func (s *Server) cmdACLLIST(c *Client, args [][]byte) Reply {
	lines := s.aclNow().users.List()
	out := make(Array, len(lines))
	for i, l := range lines {
		out[i] = BulkString(l)
	}
	return out
}

// cmdACLGETUSER is ACL GETUSER name: the user's description (a map in
// RESP3), or a null for an unknown user.
func (s *Server) cmdACLGETUSER(c *Client, args [][]byte) Reply {
	u := s.aclNow().users.Get(string(args[2]))
	if u == nil {
		return Null{}
	}
	return fieldsReply(u.GetUser())
}

// fieldsReply renders the engine's fields as a map (GETUSER's flags as
// a set, as Redis replies them).
func fieldsReply(fs []acl.Field) Reply {
	m := make(Map, len(fs))
	for i, f := range fs {
		v := fieldValue(f.Value)
		if a, ok := v.(Array); ok && f.Name == "flags" {
			v = Set(a)
		}
		m[i] = KV{K: BulkString(f.Name), V: v}
	}
	return m
}

func fieldValue(v any) Reply {
	switch v := v.(type) {
	case string:
		return BulkString(v)
	case []string:
		out := make(Array, len(v))
		for i, s := range v {
			out[i] = BulkString(s)
		}
		return out
	case [][]acl.Field:
		out := make(Array, len(v))
		for i, fs := range v {
			out[i] = fieldsReply(fs)
		}
		return out
	case int64:
		return Int(v)
	case int:
		return Int(v)
	case float64:
		return Double(v)
	}
	return Null{}
}

// cmdACLCAT is ACL CAT [category]: the categories, or a category's
// commands.
func (s *Server) cmdACLCAT(c *Client, args [][]byte) Reply {
	if len(args) > 3 {
		return subSyntaxError(args)
	}
	var names []string
	if len(args) == 2 {
		names = acl.CategoryNames()
	} else {
		var ok bool
		names, ok = s.acl.catalog.InCategory(strings.ToLower(string(args[2])))
		if !ok {
			return ErrorReply("ERR Unknown category '" + cString(args[2], 128) + "'")
		}
	}
	out := make(Array, len(names))
	for i, n := range names {
		out[i] = BulkString(n)
	}
	return out
}

// cmdACLGENPASS is ACL GENPASS [bits]: a random password of bits bits
// (256 by default) as hex, from crypto/rand.
func cmdACLGENPASS(c *Client, args [][]byte) Reply {
	if len(args) > 3 {
		return subSyntaxError(args)
	}
	bits := acl.GenPassDefaultBits
	if len(args) == 3 {
		n, err := strconv.ParseInt(string(args[2]), 10, 64)
		if err != nil {
			return errNotInteger
		}
		if n <= 0 || n > acl.GenPassMaxBits {
			_, gerr := acl.GenPass(0, nil) // the engine's text for a bad size
			return ErrorReply("ERR " + gerr.Error())
		}
		bits = int(n)
	}
	random := make([]byte, acl.GenPassBytes(bits))
	if _, err := rand.Read(random); err != nil {
		return ErrorReply("ERR " + err.Error())
	}
	p, err := acl.GenPass(bits, random)
	if err != nil {
		return ErrorReply("ERR " + err.Error())
	}
	return BulkString(p)
}

// cmdACLLOG is ACL LOG [count|RESET].
func (s *Server) cmdACLLOG(c *Client, args [][]byte) Reply {
	if len(args) > 3 {
		return subSyntaxError(args)
	}
	count := 10
	if len(args) == 3 {
		if isOpt(args[2], "RESET") {
			s.acl.log.Reset()
			return OK
		}
		n, err := strconv.ParseInt(string(args[2]), 10, 64)
		if err != nil {
			return errNotInteger
		}
		count = int(max(min(n, 1<<31), 0))
	}
	now := time.Now().UnixMilli()
	entries := s.acl.log.Entries(count)
	out := make(Array, len(entries))
	for i, e := range entries {
		out[i] = fieldsReply(e.Fields(now))
	}
	return out
}

// cmdACLDRYRUN is ACL DRYRUN user command [arg ...]: +OK when the user may
// run it, else the reason as a bulk string.
func (s *Server) cmdACLDRYRUN(c *Client, args [][]byte) Reply {
	user := string(args[2])
	u := s.aclNow().users.Get(user)
	if u == nil {
		return ErrorReply("ERR User '" + cString(args[2], 128) + "' not found")
	}
	inner := args[3:]
	cmd := s.cmds.getBytes(inner[0])
	if cmd != nil && len(cmd.Subcommands) > 0 && len(inner) >= 2 {
		cmd = cmd.sub(string(inner[1]))
	}
	if cmd == nil {
		return ErrorReply("ERR Command '" + cString(inner[0], 128) + "' not found")
	}
	if !arityOK(cmd.Arity, len(inner)) {
		return ErrorReply("ERR wrong number of arguments for '" + cmd.Name + "' command")
	}
	if d := checkUser(u, cmd, inner); d != nil {
		return BulkString(d.DryRun(user))
	}
	return OK
}

// hashPasswords turns clear-text password rules into their hashes
// (">pw" → "#sha256", "<pw" → "!sha256"), so the rules can be proposed
// (and forwarded) without the password.
func hashPasswords(rules []string) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		switch {
		case strings.HasPrefix(r, ">"):
			r = "#" + acl.HashPassword(r[1:])
		case strings.HasPrefix(r, "<"):
			r = "!" + acl.HashPassword(r[1:])
		}
		out[i] = r
	}
	return out
}

// cmdACLSETUSER is ACL SETUSER name [rule ...]: checked with the engine,
// then proposed (passwords hashed) through shard 0's log.
func (s *Server) cmdACLSETUSER(c *Client, args [][]byte) Reply {
	name := string(args[2])
	rules := make([]string, len(args)-3)
	for i, a := range args[3:] {
		rules[i] = string(a)
	}
	s.acl.changeMu.Lock()
	defer s.acl.changeMu.Unlock()
	s.rebuildACL() // the users as applied here so far
	check := s.aclNow().users.Clone()
	if err := check.SetUser(name, rules); err != nil {
		return ErrorReply("ERR " + err.Error())
	}
	// Proposed here (shard 0 led here, whose view holds every ACL write
	// applied so far): the user's whole definition, so the state keeps
	// one short rule list per user. Forwarded: the rules as given, with
	// the passwords hashed; the leader does the same.
	op := wire.ACLSetUser{Name: name, Rules: check.Get(name).Rules(), Replace: true}
	fwd := append([][]byte{[]byte("ACL"), []byte("SETUSER"), args[2]}, toArgs(hashPasswords(rules))...)
	if r := s.aclWrite(c, op, fwd); r != "" {
		return r
	}
	return OK
}

// toArgs turns strings into request arguments.
func toArgs(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// cmdACLDELUSER is ACL DELUSER name [name ...]: how many existed. Their
// connections are closed.
func (s *Server) cmdACLDELUSER(c *Client, args [][]byte) Reply {
	names := make([]string, 0, len(args)-2)
	for _, a := range args[2:] {
		if string(a) == "default" {
			return ErrorReply("ERR The 'default' user cannot be removed")
		}
		names = append(names, string(a))
	}
	s.acl.changeMu.Lock()
	defer s.acl.changeMu.Unlock()
	// Counted here, from the users this node holds once the write is
	// applied everywhere: the users that existed before it.
	users := s.aclNow().users
	n := 0
	seen := map[string]bool{}
	for _, name := range names {
		if !seen[name] && users.Get(name) != nil {
			n++
		}
		seen[name] = true
	}
	if r := s.aclWrite(c, wire.ACLDelUser{Names: names}, args); r != "" {
		return r
	}
	return Int(n)
}

// aclWrite applies an ACL write to shard 0 (here when this node leads it,
// else at its leader with fwd, the command in its password-free form)
// and waits until this node's view holds it. It returns "" on success.
func (s *Server) aclWrite(c *Client, op wire.Command, fwd [][]byte) ErrorReply {
	c.acl.writing.Store(true)
	defer func() {
		if !c.quit { // else its own user is gone: see clientACL.writing
			c.acl.writing.Store(false)
		}
	}()
	done := func() ErrorReply {
		s.aclStateChanged()
		// The client deleted its own user: its connection closes after
		// the reply (Redis's CLIENT_CLOSE_AFTER_COMMAND).
		if name := c.userName(); !c.internal && name != "" && s.aclNow().users.Get(name) == nil {
			c.quit = true
		}
		return ""
	}
	if s.router.Leads(0) || !s.node.Clustered() {
		if _, err := s.node.Shard(0).Propose(op); err == nil {
			return done()
		} else if !router.IsNotLeader(err) {
			return ErrorReply(err.Error())
		}
	}
	if r := s.writeOnShard(c, 0, op, fwd); r != "" {
		return r
	}
	// Forwarded: wait until this node applied it, so the client's next
	// command (here) sees the change.
	if err := s.node.ReadBarrier(0); err != nil {
		s.log.Warn("ACL change applied at the leader, not yet here", "err", err)
	}
	return done()
}

// subSyntaxError is Redis's addReplySubcommandSyntaxError: the
// subcommand as the client wrote it.
func subSyntaxError(args [][]byte) ErrorReply {
	return ErrorReply("ERR unknown subcommand or wrong number of arguments for '" + cString(args[1], 128) +
		"'. Try " + strings.ToUpper(string(args[0])) + " HELP.")
}
