package server

import "testing"

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},          // nothing measured yet: the default
		{1 << 10, 600},    // a nearly empty heap: the runtime's heap minimum bounds it
		{1 << 20, 625},    // 1 MB live: 1 + 24 MB (2400 % would set a 96 MB minimum)
		{4 << 20, 600},    // 4 MB live: a goal of 4 + 24 MB
		{12 << 20, 200},   // 12 MB live: 12 + 24 MB
		{gcHeadroom, 100}, // from here on, plain GOGC=100
		{1 << 30, 100},
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestGCPercentForGoal: the goal the runtime derives from the percentage —
// live × (1 + p/100), but never below its heap minimum of 4 MB × p/100 —
// is live + gcHeadroom (within rounding) while the live heap is smaller
// than gcHeadroom, and twice the live heap after.
func TestGCPercentForGoal(t *testing.T) {
	for live := uint64(1); live < 4*gcHeadroom; live = live*5/4 + 1 {
		p := uint64(gcPercentFor(live))
		goal := max(live+live*p/100, runtimeHeapMinimum*p/100)
		want := max(live+gcHeadroom, 2*live)
		if goal > want+want/100 || goal+goal/100 < want {
			t.Fatalf("live %d: %d %%, goal %d, want about %d", live, p, goal, want)
		}
	}
}
