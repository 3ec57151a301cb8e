package server

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The latency monitor, after Redis's latency.c: per event ("command",
// "fast-command"), a ring of the last latencyTSLen samples, one per second
// (the worst of that second), and the all-time worst. Commands that ran
// here and took at least latency-monitor-threshold milliseconds (their own
// time: a blocking command's wait is left out) are recorded; 0 records
// nothing.

// latencyTSLen is LATENCY_TS_LEN: samples kept per event.
const latencyTSLen = 160

// latencySample is one second's worst latency (ms) of an event.
type latencySample struct {
	time    int64 // unix seconds; 0 = empty slot
	latency int64 // ms
}

// latencySeries is one event's ring of samples.
type latencySeries struct {
	idx     int
	max     int64
	samples [latencyTSLen]latencySample
}

// latencyMonitor holds the events; safe for concurrent use.
type latencyMonitor struct {
	// threshold is latency-monitor-threshold + 1 (0 = not loaded yet).
	threshold atomic.Int64
	mu        sync.Mutex
	events    map[string]*latencySeries
}

func newLatencyMonitor() *latencyMonitor {
	return &latencyMonitor{events: map[string]*latencySeries{}}
}

// reload caches latency-monitor-threshold (ms).
func (m *latencyMonitor) reload(ms int64) { m.threshold.Store(ms + 1) }

// thresholdMs returns latency-monitor-threshold, loading it on first use.
func (s *Server) latencyThreshold() int64 {
	t := s.latency.threshold.Load()
	if t == 0 {
		s.latency.reload(s.config().LatencyMonitorThreshold)
		t = s.latency.threshold.Load()
	}
	return t - 1
}

// add records a sample of event at unix second now, as latencyAddSample.
func (m *latencyMonitor) add(event string, ms, now int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.events[event]
	if ts == nil {
		ts = &latencySeries{}
		m.events[event] = ts
	}
	if ms > ts.max {
		ts.max = ms
	}
	prev := (ts.idx + latencyTSLen - 1) % latencyTSLen
	if ts.samples[prev].time == now {
		ts.samples[prev].latency = max(ts.samples[prev].latency, ms)
		return
	}
	ts.samples[ts.idx] = latencySample{time: now, latency: ms}
	ts.idx = (ts.idx + 1) % latencyTSLen
}

// noteLatency is the monitor's hook for a command that ran here and took d
// (its own time): recorded as "fast-command" or "command" when d reaches
// the threshold, as Redis's call() does.
func (s *Server) noteLatency(cmd *Command, d time.Duration) {
	t := s.latencyThreshold()
	if t <= 0 {
		return
	}
	ms := d.Milliseconds()
	if ms < t {
		return
	}
	event := "command"
	if hasFlag(cmd, "fast") {
		event = "fast-command"
	}
	s.latency.add(event, ms, time.Now().Unix())
}

// eventNames returns the events in name order.
func (m *latencyMonitor) eventNames() []string {
	names := make([]string, 0, len(m.events))
	for n := range m.events {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// latest is LATENCY LATEST: per event [name, time, latest ms, max ms].
func (m *latencyMonitor) latest() Array {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := Array{}
	for _, name := range m.eventNames() {
		ts := m.events[name]
		last := ts.samples[(ts.idx+latencyTSLen-1)%latencyTSLen]
		out = append(out, Array{BulkString(name), Int(last.time), Int(last.latency), Int(ts.max)})
	}
	return out
}

// history is LATENCY HISTORY event: [time, ms] oldest first (empty for an
// unknown event).
func (m *latencyMonitor) history(event string) Array {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := Array{}
	ts := m.events[event]
	if ts == nil {
		return out
	}
	for j := 0; j < latencyTSLen; j++ {
		sm := ts.samples[(ts.idx+j)%latencyTSLen]
		if sm.time != 0 {
			out = append(out, Array{Int(sm.time), Int(sm.latency)})
		}
	}
	return out
}

// reset is LATENCY RESET [event…]: how many events were dropped.
func (m *latencyMonitor) reset(events []string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(events) == 0 {
		n := int64(len(m.events))
		m.events = map[string]*latencySeries{}
		return n
	}
	var n int64
	for _, e := range events {
		if _, ok := m.events[e]; ok {
			delete(m.events, e)
			n++
		}
	}
	return n
}

// graph is LATENCY GRAPH event's text, as latencyCommandGenSparkeline
// (false for an unknown event).
func (m *latencyMonitor) graph(event string, now int64) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.events[event]
	if ts == nil {
		return "", false
	}
	var seq sparkSeq
	for j := 0; j < latencyTSLen; j++ {
		sm := ts.samples[(ts.idx+j)%latencyTSLen]
		if sm.time == 0 {
			continue
		}
		seq.add(float64(sm.latency), agoLabel(now-sm.time))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event,
		int64(seq.max), int64(seq.min), ts.max)
	b.WriteString(strings.Repeat("-", latencyGraphCols) + "\n")
	seq.render(&b, latencyGraphCols, 4)
	return b.String(), true
}

// agoLabel is a sample's label: how long ago, in s, m, h or d.
func agoLabel(elapsed int64) string {
	switch {
	case elapsed < 60:
		return fmt.Sprintf("%ds", elapsed)
	case elapsed < 3600:
		return fmt.Sprintf("%dm", elapsed/60)
	case elapsed < 3600*24:
		return fmt.Sprintf("%dh", elapsed/3600)
	}
	return fmt.Sprintf("%dd", elapsed/(3600*24))
}

// latencyGraphCols is LATENCY_GRAPH_COLS.
const latencyGraphCols = 80

// sparkSeq is Redis's sparkline sequence (sparkline.c) with labels.
type sparkSeq struct {
	values   []float64
	labels   []string
	min, max float64
}

func (q *sparkSeq) add(v float64, label string) {
	if len(q.values) == 0 {
		q.min, q.max = v, v
	} else {
		q.min, q.max = min(q.min, v), max(q.max, v)
	}
	q.values = append(q.values, v)
	q.labels = append(q.labels, label)
}

// render is sparklineRender with SPARKLINE_FILL: columns per block of
// rows rows, the labels written downwards under each column.
func (q *sparkSeq) render(b *strings.Builder, columns, rows int) {
	for j := 0; j < len(q.values); j += columns {
		if j != 0 {
			b.WriteByte('\n')
		}
		q.renderRange(b, rows, j, min(columns, len(q.values)-j))
	}
}

func (q *sparkSeq) renderRange(b *strings.Builder, rows, offset, n int) {
	const fill = "_o#"
	const labelMarginTop = 1
	relmax := q.max - q.min
	if relmax == 0 {
		relmax = 1
	}
	steps := len(fill) * rows
	chars := make([]byte, n)
	for row := 0; ; row++ {
		loop := false
		for j := range chars {
			chars[j] = ' '
		}
		for j := 0; j < n; j++ {
			relval := q.values[j+offset] - q.min
			step := int(float64(int(relval*float64(steps))) / relmax)
			step = max(0, min(step, steps-1))
			if row < rows {
				loop = true
				charidx := step - (rows-row-1)*len(fill)
				if charidx >= 0 && charidx < len(fill) {
					chars[j] = fill[charidx]
				} else if charidx >= len(fill) {
					chars[j] = '|'
				}
				continue
			}
			if row-rows < labelMarginTop {
				loop = true
				break
			}
			label := q.labels[j+offset]
			if c := row - rows - labelMarginTop; len(label) > c {
				loop = true
				chars[j] = label[c]
			}
		}
		if !loop {
			return
		}
		b.Write(chars)
		b.WriteByte('\n')
	}
}

// latencyStats is analyzeLatencyForEvent's result.
type latencyStats struct {
	samples, avg, mad, period int64
}

func analyzeLatency(ts *latencySeries, now int64) latencyStats {
	var ls latencyStats
	var sum int64
	for _, sm := range ts.samples {
		if sm.time == 0 {
			continue
		}
		ls.samples++
		sum += sm.latency
		if ls.period == 0 || sm.time < ls.period {
			ls.period = sm.time
		}
	}
	if ls.samples == 0 {
		return ls
	}
	ls.avg = sum / ls.samples
	ls.period = now - ls.period
	if ls.period == 0 {
		ls.period = 1
	}
	sum = 0
	for _, sm := range ts.samples {
		if sm.time != 0 {
			d := ls.avg - sm.latency
			sum += max(d, -d)
		}
	}
	ls.mad = sum / ls.samples
	return ls
}

// doctor is LATENCY DOCTOR's report, as createLatencyReport for the events
// streamd records ("command", "fast-command").
func (s *Server) latencyDoctor(now int64) string {
	m := s.latency
	threshold := s.latencyThreshold()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.events) == 0 && threshold == 0 {
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. " +
			"You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. " +
			"If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	var b strings.Builder
	advices := 0
	var slowlogEnabled, slowlogTuning, slowlogInspect, largeObjects, scheduler bool
	slower, maxLen := s.slowlogSettings()
	for i, name := range m.eventNames() {
		ts := m.events[name]
		if i == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		ls := analyzeLatency(ts, now)
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			i+1, name, ls.samples, ls.avg, ls.mad, float64(ls.period)/float64(ls.samples), ts.max)
		switch name {
		case "command":
			if slower < 0 || maxLen == 0 {
				slowlogEnabled = true
				advices++
			} else if slower/1000 > threshold {
				slowlogTuning = true
				advices++
			}
			slowlogInspect, largeObjects = true, true
			advices += 2
		case "fast-command":
			scheduler = true
			advices++
		}
		b.WriteByte('\n')
	}
	switch {
	case len(m.events) == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	case advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
	default:
		b.WriteString("\nI have a few advices for you:\n\n")
		if slowlogEnabled {
			fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", threshold*1000)
		}
		if slowlogTuning {
			fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", threshold*1000)
		}
		if slowlogInspect {
			b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
		}
		if scheduler {
			b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
				"  1) Lower the system load.\n" +
				"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
				"  3) Check if you have a \"noisy neighbour\" problem.\n" +
				"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
				"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
		}
		if largeObjects {
			b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
		}
	}
	return b.String()
}
