package server

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Giving memory back after a burst (issue #13). The Go runtime sizes its
// heap for the load it last saw: during a burst of writes the heap holds the
// in-flight batches, replies and request buffers besides the data, and the
// next collection is only due once the heap has grown by GOGC percent over
// what the last one found live. When the burst ends, that garbage and the
// free pages stay resident until the next collection, which an idle process
// runs only every two minutes, and the runtime's scavenger then keeps about
// a tenth more than the heap goal: after a load of 1M entries into a fresh
// server, 17 MB of its 47 MB RSS were such pages. jemalloc, under Redis,
// purges its dirty pages when they go unused for a while; this is the same
// policy: once no command has run for idleReleaseAfter, and the heap holds
// at least idleReleaseMin (and a quarter of the live heap) more than the
// live heap, the sampler collects and returns the free pages to the
// operating system, once per quiet period. It costs a collection when the
// server has nothing else to do, and nothing while commands flow; the pages
// given back are faulted in again by the next burst, so the quiet period
// is long enough (a second) that a steady stream of requests with short
// gaps does not pay that on every gap.

// idleReleaseAfter is how long no command must run before a release.
const idleReleaseAfter = time.Second

// idleReleaseMin is the least memory above the live heap worth a release.
const idleReleaseMin = 4 << 20

// idleRelease is what releaseIdleMemory remembers between the sampler's
// ticks (only the sampler goroutine touches it).
type idleRelease struct {
	commands   int64     // commands processed at the last tick
	quietSince time.Time // the tick at which the count last moved
	done       bool      // a release was considered in this quiet period
}

// releaseIdleMemory is the policy above; the sampler calls it every 100 ms.
func (s *Server) releaseIdleMemory(now time.Time) {
	if s.idleRelease.tick(now, s.stats.CommandsProcessed.Load(), heapLiveAndHeld) {
		debug.FreeOSMemory()
	}
}

// tick records the count of commands processed at now and reports whether
// to release memory now; heap reads the live and the held heap (see
// heapLiveAndHeld), only when a quiet period is long enough.
func (r *idleRelease) tick(now time.Time, commands int64, heap func() (live, held uint64)) bool {
	if commands != r.commands || r.quietSince.IsZero() {
		*r = idleRelease{commands: commands, quietSince: now}
		return false
	}
	if r.done || now.Sub(r.quietSince) < idleReleaseAfter {
		return false
	}
	r.done = true
	live, held := heap()
	return held >= live && held-live >= max(idleReleaseMin, live/4)
}

// heapLiveAndHeld returns the heap the last collection found live and the
// heap memory the process holds (objects, live or dead, and free pages not
// returned to the operating system).
func heapLiveAndHeld() (live, held uint64) {
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	metrics.Read(samples)
	for i, sm := range samples {
		if sm.Value.Kind() != metrics.KindUint64 {
			return 0, 0
		}
		if i == 0 {
			live = sm.Value.Uint64()
		} else {
			held += sm.Value.Uint64()
		}
	}
	return live, held
}
