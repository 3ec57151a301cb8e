package observe

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"streamd/server/resp"
)

// Slow log limits of an entry, Redis's SLOWLOG_ENTRY_MAX_ARGC and
// SLOWLOG_ENTRY_MAX_STRING.
const (
	slowlogMaxArgc   = 32
	slowlogMaxString = 128
)

// Settings reads the slow log's configuration: slowlog-log-slower-than
// (µs; negative: off) and slowlog-max-len.
type Settings func() (slowerThan int64, maxLen int)

// SlowLog is Redis's slow log (after slowlog.c): entries newest last, up to
// slowlog-max-len, each with an ID that goes on across SLOWLOG RESET. The
// zero value is ready; its settings are read on first use (Threshold) and
// again on Reload. It is safe for concurrent use.
type SlowLog struct {
	// threshold is the cached slowlog-log-slower-than plus 2 (every
	// valid value, -1 included, is then ≥ 1), so one atomic load tells
	// both the value and, when 0, that it was not loaded yet.
	threshold atomic.Int64
	// maxLen is the cached slowlog-max-len.
	maxLen atomic.Int64
	// cfgMu serialises reloading the cached settings.
	cfgMu sync.Mutex

	mu      sync.Mutex
	nextID  int64
	entries []entry // oldest first; entries[head:] are live
	head    int
}

// entry is one slow log entry.
type entry struct {
	id     int64
	unix   int64 // seconds
	micros int64 // duration
	args   []string
	addr   string
	name   string
}

// Reload caches the settings read now; CONFIG SET calls it after storing
// a change.
func (l *SlowLog) Reload(read Settings) {
	l.cfgMu.Lock()
	l.store(read)
	l.cfgMu.Unlock()
}

// store caches read's settings (cfgMu held).
func (l *SlowLog) store(read Settings) {
	slowerThan, maxLen := read()
	l.maxLen.Store(int64(maxLen))
	l.threshold.Store(max(slowerThan, -1) + 2)
}

// Threshold returns slowlog-log-slower-than (µs; negative: off), reading
// the settings with read the first time. Afterwards it costs one atomic
// load.
func (l *SlowLog) Threshold(read Settings) int64 {
	t := l.threshold.Load()
	if t == 0 {
		l.cfgMu.Lock()
		if l.threshold.Load() == 0 {
			l.store(read)
		}
		l.cfgMu.Unlock()
		t = l.threshold.Load()
	}
	return t - 2
}

// Add logs a command that took us microseconds, run with args (already
// redacted: see Redact) by the client at addr named name: at most 32
// arguments (the last one then says how many more there were), each cut
// at 128 bytes (saying how many more bytes it had). The log is then
// trimmed to slowlog-max-len.
func (l *SlowLog) Add(args [][]byte, us int64, addr, name string) {
	argc := min(len(args), slowlogMaxArgc)
	out := make([]string, argc)
	for j := 0; j < argc; j++ {
		a := args[j]
		switch {
		case argc != len(args) && j == argc-1:
			out[j] = "... (" + strconv.Itoa(len(args)-argc+1) + " more arguments)"
		case len(a) > slowlogMaxString:
			out[j] = string(a[:slowlogMaxString]) + "... (" + strconv.Itoa(len(a)-slowlogMaxString) + " more bytes)"
		default:
			out[j] = string(a)
		}
	}
	e := entry{unix: time.Now().Unix(), micros: us, args: out, addr: addr, name: name}
	maxLen := l.maxLen.Load()
	l.mu.Lock()
	e.id = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	if live := int64(len(l.entries) - l.head); live > maxLen {
		drop := int(live - maxLen)
		clear(l.entries[l.head : l.head+drop])
		l.head += drop
	}
	// Compact once the dropped prefix is most of the slice.
	if l.head > 32 && l.head*2 > len(l.entries) {
		n := copy(l.entries, l.entries[l.head:])
		clear(l.entries[n:])
		l.entries = l.entries[:n]
		l.head = 0
	}
	l.mu.Unlock()
}

// Get returns SLOWLOG GET's reply for the newest count entries (newest
// first; count ≥ 0): each [id, unix time, µs, [args...], client addr,
// client name].
func (l *SlowLog) Get(count int64) resp.Array {
	l.mu.Lock()
	defer l.mu.Unlock()
	live := l.entries[l.head:]
	n := int(min(count, int64(len(live))))
	out := make(resp.Array, 0, n)
	for i := len(live) - 1; i >= len(live)-n; i-- {
		e := live[i]
		a := make(resp.Array, len(e.args))
		for j, x := range e.args {
			a[j] = resp.BulkString(x)
		}
		out = append(out, resp.Array{resp.Int(e.id), resp.Int(e.unix), resp.Int(e.micros), a,
			resp.BulkString(e.addr), resp.BulkString(e.name)})
	}
	return out
}

// Len returns the number of entries (SLOWLOG LEN).
func (l *SlowLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries) - l.head
}

// Reset drops every entry (SLOWLOG RESET); the IDs go on.
func (l *SlowLog) Reset() {
	l.mu.Lock()
	l.entries, l.head = nil, 0
	l.mu.Unlock()
}
