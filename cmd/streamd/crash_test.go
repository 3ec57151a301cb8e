package main

// TestCrashRecovery (issue #3): several clients run a mixed XADD /
// XREADGROUP / XACK / XCLAIM load (single commands and pipelines, with an
// occasional BGSAVE) while the binary is killed with SIGKILL at a random
// moment (and sometimes again while restarting), then restarted; after
// every restart the recovered state is checked against what the clients
// were told:
//
//   - every acknowledged XADD is present exactly once with its ID and fields;
//   - nothing is present that was never sent (fields carry a client/seq tag);
//   - every acknowledged XACK stays acknowledged (the ID is not pending);
//   - a pending entry only leaves the PEL through an XACK that was sent;
//   - a group's last-delivered-id never moves back and covers every
//     acknowledged delivery; entries-read never decreases;
//   - delivery counts never decrease (against earlier checks and against the
//     counts XPENDING showed and acknowledged XCLAIMs implied during load).
//
// The random choices come from one seed, printed at the start; replay with
// -crash.seed=N (or STREAMD_CRASH_SEED). Cycles: -crash.cycles=N (or
// STREAMD_CRASH_CYCLES), 20 by default; `make crash` runs 200. Kill moments
// are seeded delays, so a replay repeats the choices, not the exact timing.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	crashSeedFlag   = flag.Int64("crash.seed", 0, "TestCrashRecovery seed (0: STREAMD_CRASH_SEED or time-based)")
	crashCyclesFlag = flag.Int("crash.cycles", 0, "TestCrashRecovery kill/restart cycles (0: STREAMD_CRASH_CYCLES or 20)")
)

// crashParams resolves the seed and cycle count from flags, then the
// environment, then the defaults.
func crashParams(t *testing.T) (seed int64, cycles int) {
	t.Helper()
	seed, cycles = *crashSeedFlag, *crashCyclesFlag
	if seed == 0 {
		if v := os.Getenv("STREAMD_CRASH_SEED"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("STREAMD_CRASH_SEED=%q: %v", v, err)
			}
			seed = n
		} else {
			seed = time.Now().UnixNano()
		}
	}
	if cycles == 0 {
		if v := os.Getenv("STREAMD_CRASH_CYCLES"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("STREAMD_CRASH_CYCLES=%q: %v", v, err)
			}
			cycles = n
		} else {
			cycles = 20
		}
	}
	return seed, cycles
}

// The load runs on these streams, each with consumer group crashGroup.
var crashStreams = []string{"crash:a", "crash:b"}

const crashGroup = "g"

// crashPad is the deterministic third field of the entry tagged tag.
func crashPad(tag string) string {
	return strings.Repeat(string(rune('a'+len(tag)%26)), 8+len(tag)%13) + tag
}

// streamModel is what the clients were told about one stream.
type streamModel struct {
	delivered map[string]bool  // IDs returned by answered XREADGROUP / XCLAIM
	ackSent   map[string]bool  // IDs an XACK was sent for
	acked     map[string]bool  // IDs whose XACK was answered
	minCount  map[string]int64 // lower bound of each ID's delivery count
	minLastID string           // lower bound of the group's last-delivered-id

	// From the previous check.
	checkedUpTo string           // every entry ≤ this was verified one by one
	checkedN    int64            // number of entries ≤ checkedUpTo
	prevPEL     map[string]int64 // ID → delivery count
	prevLastID  string
	prevRead    int64 // entries-read
}

// crashModel is the clients' shared knowledge; mu guards all of it.
type crashModel struct {
	mu      sync.Mutex
	sent    map[string]string // tag → stream, recorded before the XADD is sent
	added   map[string]string // tag → ID, for answered XADDs
	streams map[string]*streamModel
}

func newCrashModel() *crashModel {
	m := &crashModel{sent: map[string]string{}, added: map[string]string{}, streams: map[string]*streamModel{}}
	for _, s := range crashStreams {
		m.streams[s] = &streamModel{delivered: map[string]bool{}, ackSent: map[string]bool{}, acked: map[string]bool{},
			minCount: map[string]int64{}, minLastID: "0-0", checkedUpTo: "0-0", prevPEL: map[string]int64{}, prevLastID: "0-0"}
	}
	return m
}

// loadRun is one cycle's load: clients stop at the first connection error
// (expected once the server is killed; a failure before that).
type loadRun struct {
	t      *testing.T
	m      *crashModel
	port   int
	killed atomic.Bool
	ops    atomic.Int64 // answered operations, to make sure each cycle did work
	wg     sync.WaitGroup
}

// failed reports err from a client: a server error reply is always a
// failure; a connection error only before the kill. It returns true when
// the client must stop.
func (l *loadRun) failed(who string, err error) bool {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		l.t.Errorf("%s: error reply %v", who, err)
		return true
	}
	if !l.killed.Load() {
		l.t.Errorf("%s: connection error before the kill: %v", who, err)
	}
	return true
}

// producer adds tagged entries, single or pipelined.
func (l *loadRun) producer(ctx context.Context, c *redis.Client, name string, rng *rand.Rand, seq *int) {
	defer l.wg.Done()
	for !l.killed.Load() {
		n := 1
		if rng.Intn(3) == 0 {
			n = 2 + rng.Intn(15)
		}
		tags := make([]string, n)
		keys := make([]string, n)
		l.m.mu.Lock()
		for i := range tags {
			*seq++
			tags[i] = fmt.Sprintf("%s-%d", name, *seq)
			keys[i] = crashStreams[rng.Intn(len(crashStreams))]
			l.m.sent[tags[i]] = keys[i]
		}
		l.m.mu.Unlock()
		cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, tag := range tags {
				p.Do(ctx, "XADD", keys[i], "*", "tag", tag, "stream", keys[i], "pad", crashPad(tag))
			}
			return nil
		})
		l.m.mu.Lock()
		for i, cmd := range cmds {
			if cmd.Err() != nil {
				continue
			}
			if id, ok := cmd.(*redis.Cmd).Val().(string); ok {
				l.m.added[tags[i]] = id
			}
		}
		l.m.mu.Unlock()
		if err != nil && l.failed(name, err) {
			return
		}
		l.ops.Add(1)
	}
}

// consumer reads, acknowledges and claims as consumer name.
func (l *loadRun) consumer(ctx context.Context, c *redis.Client, name string, rng *rand.Rand) {
	defer l.wg.Done()
	mine := map[string][]string{} // stream → IDs this consumer may ack
	for !l.killed.Load() {
		key := crashStreams[rng.Intn(len(crashStreams))]
		sm := l.m.streams[key]
		var err error
		switch r := rng.Intn(10); {
		case r < 5:
			var v any
			v, err = c.Do(ctx, "XREADGROUP", "GROUP", crashGroup, name, "COUNT", 1+rng.Intn(20), "STREAMS", key, ">").Result()
			if errors.Is(err, redis.Nil) {
				err = nil
			}
			if err == nil && v != nil {
				ids, perr := replyIDs(v, true)
				if perr != nil {
					l.t.Errorf("%s: XREADGROUP reply: %v", name, perr)
					return
				}
				l.m.mu.Lock()
				for _, id := range ids {
					sm.delivered[id] = true
					if sm.minCount[id] < 1 {
						sm.minCount[id] = 1
					}
					if cmpID(id, sm.minLastID) > 0 {
						sm.minLastID = id
					}
				}
				l.m.mu.Unlock()
				mine[key] = append(mine[key], ids...)
			}
		case r < 8:
			list := mine[key]
			if len(list) == 0 {
				continue
			}
			n := 1 + rng.Intn(min(len(list), 12))
			rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
			ids := list[:n]
			mine[key] = append([]string(nil), list[n:]...)
			args := []any{"XACK", key, crashGroup}
			l.m.mu.Lock()
			for _, id := range ids {
				sm.ackSent[id] = true
				args = append(args, id)
			}
			l.m.mu.Unlock()
			if err = c.Do(ctx, args...).Err(); err == nil {
				l.m.mu.Lock()
				for _, id := range ids {
					sm.acked[id] = true
				}
				l.m.mu.Unlock()
			}
		default:
			var v any
			v, err = c.Do(ctx, "XPENDING", key, crashGroup, "-", "+", 1+rng.Intn(10)).Result()
			if err != nil {
				break
			}
			rows, ok := v.([]any)
			if !ok {
				l.t.Errorf("%s: XPENDING reply %T", name, v)
				return
			}
			seen := map[string]int64{}
			args := []any{"XCLAIM", key, crashGroup, name, 0}
			l.m.mu.Lock()
			for _, r := range rows {
				row, ok := r.([]any)
				if !ok || len(row) != 4 {
					l.m.mu.Unlock()
					l.t.Errorf("%s: XPENDING row %v", name, r)
					return
				}
				id, _ := row[0].(string)
				cnt, _ := row[3].(int64)
				seen[id] = cnt
				sm.minCount[id] = max(sm.minCount[id], cnt)
				if rng.Intn(2) == 0 {
					args = append(args, id)
				}
			}
			l.m.mu.Unlock()
			if len(args) == 5 {
				continue
			}
			v, err = c.Do(ctx, args...).Result()
			if err != nil {
				break
			}
			ids, perr := replyIDs(v, false)
			if perr != nil {
				l.t.Errorf("%s: XCLAIM reply: %v", name, perr)
				return
			}
			l.m.mu.Lock()
			for _, id := range ids {
				// XCLAIM (without JUSTID) counted one more delivery.
				sm.minCount[id] = max(sm.minCount[id], seen[id]+1)
				sm.delivered[id] = true
			}
			l.m.mu.Unlock()
			mine[key] = append(mine[key], ids...)
		}
		if err != nil && l.failed(name, err) {
			return
		}
		l.ops.Add(1)
	}
}

// replyIDs extracts entry IDs from an XREADGROUP reply (nested under the
// stream name) or an XCLAIM reply (a plain entry list).
func replyIDs(v any, nested bool) ([]string, error) {
	entries := v
	if nested {
		streams, ok := v.([]any)
		if !ok || len(streams) != 1 {
			return nil, fmt.Errorf("want one stream, got %v", v)
		}
		pair, ok := streams[0].([]any)
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("bad stream reply %v", streams[0])
		}
		entries = pair[1]
	}
	list, ok := entries.([]any)
	if !ok {
		return nil, fmt.Errorf("want an entry list, got %T", entries)
	}
	var ids []string
	for _, e := range list {
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("bad entry %v", e)
		}
		id, ok := pair[0].(string)
		if !ok {
			return nil, fmt.Errorf("bad entry ID %v", pair[0])
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// checkRecovered verifies the model's promises against the server on port.
// full: verify every entry (else only those after the previous check, plus
// the count of the older ones).
func checkRecovered(t *testing.T, m *crashModel, port int, cycle int, full bool) {
	t.Helper()
	c := newClient(t, port, 0)
	defer c.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	problems := 0
	errorf := func(format string, args ...any) {
		t.Helper()
		if problems++; problems <= 25 {
			t.Errorf(format, args...)
		} else if problems == 26 {
			t.Errorf("cycle %d: more problems; only the first 25 are shown", cycle)
		}
	}
	for _, key := range crashStreams {
		sm := m.streams[key]
		where := fmt.Sprintf("cycle %d, %s", cycle, key)
		start := "-"
		if !full && sm.checkedUpTo != "0-0" {
			start = "(" + sm.checkedUpTo
		}
		entries := asList(t, "XRANGE", do(t, c, "XRANGE", key, start, "+"))
		xlen := asInt(t, "XLEN", do(t, c, "XLEN", key))
		older := int64(0)
		if start != "-" {
			older = sm.checkedN
		}
		if got := older + int64(len(entries)); got != xlen {
			errorf("%s: XLEN %d, but %d verified entries up to %s and %d after", where, xlen, older, sm.checkedUpTo, len(entries))
		}
		ids := map[string]bool{}
		tags := map[string]bool{}
		last := sm.checkedUpTo
		for _, e := range entries {
			pair := asList(t, "entry", e)
			id := asStr(t, "entry ID", pair[0])
			ids[id] = true
			last = id
			f := asList(t, "fields", pair[1])
			if len(f) != 6 || f[0] != "tag" || f[2] != "stream" || f[4] != "pad" {
				errorf("%s: entry %s has fields %v, never sent", where, id, f)
				continue
			}
			tag := asStr(t, "tag", f[1])
			if sentTo, ok := m.sent[tag]; !ok || sentTo != key || f[3] != key || f[5] != crashPad(tag) {
				errorf("%s: entry %s %v was never sent (sent to %q)", where, id, f, sentTo)
				continue
			}
			if tags[tag] {
				errorf("%s: tag %s present twice (again at %s)", where, tag, id)
			}
			tags[tag] = true
			if want, ok := m.added[tag]; ok && want != id {
				errorf("%s: tag %s was acknowledged as %s, found at %s", where, tag, want, id)
			}
		}
		for tag, id := range m.added {
			if m.sent[tag] != key || (start != "-" && cmpID(id, sm.checkedUpTo) <= 0) {
				continue
			}
			if !tags[tag] {
				errorf("%s: acknowledged XADD %s (tag %s) lost", where, id, tag)
			}
		}

		info := asList(t, "XINFO STREAM", do(t, c, "XINFO", "STREAM", key))
		if added := asInt(t, "entries-added", field(t, "XINFO STREAM", info, "entries-added")); added != xlen {
			errorf("%s: entries-added %d but XLEN %d (nothing is ever deleted here)", where, added, xlen)
		}
		if xlen > 0 {
			if lg := field(t, "XINFO STREAM", info, "last-generated-id"); lg != last {
				errorf("%s: last-generated-id %v, last entry %s", where, lg, last)
			}
		}

		pel := map[string]int64{}
		for _, r := range asList(t, "XPENDING", do(t, c, "XPENDING", key, crashGroup, "-", "+", 1<<40)) {
			row := asList(t, "XPENDING row", r)
			id := asStr(t, "pending ID", row[0])
			cnt := asInt(t, "delivery count", row[3])
			pel[id] = cnt
			if sm.acked[id] {
				errorf("%s: %s acknowledged by XACK but pending again", where, id)
			}
			if cnt < sm.minCount[id] {
				errorf("%s: %s delivery count %d, was at least %d", where, id, cnt, sm.minCount[id])
			}
			if prev, ok := sm.prevPEL[id]; ok && cnt < prev {
				errorf("%s: %s delivery count went back from %d to %d", where, id, prev, cnt)
			}
			if full && !ids[id] {
				errorf("%s: pending %s has no entry", where, id)
			}
		}
		for id := range sm.prevPEL {
			if _, ok := pel[id]; !ok && !sm.ackSent[id] {
				errorf("%s: %s left the PEL without an XACK", where, id)
			}
		}
		for id := range sm.delivered {
			if _, ok := pel[id]; !ok && !sm.ackSent[id] {
				errorf("%s: delivered %s is neither pending nor acknowledged", where, id)
			}
		}

		groups := asList(t, "XINFO GROUPS", do(t, c, "XINFO", "GROUPS", key))
		if len(groups) != 1 {
			t.Fatalf("%s: groups %v", where, groups)
		}
		g := asList(t, "group", groups[0])
		lastID := asStr(t, "last-delivered-id", field(t, "group", g, "last-delivered-id"))
		read, _ := field(t, "group", g, "entries-read").(int64)
		if cmpID(lastID, sm.prevLastID) < 0 {
			errorf("%s: last-delivered-id moved back from %s to %s", where, sm.prevLastID, lastID)
		}
		if cmpID(lastID, sm.minLastID) < 0 {
			errorf("%s: last-delivered-id %s is before the delivered %s", where, lastID, sm.minLastID)
		}
		if read < sm.prevRead {
			errorf("%s: entries-read moved back from %d to %d", where, sm.prevRead, read)
		}
		for id := range pel {
			if cmpID(id, lastID) > 0 {
				errorf("%s: pending %s is after last-delivered-id %s", where, id, lastID)
			}
		}
		sm.prevPEL, sm.prevLastID, sm.prevRead = pel, lastID, read
		sm.checkedUpTo, sm.checkedN = last, xlen
	}
}

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts the binary many times")
	}
	seed, cycles := crashParams(t)
	t.Logf("TestCrashRecovery: seed %d, %d cycles (replay: go test ./cmd/streamd -run TestCrashRecovery -crash.seed=%d -crash.cycles=%d)",
		seed, cycles, seed, cycles)
	fmt.Fprintf(os.Stderr, "TestCrashRecovery seed %d cycles %d\n", seed, cycles)
	// The default (fsync before each reply), and everysec, which must also
	// lose nothing on a process crash (the page cache survives it).
	// Both log stores, each the same way.
	for _, store := range []string{"wal", "bolt"} {
		ls := "log-store " + store + "\n"
		t.Run(store+"/always", func(t *testing.T) { crashCycles(t, seed, cycles, ls) })
		t.Run(store+"/everysec", func(t *testing.T) { crashCycles(t, seed, max(5, cycles/4), ls+"appendfsync everysec\n") })
	}
}

// crashCycles runs the crash test for one configuration (config: config
// file contents, "" for none).
func crashCycles(t *testing.T, seed int64, cycles int, config string) {
	var extra []string
	if config != "" {
		conf := filepath.Join(t.TempDir(), "streamd.conf")
		if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		extra = []string{conf}
	}
	rng := rand.New(rand.NewSource(seed))
	dir := filepath.Join(t.TempDir(), "data")
	port := pickPort(t)
	m := newCrashModel()
	ctx := ctxT(t)

	s := startReady(t, port, dir, extra...)
	c := newClient(t, port, 0)
	for _, key := range crashStreams {
		do(t, c, "XGROUP", "CREATE", key, crashGroup, "0", "MKSTREAM")
	}
	c.Close()

	const producers, consumers = 2, 3
	seqs := make([]int, producers)
	start := time.Now()
	totalOps := int64(0)
	bgsaves, earlyKills := 0, 0
	for cycle := 1; cycle <= cycles && !t.Failed(); cycle++ {
		l := &loadRun{t: t, m: m, port: port}
		var clients []*redis.Client
		for i := range producers {
			cl := newClient(t, port, 0)
			clients = append(clients, cl)
			l.wg.Add(1)
			go l.producer(ctx, cl, fmt.Sprintf("p%d", i), rand.New(rand.NewSource(rng.Int63())), &seqs[i])
		}
		for i := range consumers {
			cl := newClient(t, port, 0)
			clients = append(clients, cl)
			l.wg.Add(1)
			go l.consumer(ctx, cl, fmt.Sprintf("c%d", i), rand.New(rand.NewSource(rng.Int63())))
		}
		minOps := int64(10 + rng.Intn(90))
		delay := time.Duration(rng.Intn(300)) * time.Millisecond
		bgsave := rng.Intn(3) == 0
		// Make sure the cycle did some work, then kill at a seeded moment.
		// (A manual poll: on failure the clients must stop before t.Fatal.)
		for deadline := time.Now().Add(30 * time.Second); l.ops.Load() < minOps; {
			if time.Now().After(deadline) {
				l.killed.Store(true)
				s.kill()
				l.wg.Wait()
				t.Fatalf("cycle %d: only %d answered operations in 30s", cycle, l.ops.Load())
			}
			<-time.After(time.Millisecond)
		}
		if bgsave {
			bgsaves++
			bc := newClient(t, port, 0)
			clients = append(clients, bc)
			r, err := bc.Do(ctx, "BGSAVE").Result()
			if err != nil && !strings.Contains(err.Error(), "already in progress") {
				t.Errorf("cycle %d: BGSAVE: %v", cycle, err)
			} else if err == nil && r != "Background saving started" {
				t.Errorf("cycle %d: BGSAVE = %v", cycle, r)
			}
		}
		<-time.After(delay) // the kill moment (not a wait for state)
		l.killed.Store(true)
		s.kill()
		l.wg.Wait()
		for _, cl := range clients {
			cl.Close()
		}
		totalOps += l.ops.Load()

		// Sometimes kill the restarting server too, while it opens the
		// data directory, before it answers anything.
		s = startServer(t, port, dir, extra...)
		if rng.Intn(5) == 0 {
			<-time.After(time.Duration(rng.Intn(40)) * time.Millisecond)
			earlyKills++
			s.kill()
			s = startServer(t, port, dir, extra...)
		}
		s.waitReady(60 * time.Second)
		checkRecovered(t, m, port, cycle, cycle%10 == 0 || cycle == cycles)
	}

	// Finally a graceful stop (snapshot on SIGTERM) and one more restart.
	s.terminate()
	startReady(t, port, dir, extra...)
	checkRecovered(t, m, port, cycles+1, true)
	m.mu.Lock()
	t.Logf("%d cycles (%d with BGSAVE, %d killed again while restarting), %d operations answered, %d XADDs sent, %d acknowledged, in %v",
		cycles, bgsaves, earlyKills, totalOps, len(m.sent), len(m.added), time.Since(start).Round(time.Millisecond))
	m.mu.Unlock()
}
