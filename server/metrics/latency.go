package metrics

import (
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// hdr is a command's latency histogram for INFO latencystats, laid out as
// Redis's (an HdrHistogram of nanoseconds from 1 ns to 1 s with two
// significant digits): values under 256 ns have a bucket each, and every
// power of two above is split into 128 equal buckets, so a value is known
// to within 1/128 (0.8%). Redis clamps durations into [1 ns, 1 s]; so does
// record.
type hdr struct {
	counts [hdrBuckets]atomic.Uint64
	total  atomic.Uint64
}

const (
	hdrSubBuckets = 256        // Redis's sub_bucket_count for 2 significant digits
	hdrHalf       = 128        // sub-buckets per power of two above the first 256
	hdrMaxNs      = 1000000000 // LATENCY_HISTOGRAM_MAX_VALUE (1 s)
	hdrMaxExp     = 29         // floor(log2(hdrMaxNs))
	hdrBuckets    = hdrSubBuckets + (hdrMaxExp-7)*hdrHalf
)

// hdrIndex is the bucket of a duration of ns nanoseconds (clamped).
func hdrIndex(ns int64) int {
	ns = min(max(ns, 1), hdrMaxNs)
	if ns < hdrSubBuckets {
		return int(ns)
	}
	exp := bits.Len64(uint64(ns)) - 1 // >= 8
	shift := exp - 7
	sub := int(ns >> shift) // in [128, 256)
	return hdrSubBuckets + (exp-8)*hdrHalf + sub - hdrHalf
}

// hdrHighest is the greatest value bucket i holds (HdrHistogram's
// highest_equivalent_value), the figure Redis prints for a percentile.
func hdrHighest(i int) int64 {
	if i < hdrSubBuckets {
		return int64(i)
	}
	j := i - hdrSubBuckets
	exp := j/hdrHalf + 8
	shift := exp - 7
	sub := int64(j%hdrHalf + hdrHalf)
	return (sub << shift) + (1 << shift) - 1
}

// hdrLowest is the smallest value bucket i holds.
func hdrLowest(i int) int64 {
	return hdrHighest(i) - hdrWidth(i) + 1
}

// hdrWidth is how many values bucket i holds.
func hdrWidth(i int) int64 {
	if i < hdrSubBuckets {
		return 1
	}
	return 1 << ((i-hdrSubBuckets)/hdrHalf + 1)
}

func (h *hdr) record(d time.Duration) { h.recordN(d, 1) }

// recordN adds n calls of duration d.
func (h *hdr) recordN(d time.Duration, n int64) {
	h.counts[hdrIndex(int64(d))].Add(uint64(n))
	h.total.Add(uint64(n))
}

// valueAt is hdr_value_at_percentile: the highest equivalent value of the
// bucket where the count reaches percentile p of the total (0 if empty).
func (h *hdr) valueAt(p float64) int64 {
	total := h.total.Load()
	want := int64(min(p, 100)/100*float64(total) + 0.5)
	want = max(want, 1)
	var seen int64
	for i := range h.counts {
		seen += int64(h.counts[i].Load())
		if seen >= want {
			if p == 0 {
				return hdrLowest(i)
			}
			return hdrHighest(i)
		}
	}
	return 0
}

// LatencyStat is one INFO latencystats line: a command and its latency
// percentiles in microseconds, in the order asked.
type LatencyStat struct {
	Name        string
	Percentiles []float64
	Usec        []float64
}

// LatencyStats returns, for every command that ran since the last reset,
// the given percentiles of its latency, sorted by name.
func (st *Stats) LatencyStats(percentiles []float64) []LatencyStat {
	m := *st.commands.Load()
	out := make([]LatencyStat, 0, len(m))
	for n, r := range m {
		if r.hdr.total.Load() == 0 {
			continue
		}
		ls := LatencyStat{Name: n, Percentiles: percentiles}
		for _, p := range percentiles {
			ls.Usec = append(ls.Usec, float64(r.hdr.valueAt(p))/1000)
		}
		out = append(out, ls)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FormatPercentile writes a percentile as Redis's INFO latencystats and
// CONFIG GET latency-tracking-info-percentiles do ("%f" without trailing
// zeros: 50, 99.9).
func FormatPercentile(p float64) string {
	s := strconv.FormatFloat(p, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
