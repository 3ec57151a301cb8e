package server

import (
	"strconv"

	"streamd/server/observe"
)

// MONITOR, after Redis 7.0: every command that runs here (where it runs: a
// command forwarded to another node shows on that node's monitors, coming
// from its internal connection) is sent to every monitoring client as a
// status line
//
//	+1700000000.123456 [0 127.0.0.1:5555] "XADD" "s" "*" "f" "v"
//
// (time, the client's database and address, the arguments quoted as
// Redis's sdscatrepr, secrets redacted as in the slow log). As in Redis,
// commands refused before they run (unknown, wrong arity, NOAUTH, queued by
// MULTI, MOVED) and admin commands (CONFIG, SLOWLOG, MONITOR, CLIENT LIST,
// ...) are not shown; a blocking command shows when it starts, EXEC's
// commands when EXEC ran them, followed by EXEC. A monitoring client keeps
// its connection for non-keyspace commands (PING, INFO, CLIENT ...);
// keyspace commands get Redis's "ERR Replica can't interact with the
// keyspace", MONITOR again is ignored, RESET ends monitoring and QUIT the
// connection. Lines are queued on the monitor's bounded output buffer, as
// pushes are: a monitor that does not read is disconnected at the limit
// instead of slowing anyone down. The set of monitors, the line and the
// fan-out are observe.Monitors; this file holds the command and the hooks.

// errMonitorKeyspace is Redis's reply to a keyspace command from a monitor
// (its replica flag).
const errMonitorKeyspace = ErrorReply("ERR Replica can't interact with the keyspace")

// monitorCommand is MONITOR.
func (s *Server) monitorCommand() *Command {
	return &Command{Name: "monitor", Arity: 1, Flags: []string{"admin", "noscript", "loading", "stale"},
		ACL:     []string{"@admin", "@slow", "@dangerous"},
		Summary: "Listen for all requests received by the server in real time", Since: "1.0.0", Group: "server",
		Handler: s.cmdMONITOR}
}

// cmdMONITOR makes the client a monitor (+OK); a monitor's second MONITOR
// gets no reply, as in Redis. The client stops monitoring on RESET or when
// its connection ends.
func (s *Server) cmdMONITOR(c *Client, args [][]byte) Reply {
	m, added := s.monitors.Add(asMonitor(c))
	if !added {
		return noReply{}
	}
	go func() {
		select {
		case <-c.stop:
			s.monitors.Remove(m)
		case <-m.End():
		}
	}()
	return OK
}

// monitorGate runs for every command of a client while anyone monitors:
// it returns Redis's refusal of a monitor's keyspace command (ok false),
// and ends a monitor's monitoring when it sends RESET.
func (s *Server) monitorGate(c *Client, cmd *Command) (refusal ErrorReply, ok bool) {
	m := s.monitors.Find(asMonitor(c))
	if m == nil {
		return "", true
	}
	if cmd.Control == ctlReset {
		s.monitors.Remove(m)
		return "", true
	}
	if cmd.write || hasFlag(cmd, "readonly") || hasFlag(cmd, "may_replicate") {
		return errMonitorKeyspace, false
	}
	return "", true
}

// shownToMonitors reports whether Redis shows cmd to monitors: not admin
// commands (nor those it flags skip_monitor).
func shownToMonitors(cmd *Command) bool {
	return !hasFlag(cmd, "admin") && !hasFlag(cmd, "skip_monitor")
}

// feedMonitors sends the line for args, run by c in database db, to every
// monitor (when cmd is one Redis shows).
func (s *Server) feedMonitors(c *Client, db int, cmd *Command, args [][]byte) {
	if !s.monitors.Active() || !shownToMonitors(cmd) {
		return
	}
	var skip observe.Monitor
	if c.quit {
		skip = asMonitor(c) // Redis writes nothing more to a client closing after its reply
	}
	s.monitors.Feed(skip, db, c.addr, observe.Redact(cmd.Name, args))
}

// feedMonitorsExec shows what EXEC ran: each queued command (in the
// database it ran in: the queue's SELECTs move the later ones) and then EXEC. r is
// EXEC's reply: nothing ran unless it is an array.
func (s *Server) feedMonitorsExec(c *Client, db int, exec *Command, args [][]byte, queue []queuedCmd, r Reply) {
	if replies, ok := r.(Array); ok && len(replies) == len(queue) {
		for i, q := range queue {
			// Each shows once it ran: a SELECT in its new database.
			if q.cmd.Control == ctlSelect && replies[i] == OK {
				if n, err := strconv.Atoi(string(q.args[1])); err == nil {
					db = n
				}
			}
			s.feedMonitors(c, db, q.cmd, q.args)
		}
	}
	s.feedMonitors(c, c.DB(), exec, args)
}

// monitorClient is a Client as observe.Monitors sees it (the same
// pointer, so monitors compare by client).
type monitorClient Client

// asMonitor returns c as an observe.Monitor.
func asMonitor(c *Client) *monitorClient { return (*monitorClient)(c) }

// PushLine queues a monitor line on the client's output the way Push
// queues a push (never waiting for the network; disconnecting a client
// whose pending output passes pushOutputLimit), as a status reply in
// either protocol, as Redis sends it. A monitor runs no keyspace reads, so
// it is never holding pushes for a reply (outBuf.hold).
func (m *monitorClient) PushLine(line SimpleString) {
	c := (*Client)(m)
	ob := &c.out
	ob.mu.Lock()
	if ob.err != nil {
		ob.mu.Unlock()
		return
	}
	c.queuePushLocked(line)
}
