package logstore

import (
	"testing"
	"time"
)

// TestFsyncHistBuckets checks the bucket a duration lands in (bounds are
// inclusive upper bounds) and the +Inf bucket.
func TestFsyncHistBuckets(t *testing.T) {
	var h LatencyHist
	for _, d := range []time.Duration{0, 50 * time.Microsecond, 51 * time.Microsecond, time.Millisecond, time.Minute} {
		h.Observe(d)
	}
	st := h.Snapshot()
	want := map[time.Duration]uint64{50 * time.Microsecond: 2, 100 * time.Microsecond: 3, time.Millisecond: 4, 10 * time.Second: 4}
	for i, b := range st.Buckets {
		if w, ok := want[b]; ok && st.Counts[i] != w {
			t.Errorf("le %v: %d, want %d", b, st.Counts[i], w)
		}
	}
	if st.Count != 5 || st.Sum != time.Minute+time.Millisecond+101*time.Microsecond {
		t.Errorf("count %d sum %v", st.Count, st.Sum)
	}
}
