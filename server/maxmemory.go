package server

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"streamd/server/info"
)

// maxmemory with maxmemory-policy noeviction (Redis's processCommand and
// getMaxmemoryState): once used memory — INFO used_memory, the memory
// accounting (memaccount.go: what the keys and the clients' queued output
// hold, plus the heap at start-up; Redis compares used_memory less its
// replication and AOF buffers, which streamd does not have), as the 100 ms
// sampler (sampleOps) last read it — is over maxmemory,
// a command flagged denyoom is refused with OOM before it is planned, so
// nothing it would write reaches the log (a replica never refuses what its
// leader accepted: the node that runs the command decides). Inside MULTI
// every command but EXEC, DISCARD, QUIT and RESET is refused while over the
// limit (queuing takes memory too), and EXEC is refused, with EXECABORT,
// when its queue holds a denyoom command. Deletes, acknowledgements and
// reads still run, so consumers can drain while producers see backpressure.
// The check costs the dispatcher one atomic load (s.oom).

// errOOM is Redis's shared.oomerr.
const errOOM = ErrorReply("OOM command not allowed when used memory > 'maxmemory'.")

// Memory-limit headroom: the Go runtime's soft memory limit counts all the
// memory the runtime holds (heap with its garbage, stacks, metadata, freed
// pages not yet returned, a snapshot's copy of the keyspace), not only the
// accounted memory that maxmemory is compared with, so it is set above
// maxmemory: by a quarter, and at least by minHeadroom.
const minHeadroom = 32 << 20

// GoMemoryLimit is the Go runtime's soft memory limit (debug.SetMemoryLimit)
// for a maxmemory: maxmemory plus 25%, at least maxmemory plus 32 MiB,
// capped at math.MaxInt64. For 0 (no maxmemory) it is the limit the process
// started with (GOMEMLIMIT's, else math.MaxInt64: none).
func GoMemoryLimit(maxmemory int64) int64 {
	if maxmemory <= 0 {
		return startMemoryLimit
	}
	headroom := max(maxmemory/4, minHeadroom)
	if maxmemory > math.MaxInt64-headroom {
		return math.MaxInt64
	}
	return maxmemory + headroom
}

// startMemoryLimit is the runtime's soft memory limit when the process
// started (GOMEMLIMIT, else math.MaxInt64); maxmemory 0 restores it.
var startMemoryLimit = debug.SetMemoryLimit(-1)

// memLimitMu guards memLimitOwner: the soft memory limit is the process's,
// set by the server that last set a maxmemory (cmd/streamd runs one server
// per process; tests run several).
var (
	memLimitMu    sync.Mutex
	memLimitOwner *Server
)

// setMaxMemory makes n the maxmemory in force on this node: the OOM check
// (refreshed at once against a fresh used-memory reading) and the Go
// runtime's soft memory limit (GoMemoryLimit).
func (s *Server) setMaxMemory(n int64) {
	s.oomMu.Lock()
	s.stats.MaxMemory.Store(n)
	s.oomMu.Unlock()
	used := s.sampleUsedMemory()
	memLimitMu.Lock()
	switch {
	case n > 0:
		debug.SetMemoryLimit(GoMemoryLimit(n))
		memLimitOwner = s
	case memLimitOwner == s:
		debug.SetMemoryLimit(startMemoryLimit)
		memLimitOwner = nil
	}
	memLimitMu.Unlock()
	if n > 0 && used > n {
		// Redis's updateMaxmemory warning.
		s.log.Warn("the new maxmemory value is smaller than the current memory usage: "+
			"commands that add data answer OOM until memory is freed (maxmemory-policy noeviction)",
			"maxmemory", n, "used_memory", used)
	}
}

// releaseMemoryLimit gives the process's soft memory limit back (the
// start-up one) if this server set it; Close calls it.
func (s *Server) releaseMemoryLimit() {
	memLimitMu.Lock()
	defer memLimitMu.Unlock()
	if memLimitOwner == s {
		debug.SetMemoryLimit(startMemoryLimit)
		memLimitOwner = nil
	}
}

// sampleUsedMemory reads used_memory (the accounting, readMemAccount; it
// also raises used_memory_peak), stores it for /metrics and recomputes the
// OOM state; the sampler calls it every 100 ms, setMaxMemory at once.
func (s *Server) sampleUsedMemory() int64 {
	a := s.readMemAccount()
	s.oomMu.Lock()
	defer s.oomMu.Unlock()
	used := int64(min(a.used(), math.MaxInt64))
	info.NotePeak(uint64(used))
	s.stats.UsedMemory.Store(used)
	m := s.stats.MaxMemory.Load()
	s.oom.Store(m > 0 && used > m)
	return used
}

// oomRefusal says whether cmd must be refused because used memory is over
// maxmemory (Redis's processCommand: a denyoom command, or EXEC of a
// queue holding one; inside MULTI any command but EXEC, DISCARD, QUIT and
// RESET). A no_multi command inside MULTI is left to txIntercept's error,
// which Redis checks first.
func (s *Server) oomRefusal(c *Client, cmd *Command) bool {
	if !s.oom.Load() {
		return false
	}
	if !c.inMulti() {
		return cmd.denyoom
	}
	switch {
	case hasFlag(cmd, "no_multi"):
		return false
	case cmd.Control == ctlExec:
		for _, q := range c.tx.queue {
			if q.cmd.denyoom {
				return true
			}
		}
		return false
	case cmd.Control == ctlDiscard, cmd.Control == ctlQuit, cmd.Control == ctlReset:
		return false
	}
	return true
}

// rejectOOM answers a command oomRefusal refused, as Redis's rejectCommand
// with shared.oomerr: counted as rejected; EXEC discards the transaction
// and answers EXECABORT with the reason, any other command inside MULTI
// makes the EXEC fail.
func (s *Server) rejectOOM(c *Client, cmd *Command) {
	r := errOOM
	if cmd.Control == ctlExec {
		s.discardMulti(c)
		s.unwatchAll(c)
		r = ErrorReply("EXECABORT Transaction discarded because of: " + string(errOOM))
	}
	s.reject(c, cmd, r)
}

// gcNudge is what nudgeGC remembers between the sampler's ticks (only the
// sampler goroutine touches it).
type gcNudge struct {
	checked time.Time // when nudgeGC last looked at the cycle count
	cycles  uint64    // the completed GC cycles then
}

// gcCycles returns the number of completed GC cycles.
func gcCycles() uint64 {
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// nudgeGC runs a garbage collection while used memory is over maxmemory
// and none ran in the last second. used_memory (the accounting) drops as
// soon as XTRIM, XDEL or DEL apply, but the process holds the freed objects
// until a collection, and an idle server (writes refused, a consumer
// trimming) may not collect for minutes: this gives the memory back to the
// heap (and, through the scavenger, to the OS) while writes are refused.
// The sampler calls it every 100 ms; it costs nothing while under the
// limit.
func (s *Server) nudgeGC(now time.Time) {
	if !s.oom.Load() || now.Sub(s.gcNudge.checked) < time.Second {
		return
	}
	n := gcCycles()
	if n == s.gcNudge.cycles {
		runtime.GC()
		s.sampleUsedMemory()
		n = gcCycles()
	}
	s.gcNudge = gcNudge{checked: now, cycles: n}
}
