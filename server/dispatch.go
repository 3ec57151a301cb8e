package server

import (
	"strings"
	"time"

	"streamd/replication/wire"
	"streamd/server/xargs"
)

// dispatchIn runs one request: lookup → arity → auth → MULTI → handler →
// reply, recording commandstats and errorstats. It is the one place replies
// are written (handlers return Reply values), mirroring Redis's
// processCommand checks in the same order and with the same texts. pl is
// the connection's pipeline (nil: none). A plain write (see pipelinable) is proposed and left pending in pl, its
// reply written when pl drains; every other request drains pl first, so
// replies keep request order and a read sees the writes sent before it.
// batchStart, if set, is when the connection goroutine took up the batch
// of requests this one came in: a pipelined write is timed from it (its
// reply waits for the batch anyway), saving a clock read per write; every
// other command reads the clock itself.
func (s *Server) dispatchIn(c *Client, args [][]byte, pl *pipeline, batchStart time.Time) {
	if c.internal && isOpt(args[0], onShardCommand) {
		pl.drain()
		s.runOnShard(c, args)
		return
	}
	if c.internal && isOpt(args[0], authAsCommand) {
		pl.drain()
		c.reply(s.runAuthAs(c, args))
		return
	}
	if c.internal && isOpt(args[0], waitLastCommand) {
		pl.drain()
		c.reply(s.runWaitLast(c, args))
		return
	}
	if c.internal && isOpt(args[0], aclLoadCommand) {
		pl.drain()
		c.reply(s.runACLLoad(c, args))
		return
	}
	cmd, rej := s.lookup(args)
	s.dispatchCmd(c, args, cmd, rej, pl, batchStart)
}

// dispatchCmd is dispatchIn for a request already looked up (lookup's cmd
// and rej), from a client that is not another node's.
func (s *Server) dispatchCmd(c *Client, args [][]byte, cmd *Command, rej ErrorReply, pl *pipeline, batchStart time.Time) {
	// CLIENT CACHING's answer lasts for the next command, whatever it is.
	defer s.trackingAfterCommand(c, cmd)
	if rej != "" {
		pl.drain()
		s.reject(c, cmd, rej)
		return
	}
	piped := pl != nil && pipelinable(c, cmd)
	start := batchStart
	if !piped || start.IsZero() {
		start = time.Now()
	}
	c.lastCmd.Store(&cmd.Name)
	c.lastActive.Store(start.UnixNano())
	c.inCommand.Store(true)
	var end time.Time // when the command finished, if known
	defer func() {
		if end.IsZero() {
			end = time.Now()
		}
		c.lastActive.Store(end.UnixNano())
		c.inCommand.Store(false)
	}()
	// The rest returns from one place, so that Go open-codes the two
	// defers (a function with many returns pays for them at run time).
	end = s.runCmd(c, args, cmd, pl, piped, start)
}

// runCmd is dispatchCmd after its bookkeeping: the checks, routing and
// running of a request not refused, from start (piped: a plain write that
// may join pl). It returns when the command finished (zero: unknown yet).
func (s *Server) runCmd(c *Client, args [][]byte, cmd *Command, pl *pipeline, piped bool, start time.Time) time.Time {
	// Redis's authRequired(): the default user has a password (or is
	// off) and this client has not authenticated. CONFIG SET requirepass
	// "" lifts it for everyone, as it makes the default user "nopass".
	if !c.authed.Load() && s.aclNow().authRequired && !hasFlag(cmd, "no_auth") {
		pl.drain()
		s.reject(c, cmd, ErrorReply("NOAUTH Authentication required."))
		return time.Time{}
	}
	// The user's ACL rules (Redis's ACLCheckAllPerm, before cluster
	// redirection and MULTI queuing; a denial makes a pending EXEC fail).
	if d := s.aclCheck(c, cmd, args); d != nil {
		pl.drain()
		r := s.aclDenied(c, d, aclContext(c))
		if cmd.Control == ctlExec {
			// Redis's rejectCommand → execCommandAbort.
			s.discardMulti(c)
			s.unwatchAll(c)
			r = ErrorReply("EXECABORT Transaction discarded because of: " + string(r))
		}
		s.reject(c, cmd, r)
		return time.Time{}
	}
	// A monitoring client may not touch the keyspace (cmd_monitor.go).
	monitored := s.monitors.Active()
	if monitored {
		if refusal, ok := s.monitorGate(c, cmd); !ok {
			pl.drain()
			s.reject(c, cmd, refusal)
			return time.Time{}
		}
	}
	if r, handled := s.routeRequest(c, cmd, args, pl, start); handled {
		if _, queued := r.(forwardQueued); queued {
			return start // forwarded; its reply comes when pl drains
		}
		if r != nil {
			// Forwarded, it shows in the SLOWLOG and MONITOR of the
			// node where it ran; fanned out, it ran here.
			return s.finish(c, cmd, args, start, r, cmd.Fanout)
		}
		return time.Time{}
	}
	// maxmemory (Redis's processCommand: after redirection, before
	// queuing; maxmemory.go), decided by the node that runs the command.
	if s.oomRefusal(c, cmd) {
		pl.drain()
		s.rejectOOM(c, cmd)
		return time.Time{}
	}
	// MONITOR shows a blocking command when it starts (as Redis, whose
	// first call of it returns blocked), EXEC's commands once EXEC ran
	// them, everything else once it ran (finish).
	var execQueue []queuedCmd
	var execDB int
	if monitored && !c.inMulti() && cmd.blocking {
		s.feedMonitors(c, c.DB(), cmd, args)
	}
	if monitored && cmd.Control == ctlExec && c.inMulti() {
		execQueue, execDB = c.tx.queue, c.DB()
	}
	if piped {
		p, r := cmd.Planner(c, args)
		if r == nil && p.Block == nil {
			if op, ok := p.Op.(wire.Command); ok {
				if monitored {
					s.feedMonitors(c, c.DB(), cmd, args)
				}
				pl.add(cmd, args, start, p, op)
				return start // proposed; its reply comes when pl drains
			}
		}
		pl.drain()
		if r == nil {
			c.notLeader = false
			run := p // run may escape (a blocked read keeps it); p stays on the stack
			r = s.runPlan(c, &run)
			r = s.afterLocal(c, cmd, args, r)
		}
		return s.finish(c, cmd, args, start, r, true)
	}
	pl.drain()
	if r, handled := s.txIntercept(c, cmd, args); handled {
		c.reply(r)
		if e, ok := r.(ErrorReply); ok {
			s.stats.ErrorReply(string(e))
		}
		return time.Time{}
	}
	r := s.runLocal(c, cmd, args)
	if execQueue != nil {
		end := s.finish(c, cmd, args, start, r, false)
		s.noteSlow(c, cmd, args, end.Sub(start))
		s.feedMonitorsExec(c, execDB, cmd, args, execQueue, r)
		return end
	}
	return s.finish(c, cmd, args, start, r, true)
}

// runLocal runs a command here (its handler, or its plan on the shard of
// its keys), routing it again once if its shard turned out to be led
// elsewhere.
func (s *Server) runLocal(c *Client, cmd *Command, args [][]byte) Reply {
	c.notLeader = false
	c.transferRefused = false
	var r Reply
	if cmd.Handler != nil {
		r = cmd.Handler(c, args)
	} else {
		r = s.runPlanner(c, cmd, args)
	}
	return s.afterLocal(c, cmd, args, r)
}

// afterLocal routes a request again when running it here found its shard
// led elsewhere (nothing was applied); otherwise it returns r.
func (s *Server) afterLocal(c *Client, cmd *Command, args [][]byte, r Reply) Reply {
	if c.transferRefused && !c.holding {
		c.transferRefused = false
		if r2 := s.holdForTransfer(c, cmd, args); r2 != nil {
			return r2
		}
		return r
	}
	if !c.notLeader {
		return r
	}
	c.notLeader = false
	if r2 := s.reroute(c, cmd, args); r2 != nil {
		return r2
	}
	return r
}

// finish records a command that ran and writes its reply (none for
// noReply: SHUTDOWN's connection just closes). It returns when the command
// finished (for the client's last-interaction time). here says the
// command ran on this node (not forwarded): then it is offered to the slow
// log and, unless it was shown when it started (blocking), to monitors.
func (s *Server) finish(c *Client, cmd *Command, args [][]byte, start time.Time, r Reply, here bool) time.Time {
	return s.finishAt(c, cmd, args, start, time.Now(), r, here)
}

// finishAt is finish for a command that finished at end.
func (s *Server) finishAt(c *Client, cmd *Command, args [][]byte, start, end time.Time, r Reply, here bool) time.Time {
	s.noteCallDur(cmd, end.Sub(start), r)
	if _, none := r.(noReply); !none {
		c.send(r)
	}
	if here {
		s.noteSlow(c, cmd, args, end.Sub(start))
		if !cmd.blocking && s.monitors.Active() {
			s.feedMonitors(c, c.DB(), cmd, args)
		}
	} else {
		c.slow = slowNote{}
	}
	return end
}

// noteCallHere is noteCallDur for a command that ran on this node for c
// (a pipelined write): also offered to the slow log.
func (s *Server) noteCallHere(c *Client, cmd *Command, args [][]byte, d time.Duration, r Reply) {
	s.noteCallDur(cmd, d, r)
	s.noteSlow(c, cmd, args, d)
}

// noteCall records a command that ran (commandstats, total_commands_processed,
// errorstats for an error reply). EXEC calls it for each queued command.
func (s *Server) noteCall(cmd *Command, start time.Time, r Reply) {
	s.noteCallDur(cmd, time.Since(start), r)
}

// noteCallDur is noteCall with the command's duration already measured.
func (s *Server) noteCallDur(cmd *Command, d time.Duration, r Reply) {
	e, failed := r.(ErrorReply)
	s.stats.Called(cmd.Name, d, failed)
	if failed {
		s.stats.ErrorReply(string(e))
		s.stats.CommandError(cmd.Name, string(e))
	}
}

// reject answers a command refused before it ran: counted in errorstats and
// the command's rejected_calls, and it makes a pending MULTI fail at EXEC
// (Redis's rejectCommand → flagTransaction).
func (s *Server) reject(c *Client, cmd *Command, r ErrorReply) {
	if cmd != nil {
		s.stats.Rejected(cmd.Name)
		s.stats.CommandError(cmd.Name, string(r))
	}
	s.stats.ErrorReply(string(r))
	s.txCommandError(c)
	c.reply(r)
}

// lookup finds the command (or subcommand) args name and checks arity.
// On failure it returns the command found so far (for rejected_calls; nil
// when unknown) and Redis's error.
func (s *Server) lookup(args [][]byte) (*Command, ErrorReply) {
	cmd := s.cmds.getBytes(args[0])
	if cmd == nil {
		return nil, unknownCommandError(args)
	}
	if len(cmd.Subcommands) > 0 && len(args) >= 2 {
		sub := cmd.sub(string(args[1]))
		if sub == nil {
			return cmd, ErrorReply("ERR unknown subcommand '" + cString(args[1], 128) +
				"'. Try " + strings.ToUpper(string(args[0])) + " HELP.")
		}
		cmd = sub
	}
	if !arityOK(cmd.Arity, len(args)) {
		return cmd, ErrorReply("ERR wrong number of arguments for '" + cmd.Name + "' command")
	}
	return cmd, ""
}

// arityOK applies Redis's convention: N exactly N, -N at least N.
func arityOK(arity, n int) bool {
	if arity >= 0 {
		return n == arity
	}
	return n >= -arity
}

// unknownCommandError is Redis 7's text: the name (at most 128 bytes) and
// the arguments quoted, each followed by a space, until 128 bytes of them
// have been written.
func unknownCommandError(args [][]byte) ErrorReply {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(cString(args[0], 128))
	b.WriteString("', with args beginning with: ")
	written := 0
	for _, a := range args[1:] {
		if written >= 128 {
			break
		}
		part := "'" + cString(a, 128-written) + "' "
		b.WriteString(part)
		written += len(part)
	}
	return ErrorReply(b.String())
}

// cString is a C "%.*s" of b: cut at the first NUL and at n bytes.
func cString(b []byte, n int) string { return xargs.CString(b, n) }

// hasFlag reports whether cmd has the COMMAND INFO flag f.
func hasFlag(cmd *Command, f string) bool {
	for _, x := range cmd.Flags {
		if x == f {
			return true
		}
	}
	return false
}
