package server

import (
	"strconv"
	"time"
)

// serverCommands are INFO, CONFIG, COMMAND, CLUSTER (with READONLY and
// READWRITE), RAFT, WAIT, TIME and the persistence commands (SAVE, BGSAVE,
// LASTSAVE, SHUTDOWN).
func (s *Server) serverCommands() []*Command {
	cmds := append([]*Command{
		{Name: "info", Arity: -1, Flags: []string{"loading", "stale"}, ACL: []string{"@slow", "@dangerous"},
			Summary: "Returns information and statistics about the server.", Since: "1.0.0", Group: "server",
			Handler: s.cmdINFO},
		s.configCommand(),
		s.commandCommand(),
		s.raftCommand(),
		{Name: "wait", Arity: 3, Flags: []string{"noscript"}, ACL: []string{"@slow", "@connection"},
			Summary: "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.",
			Since:   "3.0.0", Group: "generic", Handler: s.cmdWAIT},
		{Name: "time", Arity: 1, Flags: []string{"loading", "stale", "fast"}, ACL: []string{"@fast"},
			Summary: "Returns the server time.", Since: "2.6.0", Group: "server", Handler: cmdTIME},
	}, s.persistCommands()...)
	return append(cmds, s.clusterCommands()...)
}

// cmdWAIT is WAIT numreplicas timeout: how many other voters of the shard
// of the client's last write have applied it (Node.ReplicasHolding),
// waiting up to timeout ms (0 = forever, until CLIENT UNBLOCK or the
// connection closes) for numreplicas of them. A write that was forwarded to
// another node's leader is asked about there (forwardWAIT relays WAIT
// upstream). Without a write, it counts the voters that applied anything
// of shard 0. A single node has no replicas, so the answer is 0; like a
// Redis master without replicas, asking for one or more waits for the
// timeout first. Inside MULTI, or with numreplicas ≤ 0, it answers at once.
func (s *Server) cmdWAIT(c *Client, args [][]byte) Reply {
	n, err := strconv.ParseInt(string(args[1]), 10, 64)
	if err != nil {
		return errNotInteger
	}
	ms, err := strconv.ParseInt(string(args[2]), 10, 64)
	if err != nil {
		return errTimeoutNotInt
	}
	if ms < 0 {
		return errTimeoutNegative
	}
	if !c.inMulti() {
		if r, ok := s.forwardWAIT(c, args); ok {
			return r
		}
	}
	shard, index, wrote := c.lastWrite()
	if !wrote {
		// No write yet: count the replicas that hold anything.
		shard, index = 0, 1
	}
	// A write whose index is unknown (forwarded on an upstream that has
	// since broken: its outcome is unknown) is held by no replica we can
	// name: index 0 counts none.
	count := func() int64 {
		if !s.node.Clustered() {
			return 0
		}
		return int64(s.node.ReplicasHolding(shard, index))
	}
	if n <= 0 || c.inMulti() {
		return Int(count())
	}
	var deadline time.Time
	if ms > 0 {
		deadline = time.Now().Add(time.Duration(ms) * time.Millisecond)
	}
	if !s.node.Clustered() {
		if c.WaitBlocked(deadline, nil) == BlockUnblockedError {
			return ErrUnblocked
		}
		return Int(0)
	}
	// A poller asks the replicas, 1 ms after the first ask, then twice as
	// long each time up to waitPollInterval, and wakes the client once
	// enough hold the write; the client stays blocked (CLIENT UNBLOCK, a
	// closing connection and the timeout work as for any blocked client).
	// If the first ask finds too few, the leader tells the replicas the
	// commit index at once (NudgeReplicas) instead of at its next idle
	// send, so they usually hold the write within a round trip or two.
	wake, stop := make(chan struct{}), make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTimer(time.Millisecond)
		defer t.Stop()
		for pause := time.Millisecond; ; pause = min(2*pause, waitPollInterval) {
			if count() >= n {
				close(wake)
				return
			}
			if pause == time.Millisecond {
				s.node.NudgeReplicas(shard)
			}
			t.Reset(pause)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	if c.WaitBlocked(deadline, wake) == BlockUnblockedError {
		return ErrUnblocked
	}
	return Int(count())
}

// waitLastCommand is WAIT as a forwarding node sends it for a client whose
// last write went on a trunk (router/trunk.go), shared with other clients:
// STREAMD.WAITLAST <shard> <numreplicas> <timeout> waits for the replicas
// holding what this node had applied of the shard when it came, which
// includes that write (its reply was read before). Only connections from
// other nodes may send it.
const waitLastCommand = "STREAMD.WAITLAST"

// runWaitLast runs STREAMD.WAITLAST on an internal connection.
func (s *Server) runWaitLast(c *Client, args [][]byte) Reply {
	if len(args) != 4 {
		return ErrorReply("ERR wrong number of arguments for '" + waitLastCommand + "' command")
	}
	shard, err := strconv.Atoi(string(args[1]))
	if err != nil || shard < 0 || shard >= s.node.NumShards() {
		return ErrorReply("ERR no such shard")
	}
	c.lastWr = lastWrite{shard: shard, index: s.node.Shard(shard).Info().AppliedIndex, ok: true}
	return s.cmdWAIT(c, [][]byte{[]byte("WAIT"), args[2], args[3]})
}

// waitPollInterval is how often, at most, WAIT asks the replicas for their
// applied index.
const waitPollInterval = 20 * time.Millisecond

// cmdTIME is TIME: seconds and microseconds as bulk strings.
func cmdTIME(c *Client, args [][]byte) Reply {
	now := time.Now()
	return Array{
		BulkString(strconv.FormatInt(now.Unix(), 10)),
		BulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10)),
	}
}
