package server

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SLOWLOG, after Redis's slowlog.c: every command that ran here (not one
// forwarded to another node, which logs it where it runs) and took at least
// slowlog-log-slower-than microseconds is kept, newest first, up to
// slowlog-max-len entries. The time is the command's own: a blocking
// command's wait is left out, and one that blocked and was not woken (a
// timeout, CLIENT UNBLOCK) is not logged, as in Redis 7.0. Commands run by
// EXEC are not logged one by one (EXEC itself is flagged skip_slowlog).

// Slow log limits of an entry, Redis's SLOWLOG_ENTRY_MAX_ARGC and
// SLOWLOG_ENTRY_MAX_STRING.
const (
	slowlogMaxArgc   = 32
	slowlogMaxString = 128
)

// slowLog is the server's slow log (Server.slowlog).
type slowLog struct {
	// threshold is the cached slowlog-log-slower-than plus 2 (every
	// valid value, -1 included, is then ≥ 1), so one atomic load tells
	// both the value and, when 0, that it was not loaded yet from the
	// configuration (see slowThreshold).
	threshold atomic.Int64
	// maxLen is the cached slowlog-max-len.
	maxLen atomic.Int64
	// cfgMu serialises reloading the cached settings.
	cfgMu sync.Mutex

	mu      sync.Mutex
	nextID  int64
	entries []slowEntry // oldest first; entries[head:] are live
	head    int
}

// slowEntry is one slow log entry.
type slowEntry struct {
	id     int64
	unix   int64 // seconds
	micros int64 // duration
	args   []string
	addr   string
	name   string
}

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
	sl := &s.slowlog
	sl.cfgMu.Lock()
	cfg := s.config()
	sl.maxLen.Store(int64(cfg.SlowlogMaxLen))
	sl.threshold.Store(max(cfg.SlowlogLogSlowerThan, -1) + 2)
	sl.cfgMu.Unlock()
}

// slowThreshold returns slowlog-log-slower-than (µs; negative: off).
func (s *Server) slowThreshold() int64 {
	t := s.slowlog.threshold.Load()
	if t == 0 {
		sl := &s.slowlog
		sl.cfgMu.Lock()
		if sl.threshold.Load() == 0 {
			cfg := s.config()
			sl.maxLen.Store(int64(cfg.SlowlogMaxLen))
			sl.threshold.Store(max(cfg.SlowlogLogSlowerThan, -1) + 2)
		}
		sl.cfgMu.Unlock()
		t = sl.threshold.Load()
	}
	return t - 2
}

// noteSlow is the slow log's hook for a command that ran here and took d
// (blocked time included; it is taken out here). It costs one atomic load
// unless the command is logged.
func (s *Server) noteSlow(c *Client, cmd *Command, args [][]byte, d time.Duration) {
	note := c.slow
	c.slow = slowNote{}
	t := s.slowThreshold()
	if t < 0 {
		return
	}
	if note.blocked > 0 {
		if note.notWoken {
			return
		}
		d -= note.blocked
	}
	us := d.Microseconds()
	if us < t || hasFlag(cmd, "skip_slowlog") {
		return
	}
	s.pushSlow(c, cmd, args, us)
}

// pushSlow adds an entry for args (redacted and truncated as Redis does),
// then trims the log to slowlog-max-len.
func (s *Server) pushSlow(c *Client, cmd *Command, args [][]byte, us int64) {
	shown := redactArgs(cmd, args)
	argc := min(len(shown), slowlogMaxArgc)
	out := make([]string, argc)
	for j := 0; j < argc; j++ {
		a := shown[j]
		switch {
		case argc != len(shown) && j == argc-1:
			out[j] = "... (" + strconv.Itoa(len(shown)-argc+1) + " more arguments)"
		case len(a) > slowlogMaxString:
			out[j] = string(a[:slowlogMaxString]) + "... (" + strconv.Itoa(len(a)-slowlogMaxString) + " more bytes)"
		default:
			out[j] = string(a)
		}
	}
	c.mu.Lock()
	name := c.name
	c.mu.Unlock()
	e := slowEntry{unix: time.Now().Unix(), micros: us, args: out, addr: c.addr, name: name}
	sl := &s.slowlog
	maxLen := sl.maxLen.Load()
	sl.mu.Lock()
	e.id = sl.nextID
	sl.nextID++
	sl.entries = append(sl.entries, e)
	if live := int64(len(sl.entries) - sl.head); live > maxLen {
		drop := int(live - maxLen)
		clear(sl.entries[sl.head : sl.head+drop])
		sl.head += drop
	}
	// Compact once the dropped prefix is most of the slice.
	if sl.head > 32 && sl.head*2 > len(sl.entries) {
		n := copy(sl.entries, sl.entries[sl.head:])
		clear(sl.entries[n:])
		sl.entries = sl.entries[:n]
		sl.head = 0
	}
	sl.mu.Unlock()
}

// redactArgs returns args as Redis shows them in the slow log and to
// MONITOR: AUTH's password (and user), HELLO's AUTH user and password and
// CONFIG SET requirepass's value replaced by "(redacted)", where Redis's
// redactClientCommandArgument does it (only once the arguments parsed).
// args itself is never changed.
func redactArgs(cmd *Command, args [][]byte) [][]byte {
	var redact []int
	switch cmd.Name {
	case "auth":
		if len(args) <= 3 {
			for j := 1; j < len(args); j++ {
				redact = append(redact, j)
			}
		}
	case "hello":
		if len(args) < 2 {
			break
		}
		v, err := strconv.ParseInt(string(args[1]), 10, 64)
		if err != nil || v < 2 || v > 3 {
			break
		}
		for j := 2; j < len(args); j++ {
			more := len(args) - 1 - j
			switch opt := string(args[j]); {
			case strings.EqualFold(opt, "auth") && more >= 2:
				redact = append(redact, j+1, j+2)
				j += 2
			case strings.EqualFold(opt, "setname") && more >= 1:
				j++
			default:
				j = len(args)
			}
		}
	case "config|set":
		for j := 2; j+1 < len(args); j += 2 {
			if strings.EqualFold(string(args[j]), "requirepass") {
				redact = append(redact, j+1)
			}
		}
	}
	if len(redact) == 0 {
		return args
	}
	out := append([][]byte(nil), args...)
	for _, j := range redact {
		out[j] = redactedArg
	}
	return out
}

// redactedArg replaces a secret argument (Redis's shared.redacted).
var redactedArg = []byte("(redacted)")

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
	sl := &s.slowlog
	sl.mu.Lock()
	live := sl.entries[sl.head:]
	n := int(min(count, int64(len(live))))
	out := make(Array, 0, n)
	for i := len(live) - 1; i >= len(live)-n; i-- {
		e := live[i]
		a := make(Array, len(e.args))
		for j, x := range e.args {
			a[j] = BulkString(x)
		}
		out = append(out, Array{Int(e.id), Int(e.unix), Int(e.micros), a, BulkString(e.addr), BulkString(e.name)})
	}
	sl.mu.Unlock()
	return out
}

// cmdSLOWLOGLEN is SLOWLOG LEN.
func (s *Server) cmdSLOWLOGLEN(c *Client, args [][]byte) Reply {
	sl := &s.slowlog
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return Int(len(sl.entries) - sl.head)
}

// cmdSLOWLOGRESET is SLOWLOG RESET: every entry dropped (IDs go on).
func (s *Server) cmdSLOWLOGRESET(c *Client, args [][]byte) Reply {
	sl := &s.slowlog
	sl.mu.Lock()
	sl.entries, sl.head = nil, 0
	sl.mu.Unlock()
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
