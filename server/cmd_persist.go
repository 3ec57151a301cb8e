package server

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"streamd/server/resp"
)

// SAVE, BGSAVE, LASTSAVE and SHUTDOWN. streamd's "RDB" is the shard's
// snapshot: every acknowledged write is already in the log, so a save only
// bounds how much log a restart replays (and lets the log be truncated).

// noReply is what a handler returns when nothing must be written: SHUTDOWN
// that succeeded just closes its connection, as Redis exits without
// answering.
type noReply struct{}

// errBgsaveInProgress is Redis's answer to SAVE or BGSAVE while a
// background save runs.
const errBgsaveInProgress = ErrorReply("ERR Background save already in progress")

// persistState is the server's side of INFO persistence: the background
// save and the figures the shard does not keep. Zero is ready to use.
type persistState struct {
	mu             sync.Mutex
	bgsaveRunning  bool
	bgsaveStart    time.Time
	bgsaveQueued   bool          // BGSAVE SCHEDULE while one runs
	bgsaveDone     bool          // a background save has finished
	lastBgsaveErr  error         // its error (nil: ok)
	lastBgsaveTook time.Duration // its duration

	// Group commit figures (see pipeline): drains of a connection's
	// pending writes, the writes they answered and the largest one.
	batches    atomic.Int64
	batchedCmd atomic.Int64
	maxBatch   atomic.Int64
}

// noteBatch records a pipeline drain of n writes.
func (p *persistState) noteBatch(n int) {
	p.batches.Add(1)
	p.batchedCmd.Add(int64(n))
	for {
		m := p.maxBatch.Load()
		if int64(n) <= m || p.maxBatch.CompareAndSwap(m, int64(n)) {
			return
		}
	}
}

// persistCommands are SAVE, BGSAVE, LASTSAVE and SHUTDOWN, with Redis 7's
// COMMAND INFO rows.
func (s *Server) persistCommands() []*Command {
	acl := []string{"@admin", "@slow", "@dangerous"}
	return []*Command{
		{Name: "save", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"}, ACL: acl,
			Summary: "Synchronously saves the database(s) to disk.", Since: "1.0.0", Group: "server",
			Handler: s.cmdSAVE},
		{Name: "bgsave", Arity: -1, Flags: []string{"admin", "noscript", "no_async_loading"}, ACL: acl,
			Summary: "Asynchronously saves the database(s) to disk.", Since: "1.0.0", Group: "server",
			Handler: s.cmdBGSAVE},
		{Name: "lastsave", Arity: 1, Flags: []string{"loading", "stale", "fast"},
			ACL:     []string{"@admin", "@fast", "@dangerous"},
			Summary: "Returns the Unix timestamp of the last successful save to disk.", Since: "1.0.0",
			Group: "server", Handler: s.cmdLASTSAVE},
		{Name: "shutdown", Arity: -1,
			Flags: []string{"admin", "noscript", "loading", "stale", "no_multi", "allow_busy"}, ACL: acl,
			Summary: "Synchronously saves the database(s) to disk and shuts down the Redis server.",
			Since:   "1.0.0", Group: "server", Handler: s.cmdSHUTDOWN},
	}
}

// shardErrorReply turns a shard error into a reply by resp.ErrorText's
// rule: its text when it already starts with a Redis error code
// ("MISCONF …", "ERR …"), else "ERR " and the text.
func shardErrorReply(err error) ErrorReply {
	return ErrorReply(resp.ErrorText(err.Error()))
}

// save snapshots every shard of this node now (logging a failure); the
// first error is returned after trying them all.
func (s *Server) save() error {
	var first error
	for i := range s.node.NumShards() {
		if err := s.node.Shard(i).Save(); err != nil {
			s.log.Warn("save failed", "shard", i, "err", err)
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// cmdSAVE is SAVE: snapshot now and answer +OK, or the error; refused while
// a background save runs, as Redis.
func (s *Server) cmdSAVE(c *Client, args [][]byte) Reply {
	s.persist.mu.Lock()
	running := s.persist.bgsaveRunning
	s.persist.mu.Unlock()
	if running {
		return errBgsaveInProgress
	}
	if err := s.save(); err != nil {
		return shardErrorReply(err)
	}
	return OK
}

// cmdBGSAVE is BGSAVE [SCHEDULE]: snapshot in the background. While one
// runs, BGSAVE is refused and BGSAVE SCHEDULE queues one more, as Redis.
func (s *Server) cmdBGSAVE(c *Client, args [][]byte) Reply {
	schedule := false
	if len(args) > 1 {
		if len(args) > 2 || !strings.EqualFold(string(args[1]), "schedule") {
			return errSyntax
		}
		schedule = true
	}
	p := &s.persist
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bgsaveRunning {
		if schedule {
			p.bgsaveQueued = true
			return SimpleString("Background saving scheduled")
		}
		return errBgsaveInProgress
	}
	p.bgsaveRunning = true
	p.bgsaveStart = time.Now()
	// The calling connection's goroutine is counted in s.wg, so this Add
	// cannot race with Close's Wait; Close waits for the save to end.
	s.wg.Add(1)
	go s.bgsave()
	return SimpleString("Background saving started")
}

// bgsave runs background saves until none is queued.
func (s *Server) bgsave() {
	defer s.wg.Done()
	p := &s.persist
	for {
		p.mu.Lock()
		start := p.bgsaveStart
		p.mu.Unlock()
		err := s.save()
		if err == nil {
			s.log.Info("Background saving terminated with success")
		}
		p.mu.Lock()
		p.bgsaveDone = true
		p.lastBgsaveErr = err
		p.lastBgsaveTook = time.Since(start)
		if !p.bgsaveQueued {
			p.bgsaveRunning = false
			p.mu.Unlock()
			return
		}
		p.bgsaveQueued = false
		p.bgsaveStart = time.Now()
		p.mu.Unlock()
	}
}

// bgsaveInfo returns INFO's view of background saves: running, the
// current one's age, the last one's status and duration (-1: none).
func (p *persistState) bgsaveInfo() (running bool, currentSec int64, lastOK bool, lastSec int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	currentSec, lastSec = -1, -1
	if p.bgsaveRunning {
		currentSec = int64(time.Since(p.bgsaveStart) / time.Second)
	}
	if p.bgsaveDone {
		lastSec = int64(p.lastBgsaveTook / time.Second)
	}
	return p.bgsaveRunning, currentSec, p.lastBgsaveErr == nil, lastSec
}

// lastSaveUnix is LASTSAVE: the time of the last successful snapshot (the
// oldest over this node's shards: everything is saved as of then), or the
// server's start when a shard has none yet (Redis starts it at boot).
func (s *Server) lastSaveUnix() int64 {
	var oldest int64
	for i := range s.node.NumShards() {
		t := s.node.Shard(i).Stats().LastSaveUnix
		if t <= 0 {
			return s.startTime.Unix()
		}
		if oldest == 0 || t < oldest {
			oldest = t
		}
	}
	return oldest
}

// cmdLASTSAVE is LASTSAVE.
func (s *Server) cmdLASTSAVE(c *Client, args [][]byte) Reply {
	return Int(s.lastSaveUnix())
}

// cmdSHUTDOWN is SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. It stops the
// server: the owner (see Done) stops accepting, answers or fails what is in
// flight, snapshots unless NOSAVE and exits 0; this connection closes
// without a reply, as Redis exits. A snapshot that fails refuses the
// shutdown with Redis's error unless FORCE. NOW is accepted (streamd has no
// replicas to wait for); ABORT has nothing to abort.
func (s *Server) cmdSHUTDOWN(c *Client, args [][]byte) Reply {
	var nosave, save, force, abort, flags bool
	for _, a := range args[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave":
			nosave, flags = true, true
		case "save":
			save, flags = true, true
		case "now":
			flags = true
		case "force":
			force, flags = true, true
		case "abort":
			abort = true
		default:
			return errSyntax
		}
	}
	if (abort && flags) || (nosave && save) {
		return errSyntax
	}
	if abort {
		return ErrorReply("ERR No shutdown in progress.")
	}
	if !nosave {
		// Snapshot now so a failure can refuse the shutdown (Redis's
		// "Error trying to save the DB, can't exit."); the owner's close
		// snapshots again whatever is written meanwhile.
		s.log.Info("User requested shutdown...")
		if err := s.save(); err != nil && !force {
			s.log.Warn("Error trying to save the DB, can't exit.", "err", err)
			return ErrorReply("ERR Errors trying to SHUTDOWN. Check logs.")
		}
	}
	s.requestShutdown(!nosave)
	c.quit = true
	return noReply{}
}
