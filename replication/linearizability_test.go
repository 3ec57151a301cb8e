package replication

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"streamd/internal/testutil"
	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

// The linearizability harness: load clients (goroutines) issue XADD, full
// XRANGE and XREADGROUP ">" COUNT 1 + XACK on whichever shard currently leads,
// recording each operation's call and return times and result; the test then
// stops the load, lets the replicas converge, reads the final state from the
// leader and checks (1) every acknowledged XADD is present exactly once, (2)
// no write that failed definitely (NotLeaderError) was applied, (3) the
// replicas' state hashes are equal (converge), and (4) the history is
// linearizable under streamModel (porcupine).

// loadGroup is the consumer group the load's XREADGROUP/XACK use.
const loadGroup = "g"

// clusterView is the load clients' view of the cluster: the shards of the
// nodes the test considers alive. Only the test goroutine touches the
// harness's nodes; it republishes the view after every kill, restart and
// add, and clients read it atomically.
type clusterView struct {
	shards atomic.Pointer[[]*Shard]
}

// publish records the alive nodes' shards.
func (v *clusterView) publish(c *testCluster) {
	var ss []*Shard
	for _, n := range c.nodes {
		if n.alive {
			ss = append(ss, n.shard)
		}
	}
	v.shards.Store(&ss)
}

// leader returns a shard that says it leads (ready to serve), or nil.
func (v *clusterView) leader(r *rand.Rand) *Shard {
	p := v.shards.Load()
	if p == nil {
		return nil
	}
	ss := *p
	off := r.IntN(len(ss) + 1)
	for i := range ss {
		if s := ss[(i+off)%len(ss)]; s.IsLeader() {
			return s
		}
	}
	return nil
}

// recorder collects the history.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
}

func newRecorder() *recorder { return &recorder{start: time.Now()} }

// now is the history's clock (monotonic nanoseconds since start).
func (r *recorder) now() int64 { return int64(time.Since(r.start)) }

// add records an operation and returns its index in the history.
func (r *recorder) add(client int, in opInput, call int64, out opOutput, ret int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
	return len(r.ops) - 1
}

// outcome classifies a replication error.
type outcome int

const (
	applied    outcome = iota // nil error: acknowledged
	notApplied                // a definite failure: the write did not happen
	maybe                     // outcome unknown: it may or may not have been applied
)

// classify maps a proposal error to its outcome: NotLeaderError and
// ErrNoLeader and ErrTransferInProgress say the write was not applied; OutcomeUnknownError and
// ErrShuttingDown that it may have been. Anything else (an engine error, or
// MISCONF, which no test here provokes) is reported as a test error and
// treated as "maybe" so the check stays sound.
func classify(t *testing.T, what string, err error) outcome {
	var nl *NotLeaderError
	var ou *OutcomeUnknownError
	switch {
	case err == nil:
		return applied
	case errors.As(err, &nl), errors.Is(err, ErrNoLeader), errors.Is(err, ErrTransferInProgress), errors.Is(err, ErrLogBusy):
		return notApplied
	case errors.As(err, &ou), errors.Is(err, ErrShuttingDown):
		return maybe
	}
	t.Errorf("%s: unexpected error %v", what, err)
	return maybe
}

// addRecord is one XADD issued by the load.
type addRecord struct {
	key     string
	tag     uint64
	outcome outcome
	id      streams.ID // when applied
	op      int        // index in the history, -1 if not recorded
}

// servedOp is an operation a shard acknowledged (a write) or answered (a
// read), with its call time.
type servedOp struct {
	at   *Shard
	call int64
	read bool
	desc string
}

// noteServed records that s served an operation called at call.
func (g *loadGen) noteServed(s *Shard, call int64, read bool, desc string) {
	g.mu.Lock()
	g.served = append(g.served, servedOp{s, call, read, desc})
	g.mu.Unlock()
}

// servedAtSince lists the reads (read set) or writes s answered or
// acknowledged that were called at or after since (history time).
func (g *loadGen) servedAtSince(s *Shard, read bool, since int64) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, op := range g.served {
		if op.at == s && op.read == read && op.call >= since {
			out = append(out, op.desc)
		}
	}
	return out
}

// loadGen drives clients against a cluster view.
type loadGen struct {
	t    *testing.T
	view *clusterView
	rec  *recorder
	keys []string

	stopCh   chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup

	mu     sync.Mutex
	adds   []*addRecord
	served []servedOp // acknowledged writes and served reads, by shard

	acked    atomic.Int64 // acknowledged XADDs
	unknown  atomic.Int64 // operations with an unknown outcome
	rejected atomic.Int64 // definite failures (not leader)
	reads    atomic.Int64 // XRANGEs recorded
	delivers atomic.Int64 // XREADGROUPs recorded
}

// startLoad creates the keys and their group at the current leader, then
// starts clients goroutines (the load stops with stop).
func startLoad(t *testing.T, c *testCluster, view *clusterView, keys []string, clients int) *loadGen {
	t.Helper()
	l := c.leader()
	for _, k := range keys {
		if _, err := l.shard.Propose(wire.XGroupCreate{Base: wire.Base{Key: k}, Group: loadGroup, MkStream: true, EntriesRead: -1}); err != nil {
			t.Fatalf("create group on %s: %v", k, err)
		}
	}
	g := &loadGen{t: t, view: view, rec: newRecorder(), keys: keys, stopCh: make(chan struct{})}
	for i := range clients {
		g.wg.Add(1)
		go g.client(i)
	}
	t.Cleanup(g.stop) // runs before the cluster's cleanup closes the nodes
	return g
}

func (g *loadGen) stopped() bool {
	select {
	case <-g.stopCh:
		return true
	default:
		return false
	}
}

// stop stops the clients and waits for them (idempotent).
func (g *loadGen) stop() {
	g.stopOnce.Do(func() { close(g.stopCh) })
	g.wg.Wait()
}

// minPhase is the least time a phase of a fault test runs under load.
func minPhase() time.Duration {
	if testing.Short() {
		return 150 * time.Millisecond
	}
	return 500 * time.Millisecond
}

// waitAcked waits until n more XADDs than now have been acknowledged, and
// at least minPhase has passed, so that each phase of a test runs under load.
func (g *loadGen) waitAcked(n int64, what string) {
	g.t.Helper()
	target := g.acked.Load() + n
	until := time.Now().Add(minPhase())
	testutil.Eventually(g.t, 20*time.Second, 5*time.Millisecond, func() error {
		if got := g.acked.Load(); got < target || time.Now().Before(until) {
			return fmt.Errorf("%s: %d XADDs acknowledged, want %d (unknown %d, rejected %d)",
				what, got, target, g.unknown.Load(), g.rejected.Load())
		}
		return nil
	})
}

// pause paces a client (load generation, not waiting for state).
func (g *loadGen) pause(r *rand.Rand) { time.Sleep(time.Duration(200+r.IntN(800)) * time.Microsecond) }

// client is one load client: a loop of random operations.
func (g *loadGen) client(id int) {
	defer g.wg.Done()
	r := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))
	var seq uint64
	for !g.stopped() {
		key := g.keys[r.IntN(len(g.keys))]
		s := g.view.leader(r)
		if s == nil {
			time.Sleep(2 * time.Millisecond) // no leader right now: pace the retry
			continue
		}
		switch p := r.IntN(100); {
		case p < 55:
			seq++
			g.xadd(s, id, key, uint64(id+1)<<32|seq)
		case p < 80:
			g.xrange(s, id, key)
		default:
			g.xreadgroup(s, r, id, key)
		}
		g.pause(r)
	}
}

func (g *loadGen) xadd(s *Shard, client int, key string, tag uint64) {
	cmd := wire.XAdd{Base: wire.Base{Key: key}, ID: streams.IDSpec{Auto: true}, Trim: wire.Trim{Limit: -1},
		Fields: [][]byte{[]byte("t"), []byte(strconv.FormatUint(tag, 10))}}
	call := g.rec.now()
	res, err := s.Propose(cmd)
	ret := g.rec.now()
	a := &addRecord{key: key, tag: tag, outcome: classify(g.t, "XADD", err), op: -1}
	in := opInput{kind: opXAdd, key: key, tag: tag}
	switch a.outcome {
	case applied:
		id, ok := res.(streams.ID)
		if !ok {
			g.t.Errorf("XADD answered %T %v", res, res)
			return
		}
		a.id = id
		g.acked.Add(1)
		g.noteServed(s, call, false, fmt.Sprintf("XADD %s -> %v", key, id))
		a.op = g.rec.add(client, in, call, opOutput{id: id}, ret)
	case maybe:
		g.unknown.Add(1)
		a.op = g.rec.add(client, in, call, opOutput{unknown: true}, maxReturn)
	case notApplied:
		g.rejected.Add(1)
	}
	g.mu.Lock()
	g.adds = append(g.adds, a)
	g.mu.Unlock()
}

// xrange reads the whole stream at a leader after confirming leadership
// (VerifyRead); a read that cannot confirm is not served and not recorded.
func (g *loadGen) xrange(s *Shard, client int, key string) {
	call := g.rec.now()
	if err := s.VerifyRead(); err != nil {
		return
	}
	res, err := s.Query(wire.XRange{Base: wire.Base{Key: key}, Start: streams.MinID, End: streams.MaxID, Count: -1})
	ret := g.rec.now()
	if err != nil {
		g.t.Errorf("XRANGE %s: %v", key, err)
		return
	}
	es, _ := res.([]streams.Entry)
	n, sum, err := streamDigest(es)
	if err != nil {
		g.t.Errorf("XRANGE %s: %v", key, err)
		return
	}
	g.reads.Add(1)
	g.noteServed(s, call, true, fmt.Sprintf("XRANGE %s -> %d entries", key, n))
	g.rec.add(client, opInput{kind: opXRange, key: key}, call, opOutput{n: n, sum: sum}, ret)
}

// readAt starts a reader that issues full XRANGEs only at s (VerifyRead,
// then Query) until the load stops; the reads it is served are recorded
// under the given client id, so a stale read at s fails the check.
func (g *loadGen) readAt(s *Shard, client int) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		r := rand.New(rand.NewPCG(uint64(client), uint64(time.Now().UnixNano())))
		for !g.stopped() {
			g.xrange(s, client, g.keys[r.IntN(len(g.keys))])
			g.pause(r)
		}
	}()
}

// xreadgroup delivers the next entry to this client's consumer and, if it
// got one, acknowledges it (retrying while the failure is definite).
func (g *loadGen) xreadgroup(s *Shard, r *rand.Rand, client int, key string) {
	cmd := wire.XReadGroup{Group: loadGroup, Consumer: "c" + strconv.Itoa(client), Count: 1,
		Streams: []wire.ReadStream{{Key: key, New: true}}}
	in := opInput{kind: opXReadGroup, key: key}
	call := g.rec.now()
	res, err := s.Propose(cmd)
	ret := g.rec.now()
	switch classify(g.t, "XREADGROUP", err) {
	case notApplied:
		g.rejected.Add(1)
		return
	case maybe:
		g.unknown.Add(1)
		g.rec.add(client, in, call, opOutput{unknown: true}, maxReturn)
		return
	}
	g.noteServed(s, call, false, "XREADGROUP "+key)
	kes, _ := res.([]state.KeyEntries)
	if len(kes) == 0 {
		g.delivers.Add(1)
		g.rec.add(client, in, call, opOutput{}, ret)
		return
	}
	if len(kes) != 1 || len(kes[0].Entries) != 1 {
		g.t.Errorf("XREADGROUP COUNT 1 answered %+v", kes)
		return
	}
	e := kes[0].Entries[0]
	tag, err := entryTag(e)
	if err != nil {
		g.t.Errorf("XREADGROUP: %v", err)
		return
	}
	g.delivers.Add(1)
	g.rec.add(client, in, call, opOutput{hasID: true, id: e.ID, tag: tag}, ret)

	ack := opInput{kind: opXAck, key: key, id: e.ID}
	for !g.stopped() {
		call := g.rec.now()
		res, err := s.Propose(wire.XAck{Base: wire.Base{Key: key}, Group: loadGroup, IDs: []streams.ID{e.ID}})
		ret := g.rec.now()
		switch classify(g.t, "XACK", err) {
		case applied:
			n, _ := res.(int64)
			g.noteServed(s, call, false, fmt.Sprintf("XACK %s %v -> %d", key, e.ID, n))
			g.rec.add(client, ack, call, opOutput{n: int(n)}, ret)
			return
		case maybe:
			g.unknown.Add(1)
			g.rec.add(client, ack, call, opOutput{unknown: true}, maxReturn)
			return
		}
		g.rejected.Add(1)
		g.pause(r)
		if s = g.view.leader(r); s == nil {
			time.Sleep(2 * time.Millisecond)
			s = g.view.leader(r)
		}
		if s == nil {
			return // the entry stays pending: the final group state says so
		}
	}
}

// finalState is a key's state read at the leader once the load stopped.
type finalState struct {
	entries   []streams.Entry
	delivered streams.ID
	pending   []streams.ID
}

// readFinal reads every key at the leader (after VerifyRead) and records the
// reads in the history.
func (g *loadGen) readFinal(c *testCluster) map[string]finalState {
	t := g.t
	t.Helper()
	out := map[string]finalState{}
	var l *testNode
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		l = c.leader()
		return l.shard.VerifyRead()
	})
	for _, k := range g.keys {
		call := g.rec.now()
		if err := l.shard.VerifyRead(); err != nil {
			t.Fatalf("final read at %s: %v", l.id, err)
		}
		res, err := l.shard.Query(wire.XRange{Base: wire.Base{Key: k}, Start: streams.MinID, End: streams.MaxID, Count: -1})
		if err != nil {
			t.Fatal(err)
		}
		es, _ := res.([]streams.Entry)
		gres, err := l.shard.Query(wire.XInfoGroups{Base: wire.Base{Key: k}})
		if err != nil {
			t.Fatal(err)
		}
		pres, err := l.shard.Query(wire.XPending{Base: wire.Base{Key: k}, Group: loadGroup, IdleMs: -1,
			Start: streams.MinID, End: streams.MaxID, Count: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		ret := g.rec.now()
		fs := finalState{entries: es}
		for _, gi := range gres.([]state.GroupInfo) {
			if gi.Name == loadGroup {
				fs.delivered = gi.LastDeliveredID
			}
		}
		for _, p := range pres.([]state.PendingEntry) {
			fs.pending = append(fs.pending, p.ID)
		}
		slices.SortFunc(fs.pending, streams.ID.Compare)
		n, sum, err := streamDigest(es)
		if err != nil {
			t.Fatal(err)
		}
		g.rec.add(0, opInput{kind: opXRange, key: k}, call, opOutput{n: n, sum: sum}, ret)
		g.rec.add(0, opInput{kind: opGroupState, key: k}, call, opOutput{delivered: fs.delivered, pending: fs.pending}, ret)
		out[k] = fs
	}
	return out
}

// finish stops the load and runs the end-of-test checks: replicas converge,
// every acknowledged XADD is in the leader's stream exactly once with its
// ID, no definitely failed XADD is, and the history is linearizable.
func (g *loadGen) finish(c *testCluster) map[string]finalState {
	t := g.t
	t.Helper()
	g.stop()
	c.converge()
	final := g.readFinal(c)
	c.converge() // the final reads changed nothing; the hashes stay equal

	type where struct {
		key string
		id  streams.ID
	}
	seen := map[uint64]where{}
	for k, fs := range final {
		for _, e := range fs.entries {
			tag, err := entryTag(e)
			if err != nil {
				t.Fatal(err)
			}
			if w, dup := seen[tag]; dup {
				t.Errorf("tag %d present twice: %s %v and %s %v", tag, w.key, w.id, k, e.ID)
			}
			seen[tag] = where{k, e.ID}
		}
	}
	g.mu.Lock()
	adds := g.adds
	g.mu.Unlock()
	var nAcked, nMaybeIn, nMaybeOut int
	for _, a := range adds {
		w, in := seen[a.tag]
		switch a.outcome {
		case applied:
			nAcked++
			if !in {
				t.Errorf("acknowledged XADD %s %v (tag %d) is missing", a.key, a.id, a.tag)
			} else if w.key != a.key || w.id != a.id {
				t.Errorf("acknowledged XADD %s %v (tag %d) is at %s %v", a.key, a.id, a.tag, w.key, w.id)
			}
		case notApplied:
			if in {
				t.Errorf("XADD %s (tag %d) failed with a definite error but is present at %v", a.key, a.tag, w.id)
			}
		case maybe:
			// Resolve the unknown XADD with the final state: in it, the
			// entry was applied with that ID (at an unknown time); absent,
			// it was not (nothing deletes entries in these tests).
			g.rec.mu.Lock()
			if in {
				nMaybeIn++
				out := g.rec.ops[a.op].Output.(opOutput)
				out.hasID, out.id = true, w.id
				g.rec.ops[a.op].Output = out
			} else {
				nMaybeOut++
			}
			g.rec.mu.Unlock()
		}
		delete(seen, a.tag)
	}
	for tag, w := range seen {
		t.Errorf("entry %s %v (tag %d) was never proposed", w.key, w.id, tag)
	}
	t.Logf("history: %d ops; XADD acknowledged %d, unknown %d (applied %d), rejected %d; XRANGE %d; XREADGROUP %d; unknown ops %d",
		len(g.rec.ops), nAcked, nMaybeIn+nMaybeOut, nMaybeIn, g.rejected.Load(), g.reads.Load(), g.delivers.Load(), g.unknown.Load())
	checkLinearizable(t, g.rec.ops)
	return final
}

// checkLinearizable runs porcupine on the history. Illegal fails the test
// and writes the visualization to the test's temporary directory; a check
// that times out is reported but cannot conclude.
func checkLinearizable(t *testing.T, ops []porcupine.Operation) {
	t.Helper()
	switch res, path := checkHistory(t, ops); res {
	case porcupine.Ok:
	case porcupine.Illegal:
		t.Fatalf("history is not linearizable (visualization: %s)", path)
	default:
		t.Logf("linearizability check timed out: inconclusive (%d operations)", len(ops))
	}
}

// checkHistory runs porcupine on ops (30s timeout) and, when the history is
// Illegal, writes the visualization and returns its path. The file goes
// to a fresh directory under os.TempDir, not t.TempDir, which is removed
// when the test ends: it is for reading afterwards.
func checkHistory(t *testing.T, ops []porcupine.Operation) (porcupine.CheckResult, string) {
	t.Helper()
	model := streamModel.ToModel()
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(model, ops, 30*time.Second)
	t.Logf("porcupine: %v in %v (%d operations)", res, time.Since(start).Round(time.Millisecond), len(ops))
	if res != porcupine.Illegal {
		return res, ""
	}
	dir, err := os.MkdirTemp("", "streamd-porcupine-")
	if err != nil {
		t.Logf("no directory for the visualization: %v", err)
		return res, ""
	}
	path := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".html")
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		t.Logf("visualization: %v", err)
		return res, ""
	}
	return res, path
}

// TestLinearizabilityCheckerCatchesFaults runs the load on a healthy
// cluster (its history passes), then checks the checker is not vacuous on
// such a real history: a stale read injected after the final read, or an
// acknowledged XADD that is missing from the stream, makes it Illegal, and
// the visualization is written.
func TestLinearizabilityCheckerCatchesFaults(t *testing.T) {
	fc := newFaultCluster(t, 3, nil)
	g := fc.load(t)
	g.waitAcked(phaseAcks(), "under load")
	final := g.finish(fc.testCluster)
	ops := slices.Clone(g.rec.ops)
	end := g.rec.now()

	es := final["a"].entries
	if len(es) < 2 {
		t.Fatalf("stream a has %d entries", len(es))
	}
	n, sum, err := streamDigest(es[:len(es)/2])
	if err != nil {
		t.Fatal(err)
	}
	stale := append(slices.Clone(ops), porcupine.Operation{ClientId: 0, Input: opInput{kind: opXRange, key: "a"},
		Call: end + 1, Output: opOutput{n: n, sum: sum}, Return: end + 2})
	res, path := checkHistory(t, stale)
	if res != porcupine.Illegal {
		t.Fatalf("a stale read after the final read: %v, want Illegal", res)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("visualization %q: %v", path, err)
	}
	os.RemoveAll(filepath.Dir(path))

	// Acknowledged before anything else, with the smallest ID (so only
	// its absence from every later read is wrong).
	lost := append(slices.Clone(ops), porcupine.Operation{ClientId: 0, Input: opInput{kind: opXAdd, key: "a", tag: 1 << 62},
		Call: 0, Output: opOutput{id: streams.ID{Seq: 1}}, Return: 1})
	if res, path := checkHistory(t, lost); res != porcupine.Illegal {
		t.Fatalf("an acknowledged XADD missing from the stream: %v, want Illegal", res)
	} else {
		os.RemoveAll(filepath.Dir(path))
	}
}
