package server

import (
	"strconv"
	"time"
)

// serverCommands are INFO, CONFIG, COMMAND, CLUSTER, WAIT, TIME and the
// persistence commands (SAVE, BGSAVE, LASTSAVE, SHUTDOWN).
func (s *Server) serverCommands() []*Command {
	return append([]*Command{
		{Name: "info", Arity: -1, Flags: []string{"loading", "stale"}, ACL: []string{"@slow", "@dangerous"},
			Summary: "Returns information and statistics about the server.", Since: "1.0.0", Group: "server",
			Handler: s.cmdINFO},
		s.configCommand(),
		s.commandCommand(),
		{Name: "cluster", Arity: -2, ACL: []string{"@slow"},
			Summary: "A container for Redis Cluster commands.", Since: "3.0.0", Group: "cluster",
			Handler: cmdCLUSTER},
		{Name: "wait", Arity: 3, Flags: []string{"noscript"}, ACL: []string{"@slow", "@connection"},
			Summary: "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.",
			Since:   "3.0.0", Group: "generic", Handler: cmdWAIT},
		{Name: "time", Arity: 1, Flags: []string{"loading", "stale", "fast"}, ACL: []string{"@fast"},
			Summary: "Returns the server time.", Since: "2.6.0", Group: "server", Handler: cmdTIME},
	}, s.persistCommands()...)
}

// cmdCLUSTER answers every CLUSTER subcommand as a non-cluster Redis does
// (rueidis and go-redis probe for exactly this text).
func cmdCLUSTER(c *Client, args [][]byte) Reply {
	return ErrorReply("ERR This instance has cluster support disabled")
}

// cmdWAIT is WAIT numreplicas timeout. A single node has no replicas, so
// the answer is 0; like a Redis master without replicas, asking for one or
// more replicas waits for the timeout first (0 = forever, until CLIENT
// UNBLOCK or the connection closes).
func cmdWAIT(c *Client, args [][]byte) Reply {
	n, err := strconv.ParseInt(string(args[1]), 10, 64)
	if err != nil {
		return ErrorReply("ERR value is not an integer or out of range")
	}
	ms, err := strconv.ParseInt(string(args[2]), 10, 64)
	if err != nil {
		return ErrorReply("ERR timeout is not an integer or out of range")
	}
	if ms < 0 {
		return ErrorReply("ERR timeout is negative")
	}
	if n <= 0 || c.inMulti() {
		return Int(0)
	}
	var deadline time.Time
	if ms > 0 {
		deadline = time.Now().Add(time.Duration(ms) * time.Millisecond)
	}
	if c.WaitBlocked(deadline, nil) == BlockUnblockedError {
		return ErrUnblocked
	}
	return Int(0)
}

// cmdTIME is TIME: seconds and microseconds as bulk strings.
func cmdTIME(c *Client, args [][]byte) Reply {
	now := time.Now()
	return Array{
		BulkString(strconv.FormatInt(now.Unix(), 10)),
		BulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10)),
	}
}
