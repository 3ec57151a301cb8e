package server

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// serverStats are the counters INFO reports. CONFIG RESETSTAT zeroes the
// ones Redis resets (not connected/blocked clients, which are gauges).
type serverStats struct {
	connectionsReceived atomic.Int64
	rejectedConnections atomic.Int64
	commandsProcessed   atomic.Int64
	errorReplies        atomic.Int64
	blockedClients      atomic.Int64

	mu       sync.Mutex
	commands map[string]*commandStat // by full name ("xgroup|create")
	errors   map[string]int64        // by error code ("ERR", "WRONGTYPE")

	// opsSamples is a ring of commands-per-second samples taken every
	// 100ms, like Redis's STATS_METRIC_COMMAND (16 samples).
	opsSamples [16]int64
	opsIdx     int
	opsLast    int64
	opsLastAt  time.Time
}

// commandStat is one INFO commandstats line.
type commandStat struct {
	calls, usec, rejected, failed int64
}

func newServerStats() *serverStats {
	return &serverStats{
		commands:  make(map[string]*commandStat),
		errors:    make(map[string]int64),
		opsLastAt: time.Now(),
	}
}

// reset is CONFIG RESETSTAT.
func (st *serverStats) reset() {
	st.connectionsReceived.Store(0)
	st.rejectedConnections.Store(0)
	st.commandsProcessed.Store(0)
	st.errorReplies.Store(0)
	st.mu.Lock()
	st.commands = make(map[string]*commandStat)
	st.errors = make(map[string]int64)
	st.opsSamples = [16]int64{}
	st.opsLast = 0
	st.opsLastAt = time.Now()
	st.mu.Unlock()
}

func (st *serverStats) stat(name string) *commandStat {
	cs := st.commands[name]
	if cs == nil {
		cs = &commandStat{}
		st.commands[name] = cs
	}
	return cs
}

// called records a command that ran; failed when it replied an error.
func (st *serverStats) called(name string, d time.Duration, failed bool) {
	st.commandsProcessed.Add(1)
	st.mu.Lock()
	cs := st.stat(name)
	cs.calls++
	cs.usec += d.Microseconds()
	if failed {
		cs.failed++
	}
	st.mu.Unlock()
}

// rejected records a command refused before it ran (arity, NOAUTH, ...).
func (st *serverStats) rejected(name string) {
	st.mu.Lock()
	st.stat(name).rejected++
	st.mu.Unlock()
}

// errorReply counts an error reply under its code: the text up to the first
// space, as Redis's errorstats does.
func (st *serverStats) errorReply(msg string) {
	code, _, _ := strings.Cut(msg, " ")
	st.errorReplies.Add(1)
	st.mu.Lock()
	st.errors[code]++
	st.mu.Unlock()
}

// namedCommandStat is a commandStat with its name, for sorted output.
type namedCommandStat struct {
	name string
	commandStat
}

// commandStats returns the commandstats lines sorted by name.
func (st *serverStats) commandStats() []namedCommandStat {
	st.mu.Lock()
	out := make([]namedCommandStat, 0, len(st.commands))
	for n, cs := range st.commands {
		out = append(out, namedCommandStat{n, *cs})
	}
	st.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// namedCount is an errorstats line.
type namedCount struct {
	name  string
	count int64
}

// errorStats returns the errorstats lines sorted by code.
func (st *serverStats) errorStats() []namedCount {
	st.mu.Lock()
	out := make([]namedCount, 0, len(st.errors))
	for n, c := range st.errors {
		out = append(out, namedCount{n, c})
	}
	st.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// sampleOps takes an ops/sec sample every 100ms until the server closes.
func (s *Server) sampleOps() {
	defer s.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			s.stats.sample(now)
		}
	}
}

func (st *serverStats) sample(now time.Time) {
	total := st.commandsProcessed.Load()
	st.mu.Lock()
	defer st.mu.Unlock()
	elapsed := now.Sub(st.opsLastAt)
	if elapsed <= 0 {
		return
	}
	delta := max(total-st.opsLast, 0)
	st.opsSamples[st.opsIdx] = int64(float64(delta) / elapsed.Seconds())
	st.opsIdx = (st.opsIdx + 1) % len(st.opsSamples)
	st.opsLast, st.opsLastAt = total, now
}

// opsPerSec is instantaneous_ops_per_sec: the mean of the samples.
func (st *serverStats) opsPerSec() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	var sum int64
	for _, v := range st.opsSamples {
		sum += v
	}
	return sum / int64(len(st.opsSamples))
}
