package server

import (
	"math"
	"strconv"
	"strings"
	"time"

	"streamd/server/observe"
)

// SLOWLOG, after Redis's slowlog.c: every command that ran here (not one
// forwarded to another node, which logs it where it runs) and took at least
// slowlog-log-slower-than microseconds is kept, newest first, up to
// slowlog-max-len entries. The time is the command's own: a blocking
// command's wait is left out, and one that blocked and was not woken (a
// timeout, CLIENT UNBLOCK) is not logged, as in Redis 7.0. Commands run by
// EXEC are not logged one by one (EXEC itself is flagged skip_slowlog). The
// log itself is observe.SlowLog; this file holds the commands and the hook.

// slowNote is what a client's running command tells the slow log beyond
// its duration (Client.slow): the time it spent blocked, and whether a
// block ended other than by a wake-up. Only the connection goroutine
// touches it.
type slowNote struct {
	blocked  time.Duration
	notWoken bool
}

// noteBlocked records a wait of the client's running command that started
// at t0 and ended with r (conn.go's waitBlocked calls it).
func (c *Client) noteBlocked(t0 time.Time, r BlockResult) {
	c.slow.blocked += time.Since(t0)
	if r != BlockWoken {
		c.slow.notWoken = true
	}
}

// reloadSlowlog caches the slow log settings of the current configuration;
// CONFIG SET calls it after storing a change.
func (s *Server) reloadSlowlog() {
	s.slowlog.Reload(s.slowlogSettings)
}

// slowlogSettings reads the slow log's settings from the configuration.
func (s *Server) slowlogSettings() (slowerThan int64, maxLen int) {
	cfg := s.config()
	return cfg.SlowlogLogSlowerThan, cfg.SlowlogMaxLen
}

// noteSlow is the slow log's hook for a command that ran here and took d
// (blocked time included; it is taken out here). It costs one atomic load
// unless the command is logged.
func (s *Server) noteSlow(c *Client, cmd *Command, args [][]byte, d time.Duration) {
	note := c.slow
	c.slow = slowNote{}
	if note.blocked > 0 {
		if note.notWoken {
			return
		}
		d -= note.blocked
	}
	s.noteLatency(cmd, d)
	t := s.slowlog.Threshold(s.slowlogSettings)
	if t < 0 {
		return
	}
	us := d.Microseconds()
	if us < t || hasFlag(cmd, "skip_slowlog") {
		return
	}
	c.mu.Lock()
	name := c.name
	c.mu.Unlock()
	s.slowlog.Add(observe.Redact(cmd.Name, args), us, c.addr, name)
}

// slowlogCommand is SLOWLOG GET / LEN / RESET / HELP.
func (s *Server) slowlogCommand() *Command {
	admin := []string{"admin", "loading", "stale"}
	acl := []string{"@admin", "@slow", "@dangerous"}
	sub := func(name string, arity int, flags, acl []string, summary, since string, h func(*Client, [][]byte) Reply) *Command {
		return &Command{Name: "slowlog|" + name, Arity: arity, Flags: flags, ACL: acl,
			Summary: summary, Since: since, Group: "server", Handler: h}
	}
	return &Command{
		Name: "slowlog", Arity: -2, ACL: []string{"@slow"},
		Summary: "A container for slow log commands", Since: "2.2.12", Group: "server",
		Subcommands: []*Command{
			sub("get", -2, admin, acl, "Get the slow log's entries", "2.2.12", s.cmdSLOWLOGGET),
			sub("len", 2, admin, acl, "Get the slow log's length", "2.2.12", s.cmdSLOWLOGLEN),
			sub("reset", 2, admin, acl, "Clear all entries from the slow log", "2.2.12", s.cmdSLOWLOGRESET),
			sub("help", 2, []string{"loading", "stale"}, []string{"@slow"},
				"Show helpful text about the different subcommands", "6.2.0", cmdSLOWLOGHELP),
		},
	}
}

// cmdSLOWLOGGET is SLOWLOG GET [count]: the newest count entries (default
// 10, -1 all), each [id, unix time, µs, [args...], client addr, client name].
func (s *Server) cmdSLOWLOGGET(c *Client, args [][]byte) Reply {
	if len(args) > 3 {
		return ErrorReply("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) +
			"'. Try " + strings.ToUpper(string(args[0])) + " HELP.")
	}
	count := int64(10)
	if len(args) == 3 {
		n, err := strconv.ParseInt(string(args[2]), 10, 64)
		if err != nil || n < -1 {
			return ErrorReply("ERR count should be greater than or equal to -1")
		}
		count = n
		if count == -1 {
			count = math.MaxInt64
		}
	}
	return s.slowlog.Get(count)
}

// cmdSLOWLOGLEN is SLOWLOG LEN.
func (s *Server) cmdSLOWLOGLEN(c *Client, args [][]byte) Reply {
	return Int(s.slowlog.Len())
}

// cmdSLOWLOGRESET is SLOWLOG RESET: every entry dropped (IDs go on).
func (s *Server) cmdSLOWLOGRESET(c *Client, args [][]byte) Reply {
	s.slowlog.Reset()
	return OK
}

// cmdSLOWLOGHELP is Redis's SLOWLOG HELP text.
func cmdSLOWLOGHELP(c *Client, args [][]byte) Reply {
	return helpReply("SLOWLOG",
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
	)
}
