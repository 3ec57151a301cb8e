package server

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// A floor under the collector's headroom (issue #16). With GOGC=100 the next
// collection is due once the heap has grown by as much as the last one found
// live. A stream server's live heap is often small (a few MB: the data is
// packed, see issue #13) while every write allocates its request, plan,
// pending and reply, so a durable XADD load at -P 16 ran 40–70 collections a
// second and spent ~10% of its CPU in the collector. After every collection
// the GC percentage is therefore set to max(100, gcHeadroom/live), so that
// the heap may grow by at least gcHeadroom; once the live heap exceeds
// gcHeadroom this is plain GOGC=100. Measured on the durable XADD benchmark
// (redis-benchmark -c 50 -P 16, 2 cores): +2–10% requests/s over six paired
// runs. The cost is up to gcHeadroom more heap while writes flow; an idle
// server gives it back (memrelease.go). An operator's GOGC is left alone.

// gcHeadroom is the least heap growth allowed between collections.
const gcHeadroom = 24 << 20

// gcPercentMax bounds the percentage set for a nearly empty heap.
const gcPercentMax = 10000

// gcFloorOnce starts the adjustment once per process (the heap is the
// process's, whatever number of Servers it runs).
var gcFloorOnce sync.Once

// startGCFloor makes the percentage follow the live heap after every
// collection, unless GOGC is set in the environment (an operator's
// choice). A finalizer runs once after each collection that found its
// sentinel unreachable; it sets the percentage for the live heap that
// collection measured (SetGCPercent moves the current goal at once, with
// no stop of the world) and arms a new sentinel. Adjusting on a timer
// instead let a percentage computed for a tiny heap apply to a heap that
// had grown meanwhile (a 100 MB peak during a load that needs 35).
func startGCFloor() {
	gcFloorOnce.Do(func() {
		if _, set := os.LookupEnv("GOGC"); set {
			return
		}
		armGCFloor(0)
	})
}

// gcSentinel is an object nothing references: its finalizer runs after
// the next collection. The pointer keeps it out of the tiny allocator,
// whose objects may share a block and so never be finalized alone.
type gcSentinel struct {
	set int
	_   *byte
}

// armGCFloor arms a sentinel remembering the percentage last set.
func armGCFloor(set int) {
	runtime.SetFinalizer(&gcSentinel{set: set}, func(g *gcSentinel) {
		live, _ := heapLiveAndHeld()
		p := gcPercentFor(live)
		if p != g.set {
			debug.SetGCPercent(p)
		}
		armGCFloor(p)
	})
}

// gcPercentFor returns the GC percentage for a live heap of live bytes:
// max(100, gcHeadroom/live), at most gcPercentMax, and at most what keeps
// the runtime's heap minimum — 4 MB scaled by the percentage, the least
// goal it sets — within live + gcHeadroom: without that bound, a live heap
// of 1 MB got 2400 % and so a goal of 96 MB, not 25.
func gcPercentFor(live uint64) int {
	p := 100
	if live > 0 {
		if q := uint64(gcHeadroom) * 100 / live; q > uint64(p) {
			p = int(min(q, gcPercentMax))
		}
	}
	if m := int((live + gcHeadroom) * 100 / runtimeHeapMinimum); p > m {
		p = max(m, 100)
	}
	return p
}

// runtimeHeapMinimum is the Go runtime's defaultHeapMinimum: at GOGC=100
// no collection is due before the heap reaches it; at other percentages it
// scales with them.
const runtimeHeapMinimum = 4 << 20
