package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/config"
	"streamd/replication/state"
)

// TestDumpRestoreAcrossServers: a payload from redis-server is refused by
// streamd and one from streamd by redis-server, both with Redis's text;
// each server restores its own payload (groups, consumers and pending
// entries included, as XINFO STREAM FULL shows them).
func TestDumpRestoreAcrossServers(t *testing.T) {
	p := newDiffPair(t)
	for _, cmd := range [][]string{
		{"XADD", "s", "1-1", "a", "1"}, {"XADD", "s", "2-1", "b", "2"}, {"XADD", "s", "3-1", "c", "3"},
		{"XDEL", "s", "2-1"},
		{"XGROUP", "CREATE", "s", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"},
		{"XGROUP", "CREATE", "s", "h", "$"},
	} {
		p.do(cmd...)
	}
	dump := func(c *respConn) string {
		t.Helper()
		v, err := c.Do("DUMP", "s")
		if err != nil || v.Kind != '$' || v.Nil {
			t.Fatalf("DUMP s: %v %v", v, err)
		}
		return v.Str
	}
	redisPayload, ourPayload := dump(p.redis), dump(p.ours)
	const wrong = "(error) ERR DUMP payload version or checksum are wrong"
	if got := mustDo(t, p.ours, "RESTORE", "x", "0", redisPayload); got != wrong {
		t.Errorf("streamd restoring redis's payload: %s", got)
	}
	if got := mustDo(t, p.redis, "RESTORE", "x", "0", ourPayload); got != wrong {
		t.Errorf("redis restoring streamd's payload: %s", got)
	}
	if got := mustDo(t, p.ours, "RESTORE", "s", "0", ourPayload); got != "(error) BUSYKEY Target key name already exists." {
		t.Errorf("RESTORE onto s: %s", got)
	}
	for _, side := range []struct {
		c       *respConn
		payload string
	}{{p.redis, redisPayload}, {p.ours, ourPayload}} {
		if got := mustDo(t, side.c, "RESTORE", "r", "0", side.payload); got != "+OK" {
			t.Fatalf("RESTORE r: %s", got)
		}
	}
	// The restored stream equals the original on each server, and both
	// servers agree (idle times aside, which tick).
	norm := func(s string) string {
		for _, f := range []string{"seen-time", "active-time", "delivery-time"} {
			if i := strings.Index(s, f); i >= 0 {
				s = s[:i] // stop at the first clock field
			}
		}
		return s
	}
	for _, c := range []*respConn{p.redis, p.ours} {
		a, b := mustDo(t, c, "XINFO", "STREAM", "s", "FULL"), mustDo(t, c, "XINFO", "STREAM", "r", "FULL")
		if norm(a) != norm(b) {
			t.Errorf("restored stream differs:\n s %s\n r %s", a, b)
		}
	}
	p.do("XPENDING", "r", "g") // the summary: the extended form has idle times, which tick
	p.do("XINFO", "GROUPS", "r")
	p.do("XRANGE", "r", "-", "+")
	p.do("RESTORE", "r", "0", ourPayload[:len(ourPayload)-1]+"x", "REPLACE")
	p.do("EXISTS", "r")
}

// TestObjectIdletime: the idle time grows while a key is not used, reads
// and writes reset it, TYPE/TTL/OBJECT do not, and RESTORE IDLETIME sets
// it; MEMORY USAGE answers a real size.
func TestObjectIdletime(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	c := dial(t, addr)
	// idle is OBJECT IDLETIME's answer. The checks allow any delay of
	// the test itself: a touched key is under 50 s idle, an untouched one
	// at least 50.
	idle := func(key string) int64 {
		t.Helper()
		v, err := c.Do("OBJECT", "IDLETIME", key)
		if err != nil || v.Kind != ':' {
			t.Fatalf("OBJECT IDLETIME %s: %v %v", key, v, err)
		}
		return v.Int
	}
	mustDo(t, c, "XADD", "s", "1-1", "f", "v")
	if n := idle("s"); n >= 50 {
		t.Fatalf("OBJECT IDLETIME after XADD: %d", n)
	}
	// Pretend s was last accessed 50 s ago.
	srv.access.set(0, []string{"s"}, time.Now().UnixMilli()-50_000)
	for _, cmd := range [][]string{{"TYPE", "s"}, {"TTL", "s"}, {"EXISTS", "s"}, {"OBJECT", "ENCODING", "s"}, {"MEMORY", "USAGE", "s"}} {
		mustDo(t, c, cmd...)
	}
	if n := idle("s"); n < 50 {
		t.Fatalf("OBJECT IDLETIME after commands that do not touch: %d", n)
	}
	mustDo(t, c, "XLEN", "s")
	if n := idle("s"); n >= 50 {
		t.Fatalf("OBJECT IDLETIME after XLEN: %d", n)
	}
	srv.access.set(0, []string{"s"}, time.Now().UnixMilli()-50_000)
	mustDo(t, c, "TOUCH", "s")
	if n := idle("s"); n >= 50 {
		t.Fatalf("OBJECT IDLETIME after TOUCH: %d", n)
	}
	v, err := c.Do("DUMP", "s")
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDo(t, c, "RESTORE", "r", "0", v.Str, "IDLETIME", "1000"); got != "+OK" {
		t.Fatalf("RESTORE IDLETIME: %s", got)
	}
	if n := idle("r"); n < 1000 || n >= 1050 {
		t.Fatalf("OBJECT IDLETIME after RESTORE IDLETIME 1000: %d", n)
	}
	// A deleted key is forgotten: re-created, it is fresh.
	mustDo(t, c, "DEL", "r")
	mustDo(t, c, "XADD", "r", "1-1", "f", "v")
	if n := idle("r"); n >= 50 {
		t.Fatalf("OBJECT IDLETIME of a re-created key: %d", n)
	}
	usage := mustDo(t, c, "MEMORY", "USAGE", "s")
	if n, err := strconv.Atoi(strings.TrimPrefix(usage, "(integer) ")); err != nil || n < 100 {
		t.Fatalf("MEMORY USAGE s: %s", usage)
	}
}

// TestLatencyMonitor records samples through the dispatcher's hook and
// reads them back with LATEST, HISTORY, GRAPH, DOCTOR and RESET.
func TestLatencyMonitor(t *testing.T) {
	srv, addr := startTestServer(t, func(cfg *config.Config) { cfg.LatencyMonitorThreshold = 10 })
	c := dial(t, addr)
	xadd, xrange := srv.cmds.get("xadd"), srv.cmds.get("xrange")
	srv.noteLatency(xadd, 5*time.Millisecond) // under the threshold
	if got := mustDo(t, c, "LATENCY", "LATEST"); got != "[]" {
		t.Fatalf("LATENCY LATEST before any spike: %s", got)
	}
	before := time.Now().Unix()
	srv.noteLatency(xadd, 30*time.Millisecond)
	srv.noteLatency(xadd, 20*time.Millisecond) // same second (mostly): the worst is kept
	srv.noteLatency(xrange, 15*time.Millisecond)
	after := time.Now().Unix()
	latest, err := c.Do("LATENCY", "LATEST")
	if err != nil || len(latest.Elems) != 2 {
		t.Fatalf("LATENCY LATEST: %v %v", latest, err)
	}
	// [event, time, latest ms, max ms], events by name.
	cmdRow, fastRow := latest.Elems[0].Elems, latest.Elems[1].Elems
	if len(cmdRow) != 4 || cmdRow[0].Str != "command" || cmdRow[1].Int < before || cmdRow[1].Int > after ||
		cmdRow[2].Int != 15 || cmdRow[3].Int != 15 {
		t.Fatalf("LATENCY LATEST command: %v", latest)
	}
	if len(fastRow) != 4 || fastRow[0].Str != "fast-command" || (fastRow[2].Int != 30 && fastRow[2].Int != 20) || fastRow[3].Int != 30 {
		t.Fatalf("LATENCY LATEST fast-command: %v", latest)
	}
	hist, err := c.Do("LATENCY", "HISTORY", "fast-command")
	if err != nil || len(hist.Elems) == 0 || len(hist.Elems) > 2 {
		t.Fatalf("LATENCY HISTORY fast-command: %v %v", hist, err)
	}
	if first := hist.Elems[0].Elems; len(first) != 2 || first[0].Int < before || first[0].Int > after || first[1].Int != 30 {
		t.Fatalf("LATENCY HISTORY fast-command: %v", hist)
	}
	graph := mustDo(t, c, "LATENCY", "GRAPH", "command")
	if !strings.Contains(graph, "command - high 15 ms, low 15 ms (all time high 15 ms)") {
		t.Fatalf("LATENCY GRAPH: %s", graph)
	}
	doctor := mustDo(t, c, "LATENCY", "DOCTOR")
	for _, want := range []string{"1. command: 1 latency spikes (average 15ms, mean deviation 0ms",
		"2. fast-command: ", "Worst all time event 30ms.", "I have a few advices for you"} {
		if !strings.Contains(doctor, want) {
			t.Errorf("LATENCY DOCTOR lacks %q: %s", want, doctor)
		}
	}
	if got := mustDo(t, c, "LATENCY", "RESET", "command", "nosuch"); got != "(integer) 1" {
		t.Fatalf("LATENCY RESET command nosuch: %s", got)
	}
	if got := mustDo(t, c, "LATENCY", "RESET"); got != "(integer) 1" {
		t.Fatalf("LATENCY RESET: %s", got)
	}
	// CONFIG SET 0 turns it off.
	mustDo(t, c, "CONFIG", "SET", "latency-monitor-threshold", "0")
	srv.noteLatency(xadd, time.Second)
	if got := mustDo(t, c, "LATENCY", "LATEST"); got != "[]" {
		t.Fatalf("LATENCY LATEST with the monitor off: %s", got)
	}
}

// TestLatencyGraphRender pins the sparkline against Redis's
// sparklineRender for a known series (four rows, labels below).
func TestLatencyGraphRender(t *testing.T) {
	var q sparkSeq
	for i, v := range []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120} {
		q.add(v, agoLabel(int64(12-i)*10))
	}
	var b strings.Builder
	q.render(&b, 80, 4)
	want := "" +
		"         _o#\n" +
		"      _o#|||\n" +
		"   _o#||||||\n" +
		"_o#|||||||||\n" +
		"            \n" +
		"211111154321\n" +
		"mmmmmmm00000\n" +
		"       sssss\n"
	if b.String() != want {
		t.Fatalf("graph:\n%s\nwant:\n%s", b.String(), want)
	}
	// More samples than columns: a second block after an empty line.
	for i := 0; i < 80; i++ {
		q.add(5, "1s")
	}
	b.Reset()
	q.render(&b, 80, 4)
	if blocks := strings.Split(b.String(), "\n\n"); len(blocks) != 2 || !strings.HasPrefix(blocks[1], strings.Repeat(" ", 12)) {
		t.Fatalf("two blocks expected:\n%s", b.String())
	}
}

// TestMemoryStats checks MEMORY STATS's fields and the doctor's answer.
func TestMemoryStats(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	mustDo(t, c, "XADD", "s", "1-1", "f", "v")
	mustDo(t, c, "EXPIRE", "s", "100")
	v, err := c.Do("MEMORY", "STATS")
	if err != nil || v.Kind != '*' {
		t.Fatalf("MEMORY STATS: %v %v", v, err)
	}
	fields := map[string]Value{}
	var names []string
	for i := 0; i+1 < len(v.Elems); i += 2 {
		fields[v.Elems[i].Str] = v.Elems[i+1]
		names = append(names, v.Elems[i].Str)
	}
	want := "peak.allocated total.allocated startup.allocated replication.backlog clients.slaves clients.normal " +
		"cluster.links aof.buffer lua.caches functions.caches db.0 overhead.total keys.count keys.bytes-per-key " +
		"dataset.bytes dataset.percentage peak.percentage allocator.allocated allocator.active allocator.resident " +
		"allocator-fragmentation.ratio allocator-fragmentation.bytes allocator-rss.ratio allocator-rss.bytes " +
		"rss-overhead.ratio rss-overhead.bytes fragmentation fragmentation.bytes"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("MEMORY STATS fields:\n got %s\nwant %s", got, want)
	}
	if fields["keys.count"].Int != 1 || fields["total.allocated"].Int <= 0 ||
		fields["peak.allocated"].Int < fields["total.allocated"].Int {
		t.Fatalf("MEMORY STATS: %s", v)
	}
	if db, want := fields["db.0"].String(), fmt.Sprintf(`["overhead.hashtable.main", (integer) %d, "overhead.hashtable.expires", (integer) %d, "overhead.hashtable.slot-to-keys", (integer) 0]`,
		state.KeyOverhead, state.ExpireOverhead); db != want {
		t.Fatalf("db.0: %s, want %s", db, want)
	}
	// The key's bytes are in total.allocated: MEMORY USAGE (with its
	// deadline) is within it, beyond the overhead.
	usage, err := c.Do("MEMORY", "USAGE", "s")
	if err != nil || usage.Int <= 0 || fields["dataset.bytes"].Int+fields["overhead.total"].Int != fields["total.allocated"].Int ||
		fields["total.allocated"].Int-fields["startup.allocated"].Int < usage.Int {
		t.Fatalf("MEMORY USAGE s = %v, MEMORY STATS %s", usage, v)
	}
	if got := mustDo(t, c, "MEMORY", "DOCTOR"); !strings.Contains(got, "Sam") {
		t.Fatalf("MEMORY DOCTOR: %s", got)
	}
	if got := mustDo(t, c, "MEMORY", "MALLOC-STATS"); !strings.Contains(got, "HeapAlloc: ") {
		t.Fatalf("MEMORY MALLOC-STATS: %s", got)
	}
	if got := mustDo(t, c, "ROLE"); !strings.HasPrefix(got, `["master", (integer) `) || !strings.HasSuffix(got, ", []]") {
		t.Fatalf("ROLE: %s", got)
	}
}

// TestMemoryDoctorReports checks the doctor's thresholds.
func TestMemoryDoctorReports(t *testing.T) {
	const mb = 1 << 20
	if got := memoryDoctor(memFigures{total: mb}); !strings.HasPrefix(got, "Hi Sam, this instance is empty") {
		t.Errorf("small: %s", got)
	}
	if got := memoryDoctor(memFigures{total: 100 * mb, peak: 100 * mb, allocated: 100 * mb, active: 100 * mb,
		resident: 100 * mb, rss: 100 * mb}); !strings.HasPrefix(got, "Hi Sam, I can't find any memory issue") {
		t.Errorf("healthy: %s", got)
	}
	got := memoryDoctor(memFigures{total: 100 * mb, peak: 200 * mb, allocated: 100 * mb, active: 100 * mb,
		resident: 100 * mb, rss: 300 * mb})
	for _, want := range []string{"Sam, I detected a few issues", " * Peak memory:", " * High total RSS:",
		" * High process RSS overhead:", "I'm here to keep you safe, Sam."} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor lacks %q: %s", want, got)
		}
	}
}

// TestAdminCommandsClusterMode: SWAPDB and COPY to another database are
// refused in cluster mode with Redis's texts; COPY needs both keys in one
// slot; DUMP/RESTORE and COPY work within a slot.
func TestAdminCommandsClusterMode(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.ClusterEnabled = true })
	c := dial(t, addr)
	runSteps(t, c, []step{
		{[]string{"XADD", "{k}a", "1-1", "f", "v"}, `"1-1"`},
		{[]string{"SWAPDB", "0", "1"}, "(error) ERR SWAPDB is not allowed in cluster mode"},
		{[]string{"COPY", "{k}a", "{k}b", "DB", "1"}, "(error) ERR Copying to another database is not allowed in cluster mode"},
		{[]string{"COPY", "{k}a", "other"}, "(error) CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"COPY", "{k}a", "{k}b", "DB", "0"}, "(integer) 1"},
		{[]string{"XLEN", "{k}b"}, "(integer) 1"},
		{[]string{"DEL", "{k}b"}, "(integer) 1"},
		{[]string{"RANDOMKEY"}, `"{k}a"`},
	})
}
