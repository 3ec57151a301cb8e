package server

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"streamd/server/resp"
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
// instead of slowing anyone down.

// monitorSet is the server's monitoring clients (Server.monitors).
type monitorSet struct {
	mu sync.Mutex
	// list is the current monitors, replaced (never changed in place)
	// under mu, so a feed reads it with one atomic load.
	list atomic.Pointer[[]*monitor]
}

// monitor is one monitoring client.
type monitor struct {
	c *Client
	// end is closed when it stops monitoring (RESET).
	end chan struct{}
}

// errMonitorKeyspace is Redis's reply to a keyspace command from a monitor
// (its replica flag).
const errMonitorKeyspace = ErrorReply("ERR Replica can't interact with the keyspace")

// active reports whether any client is monitoring: the hot path's check.
func (ms *monitorSet) active() bool {
	l := ms.list.Load()
	return l != nil && len(*l) > 0
}

// find returns c's monitor entry, or nil.
func (ms *monitorSet) find(c *Client) *monitor {
	if l := ms.list.Load(); l != nil {
		for _, m := range *l {
			if m.c == c {
				return m
			}
		}
	}
	return nil
}

// add makes c a monitor; false if it already is one.
func (ms *monitorSet) add(c *Client) (*monitor, bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var cur []*monitor
	if l := ms.list.Load(); l != nil {
		cur = *l
	}
	for _, m := range cur {
		if m.c == c {
			return m, false
		}
	}
	m := &monitor{c: c, end: make(chan struct{})}
	next := append(append(make([]*monitor, 0, len(cur)+1), cur...), m)
	ms.list.Store(&next)
	return m, true
}

// remove ends m's monitoring (idempotent).
func (ms *monitorSet) remove(m *monitor) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	l := ms.list.Load()
	if l == nil {
		return
	}
	next := make([]*monitor, 0, len(*l))
	for _, x := range *l {
		if x != m {
			next = append(next, x)
		}
	}
	if len(next) == len(*l) {
		return
	}
	close(m.end)
	ms.list.Store(&next)
}

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
	m, added := s.monitors.add(c)
	if !added {
		return noReply{}
	}
	go func() {
		select {
		case <-c.stop:
			s.monitors.remove(m)
		case <-m.end:
		}
	}()
	return OK
}

// monitorGate runs for every command of a client while anyone monitors:
// it returns Redis's refusal of a monitor's keyspace command (ok false),
// and ends a monitor's monitoring when it sends RESET.
func (s *Server) monitorGate(c *Client, cmd *Command) (refusal ErrorReply, ok bool) {
	m := s.monitors.find(c)
	if m == nil {
		return "", true
	}
	if cmd.Name == "reset" {
		s.monitors.remove(m)
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
	l := s.monitors.list.Load()
	if l == nil || len(*l) == 0 || !shownToMonitors(cmd) {
		return
	}
	line := SimpleString(monitorLine(time.Now(), db, c.addr, redactArgs(cmd, args)))
	for _, m := range *l {
		if m.c == c && c.quit {
			continue // Redis writes nothing more to a client closing after its reply
		}
		m.c.pushLine(line)
	}
}

// feedMonitorsExec shows what EXEC ran: each queued command (in the
// database it ran in: the queue's SELECTs move the later ones) and then EXEC. r is
// EXEC's reply: nothing ran unless it is an array.
func (s *Server) feedMonitorsExec(c *Client, db int, exec *Command, args [][]byte, queue []queuedCmd, r Reply) {
	if replies, ok := r.(Array); ok && len(replies) == len(queue) {
		for i, q := range queue {
			// Each shows once it ran: a SELECT in its new database.
			if q.cmd.Name == "select" && replies[i] == OK {
				if n, err := strconv.Atoi(string(q.args[1])); err == nil {
					db = n
				}
			}
			s.feedMonitors(c, db, q.cmd, q.args)
		}
	}
	s.feedMonitors(c, c.DB(), exec, args)
}

// monitorLine renders Redis's monitor line (without "+" and CRLF): the
// time as seconds.microseconds, "[db addr]", then each argument quoted as
// sdscatrepr does.
func monitorLine(now time.Time, db int, addr string, args [][]byte) string {
	n := 40 + len(addr)
	for _, a := range args {
		n += len(a) + 3
	}
	b := make([]byte, 0, n)
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := now.Nanosecond() / 1000
	for d := 100000; d > 1 && us < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(us), 10)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(db), 10)
	b = append(b, ' ')
	b = append(b, addr...)
	b = append(b, "] "...)
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = resp.AppendRepr(b, a)
	}
	return string(b)
}

// pushLine queues a monitor line on the client's output the way Push
// queues a push (never waiting for the network; disconnecting a client
// whose pending output passes pushOutputLimit), as a status reply in
// either protocol, as Redis sends it. A monitor runs no keyspace reads, so
// it is never holding pushes for a reply (outBuf.hold).
func (c *Client) pushLine(line SimpleString) {
	ob := &c.out
	ob.mu.Lock()
	if ob.err != nil {
		ob.mu.Unlock()
		return
	}
	c.queuePushLocked(line)
}
