package metrics

import (
	"testing"
	"time"
)

// TestHdrBuckets: the buckets are Redis's HdrHistogram's (1 ns .. 1 s, two
// significant digits): a value's bucket holds it, and the printed value is
// the bucket's highest, as the figures redis-server prints (4.015 µs for
// 4 µs, 7.007 for 7, 21.119 for 21.1).
func TestHdrBuckets(t *testing.T) {
	for _, c := range []struct{ ns, highest int64 }{
		{1, 1}, {255, 255}, {256, 257}, {4000, 4015}, {7000, 7007}, {21100, 21119}, {2007000, 2007039},
		{hdrMaxNs, 1002438655}, {hdrMaxNs * 5, 1002438655}, {0, 1},
	} {
		i := hdrIndex(c.ns)
		if got := hdrHighest(i); got != c.highest {
			t.Errorf("%d ns: bucket %d highest %d, want %d", c.ns, i, got, c.highest)
		}
		if v := min(max(c.ns, 1), hdrMaxNs); hdrLowest(i) > v || hdrHighest(i) < v {
			t.Errorf("%d ns: bucket %d is [%d, %d]", c.ns, i, hdrLowest(i), hdrHighest(i))
		}
		if i >= hdrBuckets {
			t.Errorf("%d ns: bucket %d out of %d", c.ns, i, hdrBuckets)
		}
	}
	// Every bucket follows the last one.
	for i := 1; i < hdrBuckets; i++ {
		if hdrLowest(i) != hdrHighest(i-1)+1 {
			t.Fatalf("bucket %d starts at %d, bucket %d ends at %d", i, hdrLowest(i), i-1, hdrHighest(i-1))
		}
	}
}

func TestLatencyStats(t *testing.T) {
	st := NewStats()
	for i := 1; i <= 1000; i++ {
		st.Called("xadd", time.Duration(i)*time.Microsecond, false)
	}
	st.Called("ping", 3*time.Microsecond, false)
	got := st.LatencyStats([]float64{0, 50, 99, 99.9, 100})
	if len(got) != 2 || got[0].Name != "ping" || got[1].Name != "xadd" {
		t.Fatalf("LatencyStats = %+v", got)
	}
	// hdr_value_at_percentile: the 500th of 1000 values is 500 µs, in the
	// bucket [499712, 501759] ns (width 2048); the 999th is 999 µs, in
	// [995328, 999423]; p0 is the first bucket's lowest value.
	want := []float64{1, 501.759, 991.231, 999.423, 1003.519}
	for i, w := range want {
		if got[1].Usec[i] != w {
			t.Errorf("xadd p%v = %v, want %v", got[1].Percentiles[i], got[1].Usec[i], w)
		}
	}
	st.LatencyTracking.Store(false)
	st.Called("xlen", time.Microsecond, false)
	if n := len(st.LatencyStats([]float64{50})); n != 2 {
		t.Errorf("latency-tracking no: %d commands tracked, want 2", n)
	}
	st.Reset()
	if n := len(st.LatencyStats([]float64{50})); n != 0 {
		t.Errorf("after RESETSTAT: %d commands", n)
	}
	if FormatPercentile(99.9) != "99.9" || FormatPercentile(50) != "50" || FormatPercentile(0.001) != "0.001" {
		t.Error("FormatPercentile")
	}
}
