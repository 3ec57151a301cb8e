package server

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"

	"streamd/server/info"
)

// MEMORY USAGE / STATS / DOCTOR / MALLOC-STATS / PURGE / HELP. USAGE and
// STATS's key figures are the memory accounting (state's per-key bytes and
// running totals, memaccount.go), the same INFO used_memory reports;
// STATS's allocator figures are the Go heap's (allocated = HeapAlloc,
// active = HeapInuse, resident = HeapSys − HeapReleased) and the RSS is
// the process's (/proc/self/statm). Structures streamd does not have
// (replication backlog, AOF buffer, Lua and function caches) are 0.
func (s *Server) memoryCommand() *Command {
	sub := func(name string, arity int, flags []string, summary string, h func(*Client, [][]byte) Reply) *Command {
		return &Command{Name: "memory|" + name, Arity: arity, Flags: flags, ACL: []string{"@slow"},
			Summary: summary, Since: "4.0.0", Group: "server", Handler: h}
	}
	return &Command{
		Name: "memory", Arity: -2, ACL: []string{"@slow"},
		Summary: "A container for memory diagnostics commands", Since: "4.0.0", Group: "server",
		Subcommands: []*Command{
			{Name: "memory|usage", Arity: -3, Flags: []string{"readonly"}, FirstKey: 2, LastKey: 2, Step: 1,
				ACL: []string{"@read", "@slow"}, Summary: "Estimate the memory usage of a key", Since: "4.0.0",
				Group: "server", Planner: cmdMEMORYUSAGE},
			sub("stats", 2, nil, "Show memory usage details", s.cmdMEMORYSTATS),
			sub("doctor", 2, nil, "Outputs memory problems report", func(*Client, [][]byte) Reply {
				return Verbatim(memoryDoctor(s.memoryFigures()))
			}),
			sub("malloc-stats", 2, nil, "Show allocator internal stats", cmdMEMORYMALLOCSTATS),
			sub("purge", 2, nil, "Ask the allocator to release memory", func(*Client, [][]byte) Reply {
				debug.FreeOSMemory()
				return OK
			}),
			sub("help", 2, []string{"loading", "stale"}, "Show helpful text about the different subcommands",
				func(*Client, [][]byte) Reply { return helpReply("MEMORY", memoryHelp...) }),
		},
	}
}

// memoryHelp is MEMORY HELP's text (Redis 7.0's memoryCommand).
var memoryHelp = []string{
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"STATS",
	"    Return information about the memory usage of the server.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
}

// memStartup is startup.allocated (used_memory_startup): the Go heap's
// live bytes when the first server of the process was made, less what the
// keys it found (snapshots loaded before it) hold.
var memStartup atomic.Uint64

// noteStartupMemory records startup.allocated once per process, after a
// collection (so a snapshot load's garbage is not in it) and less the keys
// already loaded (they are the dataset, counted apart), as Redis measures
// it after initialising and before loading data.
func (s *Server) noteStartupMemory() {
	if memStartup.Load() != 0 {
		return
	}
	runtime.GC()
	heap := info.ReadHeap().Allocated
	var keys uint64
	for _, d := range s.readMemAccount().dbs {
		keys += uint64(d.Bytes)
	}
	memStartup.CompareAndSwap(0, max(heap-min(heap, keys), 1))
}

// memFigures are MEMORY STATS's and DOCTOR's numbers (Redis's struct
// redisMemOverhead): the accounting and the process's figures.
type memFigures struct {
	acct                        memAccount
	peak, total, rss            uint64
	allocated, active, resident uint64
}

// memoryFigures reads the accounting and the runtime.
func (s *Server) memoryFigures() memFigures {
	a := s.readMemAccount()
	h := info.ReadHeap()
	f := memFigures{acct: a, total: a.used(), rss: processRSS(h.Resident),
		allocated: h.Allocated, active: h.Active, resident: h.Resident}
	f.peak = info.NotePeak(f.total)
	return f
}

// processRSS is the process's resident set size from /proc/self/statm,
// or fallback where that cannot be read.
func processRSS(fallback uint64) uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return fallback
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return fallback
	}
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return fallback
	}
	return pages * uint64(os.Getpagesize())
}

// ratio is a/b as Redis's float figures (0 when b is 0).
func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// cmdMEMORYSTATS is MEMORY STATS, Redis 7.0's fields in its order (as
// redis-server 7.0.15 answers them), a map in RESP3 and a flat array in
// RESP2. Its figures are Redis's over the accounting: overhead.total is
// startup + clients + the key tables, dataset.bytes the rest of
// total.allocated (used_memory), keys.bytes-per-key what the server holds
// beyond start-up per key; the allocator and RSS figures are the Go
// runtime's and the process's.
func (s *Server) cmdMEMORYSTATS(c *Client, args [][]byte) Reply {
	f := s.memoryFigures()
	a := f.acct
	i := func(k string, v uint64) KV { return KV{K: BulkString(k), V: Int(int64(v))} }
	d := func(k string, v float64) KV { return KV{K: BulkString(k), V: Double(v)} }
	out := Map{
		i("peak.allocated", f.peak), i("total.allocated", f.total), i("startup.allocated", a.startup),
		i("replication.backlog", 0), i("clients.slaves", 0), i("clients.normal", a.clients), i("cluster.links", a.links),
		i("aof.buffer", 0), i("lua.caches", 0), i("functions.caches", 0),
	}
	for n, o := range a.dbs {
		if o.Keys == 0 {
			continue
		}
		out = append(out, KV{K: BulkString("db." + strconv.Itoa(n)), V: Map{
			i("overhead.hashtable.main", uint64(o.Overhead)), i("overhead.hashtable.expires", uint64(o.ExpiresOverhead)),
			i("overhead.hashtable.slot-to-keys", 0)}})
	}
	net := f.total - min(f.total, a.startup)
	var perKey uint64
	if k := a.keys(); k > 0 {
		perKey = net / k
	}
	dataset := a.dataset()
	out = append(out,
		i("overhead.total", a.overhead()), i("keys.count", a.keys()), i("keys.bytes-per-key", perKey),
		i("dataset.bytes", dataset), d("dataset.percentage", ratio(dataset*100, net)),
		d("peak.percentage", ratio(f.total*100, f.peak)),
		i("allocator.allocated", f.allocated), i("allocator.active", f.active), i("allocator.resident", f.resident),
		d("allocator-fragmentation.ratio", ratio(f.active, f.allocated)),
		i("allocator-fragmentation.bytes", f.active-min(f.active, f.allocated)),
		d("allocator-rss.ratio", ratio(f.resident, f.active)),
		i("allocator-rss.bytes", f.resident-min(f.resident, f.active)),
		d("rss-overhead.ratio", ratio(f.rss, f.resident)),
		i("rss-overhead.bytes", f.rss-min(f.rss, f.resident)),
		d("fragmentation", ratio(f.rss, f.total)),
		i("fragmentation.bytes", f.rss-min(f.rss, f.total)),
	)
	return out
}

// memoryDoctor is getMemoryDoctorReport over the runtime's figures (the
// client-buffer and script checks do not apply: streamd has neither).
func memoryDoctor(f memFigures) string {
	const mb = 1 << 20
	if f.total < 5*mb {
		return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used " +
			"in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam " +
			"and I will be back to our programming as soon as I finished rebooting.\n"
	}
	var b strings.Builder
	if ratio(f.peak, f.total) > 1.5 {
		b.WriteString(" * Peak memory: In the past this instance used more than 150% the memory that is currently using. " +
			"The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation " +
			"ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident " +
			"Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance " +
			"with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the " +
			"MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n")
	}
	if ratio(f.rss, f.total) > 1.4 && f.rss-min(f.rss, f.total) > 10*mb {
		fmt.Fprintf(&b, " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 "+
			"(this means that the Resident Set Size of the Redis process is much larger than the sum of the logical "+
			"allocations Redis performed). This problem is usually due either to a large peak memory (check if there is "+
			"a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment "+
			"memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are "+
			"using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"%s\".\n\n", "go")
	}
	if ratio(f.active, f.allocated) > 1.1 && f.active-min(f.active, f.allocated) > 10*mb {
		b.WriteString(" * High allocator fragmentation: This instance has an allocator external fragmentation greater " +
			"than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry " +
			"above in the report) or may result from a workload that causes the allocator to fragment memory a lot. " +
			"You can try enabling 'activedefrag' config option.\n\n")
	}
	if ratio(f.resident, f.active) > 1.1 && f.resident-min(f.resident, f.active) > 10*mb {
		b.WriteString(" * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 " +
			"(this means that the Resident Set Size of the allocator is much larger than the sum what the allocator " +
			"actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry " +
			"above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n")
	}
	if ratio(f.rss, f.resident) > 1.1 && f.rss-min(f.rss, f.resident) > 10*mb {
		b.WriteString(" * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater " +
			"than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the " +
			"allocator holds). This problem may be due to Lua scripts or Modules.\n\n")
	}
	if b.Len() == 0 {
		return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
	}
	return "Sam, I detected a few issues in this Redis instance memory implants:\n\n" + b.String() +
		"I'm here to keep you safe, Sam. I want to help you.\n"
}

// cmdMEMORYMALLOCSTATS is MEMORY MALLOC-STATS: the Go runtime's memory
// statistics (the allocator streamd has), one "name: value" a line.
func cmdMEMORYMALLOCSTATS(c *Client, args [][]byte) Reply {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	var b strings.Builder
	b.WriteString("___ Begin Go runtime statistics ___\n")
	for _, kv := range []struct {
		k string
		v uint64
	}{
		{"HeapAlloc", m.HeapAlloc}, {"HeapInuse", m.HeapInuse}, {"HeapIdle", m.HeapIdle},
		{"HeapReleased", m.HeapReleased}, {"HeapSys", m.HeapSys}, {"HeapObjects", m.HeapObjects},
		{"StackInuse", m.StackInuse}, {"StackSys", m.StackSys}, {"MSpanInuse", m.MSpanInuse},
		{"MCacheInuse", m.MCacheInuse}, {"GCSys", m.GCSys}, {"OtherSys", m.OtherSys}, {"Sys", m.Sys},
		{"TotalAlloc", m.TotalAlloc}, {"Mallocs", m.Mallocs}, {"Frees", m.Frees},
		{"NextGC", m.NextGC}, {"NumGC", uint64(m.NumGC)}, {"PauseTotalNs", m.PauseTotalNs},
	} {
		fmt.Fprintf(&b, "%s: %d\n", kv.k, kv.v)
	}
	b.WriteString("--- End Go runtime statistics ---\n")
	return Verbatim(b.String())
}
