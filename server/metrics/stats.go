package metrics

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Stats are the counters INFO and /metrics report. The command path
// records into them (Called, Rejected, CommandError, ErrorReply and the
// connection counters); INFO and the collector read them. Reset (CONFIG
// RESETSTAT) zeroes the ones Redis resets (not the blocked-clients gauge).
type Stats struct {
	// ConnectionsReceived counts accepted connections.
	ConnectionsReceived atomic.Int64
	// RejectedConnections counts connections refused at maxclients or by
	// protected mode.
	RejectedConnections atomic.Int64
	// TLSConnectionsReceived counts connections accepted on the TLS port
	// (also in ConnectionsReceived).
	TLSConnectionsReceived atomic.Int64
	// TLSHandshakeFailures counts TLS connections whose handshake failed
	// (a refused client certificate, a timeout, a non-TLS client).
	TLSHandshakeFailures atomic.Int64
	// CommandsProcessed counts commands that ran (Called).
	CommandsProcessed atomic.Int64
	// ErrorReplies counts error replies (ErrorReply).
	ErrorReplies atomic.Int64
	// BlockedClients is the number of clients in a blocking command now.
	BlockedClients atomic.Int64
	// LoopClients is the number of clients the event loop serves now,
	// LoopHandoffs how many it gave to goroutines of their own, LoopTurns
	// how many turns it ran with requests (server/loop_linux.go).
	LoopClients, LoopHandoffs, LoopTurns atomic.Int64
	// LatencyTracking is latency-tracking: when false, calls are not added
	// to INFO latencystats' histograms (the server sets it from its config).
	LatencyTracking atomic.Bool
	// NetInput and NetOutput are total_net_input_bytes and
	// total_net_output_bytes: bytes read from and written to clients.
	NetInput, NetOutput atomic.Int64
	// MaxMemory is maxmemory in bytes (0: no limit) and UsedMemory the
	// used_memory the server's 100 ms sampler read last; the server sets
	// both, Reset leaves them.
	MaxMemory, UsedMemory atomic.Int64
	// Retention is the retention sweep's figures (retention.go).
	Retention RetentionStats
	// Delivery counts dead-lettering and visibility redeliveries
	// (delivery.go); Reset leaves them, as Prometheus counters.
	Delivery Delivery
	// TransferHold counts writes held during leadership transfers
	// (transfer.go); Reset leaves them, as Prometheus counters.
	TransferHold TransferHold

	// commands maps a command's full name ("xgroup|create") to its row. It
	// is copy-on-write: Called and Rejected load it without a lock and
	// update the row's atomic counters; a name seen for the first time is
	// added under mu by storing a copy with the new row.
	commands atomic.Pointer[map[string]*commandRow]

	mu        sync.Mutex
	errors    map[string]int64          // by error code ("ERR", "WRONGTYPE")
	cmdErrors map[commandErrorKey]int64 // by command and error code, capped

	// opsSamples is a ring of commands-per-second samples taken every
	// 100ms, like Redis's STATS_METRIC_COMMAND (16 samples).
	opsSamples [16]int64
	opsIdx     int
	opsLast    int64
	opsLastAt  time.Time
	// inRate and outRate sample NetInput and NetOutput the same way.
	inRate, outRate rateRing
}

// rateRing is a ring of per-second rates of a counter, sampled with the
// ops samples (Redis's STATS_METRIC_NET_INPUT/OUTPUT).
type rateRing struct {
	samples [16]float64
	idx     int
	last    int64
}

// add records the counter's value total after elapsed seconds.
func (r *rateRing) add(total int64, secs float64) {
	r.samples[r.idx] = float64(max(total-r.last, 0)) / secs
	r.idx = (r.idx + 1) % len(r.samples)
	r.last = total
}

// mean is the samples' average.
func (r *rateRing) mean() float64 {
	var sum float64
	for _, v := range r.samples {
		sum += v
	}
	return sum / float64(len(r.samples))
}

// latencyBounds are the upper bounds of the command latency histogram's
// buckets (streamd_command_duration_seconds); a last bucket holds the rest.
var latencyBounds = [...]time.Duration{
	50 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
	25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// commandRow is a command's counters: INFO commandstats' figures and the
// latency histogram, all atomic so that recording a call takes no lock.
type commandRow struct {
	calls, usec, rejected, failed atomic.Int64
	// sumNs is the histogram's sum (usec truncates each call, as Redis).
	sumNs atomic.Int64
	// buckets counts calls per latency bucket (not cumulative); the last
	// is slower than every bound.
	buckets [len(latencyBounds) + 1]atomic.Uint64
	// hdr is the fine histogram of INFO latencystats (latency.go), kept
	// while latency-tracking is on.
	hdr hdr
}

// latencyBucket returns the index of d's histogram bucket.
func latencyBucket(d time.Duration) int {
	i := 0
	for i < len(latencyBounds) && d > latencyBounds[i] {
		i++
	}
	return i
}

// commandErrorKey labels streamd_command_errors_by_prefix_total.
type commandErrorKey struct{ cmd, prefix string }

// maxCommandErrorSeries caps the (command, error code) pairs counted one by
// one; later new pairs are summed under {other, other}.
const maxCommandErrorSeries = 256

// NewStats returns zeroed counters.
func NewStats() *Stats {
	st := &Stats{
		errors:    make(map[string]int64),
		cmdErrors: make(map[commandErrorKey]int64),
		opsLastAt: time.Now(),
	}
	st.commands.Store(&map[string]*commandRow{})
	st.LatencyTracking.Store(true)
	return st
}

// Reset is CONFIG RESETSTAT.
func (st *Stats) Reset() {
	st.ConnectionsReceived.Store(0)
	st.RejectedConnections.Store(0)
	st.TLSConnectionsReceived.Store(0)
	st.TLSHandshakeFailures.Store(0)
	st.CommandsProcessed.Store(0)
	st.ErrorReplies.Store(0)
	st.mu.Lock()
	st.commands.Store(&map[string]*commandRow{})
	st.errors = make(map[string]int64)
	st.cmdErrors = make(map[commandErrorKey]int64)
	st.opsSamples = [16]int64{}
	st.opsLast = 0
	st.NetInput.Store(0)
	st.NetOutput.Store(0)
	st.inRate, st.outRate = rateRing{}, rateRing{}
	st.opsLastAt = time.Now()
	st.mu.Unlock()
}

// row returns name's counters, adding a row the first time (a row lost to
// a concurrent CONFIG RESETSTAT only loses that call's counts).
func (st *Stats) row(name string) *commandRow {
	if r := (*st.commands.Load())[name]; r != nil {
		return r
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	old := *st.commands.Load()
	if r := old[name]; r != nil {
		return r
	}
	m := make(map[string]*commandRow, len(old)+1)
	for n, r := range old {
		m[n] = r
	}
	r := &commandRow{}
	m[name] = r
	st.commands.Store(&m)
	return r
}

// Called records a command that ran for d; failed when it replied an error.
// name is a command table name, never client input.
func (st *Stats) Called(name string, d time.Duration, failed bool) {
	st.CalledN(name, d, 1)
	if failed {
		st.row(name).failed.Add(1)
	}
}

// CalledN records n calls of command name that each ran for d and did not
// fail: a pipeline's writes answered together (one set of atomic adds on
// the shared counters instead of n).
func (st *Stats) CalledN(name string, d time.Duration, n int64) {
	st.CommandsProcessed.Add(n)
	r := st.row(name)
	r.calls.Add(n)
	r.usec.Add(n * d.Microseconds())
	r.sumNs.Add(n * int64(d))
	r.buckets[latencyBucket(d)].Add(uint64(n))
	if st.LatencyTracking.Load() {
		r.hdr.recordN(d, n)
	}
}

// Rejected records a command refused before it ran (arity, NOAUTH, ...).
func (st *Stats) Rejected(name string) {
	st.row(name).rejected.Add(1)
}

// CommandError counts an error reply of command name (failed or rejected)
// under its error code, for streamd_command_errors_by_prefix_total. A code
// that does not look like one is counted as "other"; past
// maxCommandErrorSeries pairs, a new pair is counted under {other, other}.
func (st *Stats) CommandError(name, msg string) {
	code, _, _ := strings.Cut(msg, " ")
	if !isErrorCode(code) {
		code = "other"
	}
	k := commandErrorKey{name, code}
	st.mu.Lock()
	if _, ok := st.cmdErrors[k]; !ok && len(st.cmdErrors) >= maxCommandErrorSeries {
		k = commandErrorKey{"other", "other"}
	}
	st.cmdErrors[k]++
	st.mu.Unlock()
}

// namedCommandError is a streamd_command_errors_by_prefix_total sample.
type namedCommandError struct {
	commandErrorKey
	count int64
}

// commandErrors returns the counts by command and error code, sorted.
func (st *Stats) commandErrors() []namedCommandError {
	st.mu.Lock()
	out := make([]namedCommandError, 0, len(st.cmdErrors))
	for k, c := range st.cmdErrors {
		out = append(out, namedCommandError{k, c})
	}
	st.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].cmd != out[j].cmd {
			return out[i].cmd < out[j].cmd
		}
		return out[i].prefix < out[j].prefix
	})
	return out
}

// ErrorReply counts an error reply under its code: the text up to the first
// space, as Redis's errorstats does.
func (st *Stats) ErrorReply(msg string) {
	code, _, _ := strings.Cut(msg, " ")
	st.ErrorReplies.Add(1)
	st.mu.Lock()
	st.errors[code]++
	st.mu.Unlock()
}

// CommandStat is one INFO commandstats line, with the command's latency
// histogram for /metrics.
type CommandStat struct {
	Name string // the command table's name ("xgroup|create")
	// Calls ran, Usec spent in them (truncated per call, as Redis),
	// Rejected before running, Failed with an error reply.
	Calls, Usec, Rejected, Failed int64
	latency                       latencySnapshot
}

// latencySnapshot is a command's latency histogram as Prometheus wants it:
// cumulative counts per bound (latencyBounds), the total count and the sum.
type latencySnapshot struct {
	cumulative [len(latencyBounds)]uint64
	count      uint64
	sumNs      int64
}

// snapshot reads r's counters (each atomically; calls that run meanwhile
// may show in some and not others, which a scrape tolerates). The count is
// the sum of the buckets, so the histogram itself is consistent.
func (r *commandRow) snapshot(name string) CommandStat {
	cs := CommandStat{Name: name, Calls: r.calls.Load(), Usec: r.usec.Load(), Rejected: r.rejected.Load(), Failed: r.failed.Load()}
	ls := &cs.latency
	for i := range r.buckets {
		ls.count += r.buckets[i].Load()
		if i < len(ls.cumulative) {
			ls.cumulative[i] = ls.count
		}
	}
	ls.sumNs = r.sumNs.Load()
	return cs
}

// CommandStats returns the commandstats lines sorted by name.
func (st *Stats) CommandStats() []CommandStat {
	m := *st.commands.Load()
	out := make([]CommandStat, 0, len(m))
	for n, r := range m {
		out = append(out, r.snapshot(n))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NamedCount is an errorstats line: an error code and its count.
type NamedCount struct {
	Name  string
	Count int64
}

// ErrorStats returns the errorstats lines sorted by code.
func (st *Stats) ErrorStats() []NamedCount {
	st.mu.Lock()
	out := make([]NamedCount, 0, len(st.errors))
	for n, c := range st.errors {
		out = append(out, NamedCount{n, c})
	}
	st.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Sample takes an ops/sec sample at now (the server calls it every 100ms).
func (st *Stats) Sample(now time.Time) {
	total := st.CommandsProcessed.Load()
	st.mu.Lock()
	defer st.mu.Unlock()
	elapsed := now.Sub(st.opsLastAt)
	if elapsed <= 0 {
		return
	}
	delta := max(total-st.opsLast, 0)
	st.opsSamples[st.opsIdx] = int64(float64(delta) / elapsed.Seconds())
	st.opsIdx = (st.opsIdx + 1) % len(st.opsSamples)
	st.opsLast, st.opsLastAt = total, now
	st.inRate.add(st.NetInput.Load(), elapsed.Seconds())
	st.outRate.add(st.NetOutput.Load(), elapsed.Seconds())
}

// NetKbps is instantaneous_input_kbps and instantaneous_output_kbps: the
// mean of the samples' bytes per second, over 1024.
func (st *Stats) NetKbps() (in, out float64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.inRate.mean() / 1024, st.outRate.mean() / 1024
}

// OpsPerSec is instantaneous_ops_per_sec: the mean of the samples.
func (st *Stats) OpsPerSec() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	var sum int64
	for _, v := range st.opsSamples {
		sum += v
	}
	return sum / int64(len(st.opsSamples))
}
