package server

import (
	"runtime"
	"testing"
	"time"
)

// TestIdleReleaseTicks walks the sampler's ticks through bursts and quiet
// periods: a release comes once per quiet period of idleReleaseAfter, only
// when the heap holds enough above the live heap.
func TestIdleReleaseTicks(t *testing.T) {
	const mb = 1 << 20
	t0 := time.Unix(1_700_000_000, 0)
	type tick struct {
		at         time.Duration // since t0
		commands   int64
		live, held uint64
		want       bool
	}
	tests := []struct {
		name  string
		ticks []tick
	}{
		{"release after a burst, once", []tick{
			{0, 0, 10 * mb, 40 * mb, false},
			{100 * time.Millisecond, 5000, 10 * mb, 40 * mb, false},  // busy
			{200 * time.Millisecond, 9000, 10 * mb, 40 * mb, false},  // busy: the quiet period starts
			{1100 * time.Millisecond, 9000, 10 * mb, 40 * mb, false}, // quiet for 900 ms
			{1200 * time.Millisecond, 9000, 10 * mb, 40 * mb, true},  // quiet for 1 s
			{1300 * time.Millisecond, 9000, 10 * mb, 40 * mb, false}, // already released
			{5 * time.Second, 9000, 10 * mb, 40 * mb, false},
			{5100 * time.Millisecond, 9001, 10 * mb, 40 * mb, false}, // a command: a new period
			{6100 * time.Millisecond, 9001, 10 * mb, 40 * mb, true},
		}},
		{"too little to give back", []tick{
			{0, 7, 10 * mb, 13 * mb, false},
			{time.Second, 7, 10 * mb, 13 * mb, false}, // 3 MB over: under idleReleaseMin
			{2 * time.Second, 8, 100 * mb, 120 * mb, false},
			{3 * time.Second, 8, 100 * mb, 120 * mb, false}, // 20 MB over 100: under a quarter
			{4 * time.Second, 9, 100 * mb, 130 * mb, false},
			{5 * time.Second, 9, 100 * mb, 130 * mb, true},
		}},
		{"never while busy", []tick{
			{0, 1, 10 * mb, 90 * mb, false},
			{900 * time.Millisecond, 2, 10 * mb, 90 * mb, false},
			{1800 * time.Millisecond, 3, 10 * mb, 90 * mb, false},
			{2700 * time.Millisecond, 4, 10 * mb, 90 * mb, false},
		}},
	}
	for _, tc := range tests {
		var r idleRelease
		for i, tk := range tc.ticks {
			heap := func() (uint64, uint64) { return tk.live, tk.held }
			if got := r.tick(t0.Add(tk.at), tk.commands, heap); got != tk.want {
				t.Fatalf("%s: tick %d at %v: release %v, want %v", tc.name, i, tk.at, got, tk.want)
			}
		}
	}
}

// TestHeapLiveAndHeld checks that the runtime metrics the policy reads
// exist: a live heap, and at least as much held.
func TestHeapLiveAndHeld(t *testing.T) {
	keep := make([]byte, 8<<20)
	runtime.GC()
	live, held := heapLiveAndHeld()
	if live < 8<<20 || held < live {
		t.Fatalf("live %d, held %d", live, held)
	}
	runtime.KeepAlive(keep)
}
