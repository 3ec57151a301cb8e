package server

import (
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/config"
)

const oomText = "(error) OOM command not allowed when used memory > 'maxmemory'."

// usedMemory is INFO memory's used_memory after a collection.
func usedMemory(t *testing.T, c *respConn) int64 {
	t.Helper()
	runtime.GC()
	n, err := strconv.ParseInt(infoFields(t, c, "INFO", "memory")["used_memory"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMaxMemoryOOM fills a server set a few megabytes above its used memory
// with XADDs until they answer OOM; then the commands that do not add data
// (XACK, XDEL, XTRIM, DEL, XRANGE, XREADGROUP) still run, the denyoom ones
// (XGROUP CREATE/CREATECONSUMER, XSETID, COPY, pipelined XADDs) are refused
// and counted as rejected; once the stream is trimmed, XADD runs again (the
// sampler collects the garbage while over the limit). The Go soft memory limit follows maxmemory.
func TestMaxMemoryOOM(t *testing.T) {
	// A durable shard: an in-memory one's log would hold every XADD.
	_, addr := startDurableServer(t, nil)
	c := dial(t, addr)
	defer c.Close()
	if got := mustDo(t, c, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"); got != "+OK" {
		t.Fatal(got)
	}
	limit := usedMemory(t, c) + 4<<20
	if got := mustDo(t, c, "CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10)); got != "+OK" {
		t.Fatalf("CONFIG SET maxmemory: %s", got)
	}
	defer mustDo(t, c, "CONFIG", "SET", "maxmemory", "0")
	if got, want := debug.SetMemoryLimit(-1), GoMemoryLimit(limit); got != want || want != limit+32<<20 {
		t.Errorf("Go memory limit %d, want %d", got, want)
	}
	f := infoFields(t, c, "INFO", "memory")
	if f["maxmemory"] != strconv.FormatInt(limit, 10) || f["maxmemory_policy"] != "noeviction" || !strings.HasSuffix(f["maxmemory_human"], "M") {
		t.Errorf("INFO memory maxmemory %q %q %q", f["maxmemory"], f["maxmemory_human"], f["maxmemory_policy"])
	}
	mustDo(t, c, "CONFIG", "RESETSTAT")
	value := strings.Repeat("v", 64<<10)
	var ids []string
	oom := false
	for i := 0; i < 4000 && !oom; i++ {
		v, err := c.Do("XADD", "s", "*", "f", value)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case v.String() == oomText:
			oom = true
		case v.Kind == '$':
			ids = append(ids, v.Str)
		default:
			t.Fatalf("XADD: %s", v)
		}
	}
	if !oom || len(ids) < 2 {
		t.Fatalf("no OOM after %d XADDs of 64 KiB over a limit of used+4MiB", len(ids))
	}
	for _, args := range [][]string{
		{"XADD", "s", "*", "f", "v"},
		{"XADD", "other", "*", "f", "v"},
		{"XGROUP", "CREATE", "s", "g2", "$"},
		{"XGROUP", "CREATECONSUMER", "s", "g", "alice"},
		{"XSETID", "s", ids[len(ids)-1]},
		{"COPY", "s", "s2"},
	} {
		if got := mustDo(t, c, args...); got != oomText {
			t.Errorf("%q over maxmemory = %s", args, got)
		}
	}
	// Pipelined XADDs are refused one by one, in order.
	var pipe strings.Builder
	for range 3 {
		pipe.WriteString("*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\nf\r\n$1\r\nv\r\n")
	}
	pipe.WriteString("*2\r\n$4\r\nXLEN\r\n$1\r\ns\r\n")
	if err := c.SendRaw([]byte(pipe.String())); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		v, err := c.Receive(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if i < 3 && v.String() != oomText || i == 3 && v.String() != "(integer) "+strconv.Itoa(len(ids)) {
			t.Errorf("pipelined reply %d = %s", i, v)
		}
	}
	// What does not add data still runs.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"XLEN", "s"}, "(integer) " + strconv.Itoa(len(ids))},
		{[]string{"XACK", "s", "g", ids[0]}, "(integer) 0"},
		{[]string{"XDEL", "s", ids[0]}, "(integer) 1"},
		{[]string{"DEL", "nosuchkey"}, "(integer) 0"},
	} {
		if got := mustDo(t, c, tt.args...); got != tt.want {
			t.Errorf("%q over maxmemory = %s, want %s", tt.args, got, tt.want)
		}
	}
	if v, err := c.Do("XRANGE", "s", ids[1], ids[1]); err != nil || len(v.Elems) != 1 || v.Elems[0].Elems[0].Str != ids[1] {
		t.Errorf("XRANGE over maxmemory = %.200s, %v", v, err)
	}
	if v, err := c.Do("XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", "s", ">"); err != nil || v.Kind != '*' || len(v.Elems) != 1 {
		t.Errorf("XREADGROUP over maxmemory = %s, %v", v, err)
	}
	if got := mustDo(t, c, "XACK", "s", "g", ids[1]); got != "(integer) 1" {
		t.Errorf("XACK over maxmemory = %s", got)
	}
	// Refusals are rejected calls, counted under OOM.
	stats := infoFields(t, c, "INFO", "commandstats")
	if !strings.Contains(stats["cmdstat_xadd"], "rejected_calls=") || strings.Contains(stats["cmdstat_xadd"], "rejected_calls=0,") {
		t.Errorf("cmdstat_xadd %q: no rejected calls", stats["cmdstat_xadd"])
	}
	if got := infoFields(t, c, "INFO", "errorstats")["errorstat_OOM"]; got != "count=10" {
		t.Errorf("errorstat_OOM %q, want count=10", got)
	}

	// Drained, the heap shrinks below the limit and XADD runs again.
	if got := mustDo(t, c, "XTRIM", "s", "MAXLEN", "0"); got != "(integer) "+strconv.Itoa(len(ids)-1) {
		t.Errorf("XTRIM = %s", got)
	}
	// No runtime.GC here: the sampler collects while over the limit.
	deadline := time.Now().Add(20 * time.Second)
	for {
		v, err := c.Do("XADD", "s", "*", "f", "v")
		if err != nil {
			t.Fatal(err)
		}
		if v.Kind == '$' {
			break
		}
		if v.String() != oomText || time.Now().After(deadline) {
			t.Fatalf("XADD after XTRIM = %s (used %d, limit %d)", v, usedMemory(t, c), limit)
		}
		time.Sleep(20 * time.Millisecond) // poll: the sampler runs every 100 ms
	}
	if got := mustDo(t, c, "DEL", "s"); got != "(integer) 1" {
		t.Errorf("DEL = %s", got)
	}
	if got := mustDo(t, c, "CONFIG", "SET", "maxmemory", "0"); got != "+OK" {
		t.Fatal(got)
	}
	if got := debug.SetMemoryLimit(-1); got != startMemoryLimit {
		t.Errorf("Go memory limit %d after maxmemory 0, want %d", got, startMemoryLimit)
	}
}

// TestMaxMemoryMulti: over maxmemory, MULTI refuses every command but EXEC,
// DISCARD, QUIT and RESET while queuing (EXEC then answers EXECABORT), and
// an EXEC whose queue holds a denyoom command queued before the limit was
// crossed is refused with the reason; a transaction of reads only runs.
func TestMaxMemoryMulti(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c, admin := dial(t, addr), dial(t, addr)
	defer c.Close()
	defer admin.Close()
	mustDo(t, c, "XADD", "s", "1-1", "f", "v")
	mustDo(t, c, "MULTI")
	mustDo(t, c, "XADD", "s", "*", "f", "v")
	mustDo(t, c, "XLEN", "s")
	// 1 byte: any used memory is over it, at once.
	if got := mustDo(t, admin, "CONFIG", "SET", "maxmemory", "1"); got != "+OK" {
		t.Fatal(got)
	}
	defer mustDo(t, admin, "CONFIG", "SET", "maxmemory", "0")
	mustDo(t, admin, "CONFIG", "RESETSTAT")
	steps := []struct{ cmd, want string }{
		{"EXEC", "(error) EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'."},
		{"MULTI", "+OK"},
		{"PING", oomText},
		{"XRANGE s - +", oomText},
		{"XADD s * f v", oomText},
		{"EXEC", "(error) EXECABORT Transaction discarded because of previous errors."},
		{"MULTI", "+OK"},
		{"DISCARD", "+OK"},
		{"MULTI", "+OK"},
		{"EXEC", "[]"},
		{"XLEN s", "(integer) 1"},
	}
	for _, st := range steps {
		if got := mustDo(t, c, strings.Fields(st.cmd)...); got != st.want {
			t.Errorf("%s = %s, want %s", st.cmd, got, st.want)
		}
	}
	errs := infoFields(t, admin, "INFO", "errorstats")
	if errs["errorstat_OOM"] != "count=3" || errs["errorstat_EXECABORT"] != "count=2" {
		t.Errorf("errorstats %v", errs)
	}
	stats := infoFields(t, admin, "INFO", "commandstats")
	for name, want := range map[string]string{"exec": "rejected_calls=1,failed_calls=1", "ping": "rejected_calls=1,failed_calls=0"} {
		if !strings.Contains(stats["cmdstat_"+name], want) {
			t.Errorf("cmdstat_%s %q, want %s", name, stats["cmdstat_"+name], want)
		}
	}
}

// TestMaxMemoryConfig: CONFIG SET/GET maxmemory with units and Redis's
// errors; maxmemory-policy takes noeviction only; the server's start-up
// maxmemory sets the OOM state and the Go memory limit.
func TestMaxMemoryConfig(t *testing.T) {
	_, addr := startTestServer(t, func(c *config.Config) { c.MaxMemory = 1 })
	c := dial(t, addr)
	defer c.Close()
	defer mustDo(t, c, "CONFIG", "SET", "maxmemory", "0")
	if got := mustDo(t, c, "XADD", "s", "*", "f", "v"); got != oomText {
		t.Errorf("XADD with maxmemory 1 from the start = %s", got)
	}
	if got := debug.SetMemoryLimit(-1); got != GoMemoryLimit(1) {
		t.Errorf("Go memory limit %d, want %d", got, GoMemoryLimit(1))
	}
	for _, tt := range []struct{ value, get string }{{"1gb", "1073741824"}, {"100MB", "104857600"}, {"0", "0"}} {
		if got := mustDo(t, c, "CONFIG", "SET", "maxmemory", tt.value); got != "+OK" {
			t.Errorf("CONFIG SET maxmemory %s = %s", tt.value, got)
		}
		if got := mustDo(t, c, "CONFIG", "GET", "maxmemory"); got != `["maxmemory", "`+tt.get+`"]` {
			t.Errorf("CONFIG GET maxmemory after %s = %s", tt.value, got)
		}
	}
	for _, bad := range []string{"-1", "1.5mb", "lots"} {
		want := "(error) ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"
		if got := mustDo(t, c, "CONFIG", "SET", "maxmemory", bad); got != want {
			t.Errorf("CONFIG SET maxmemory %s = %s", bad, got)
		}
	}
	want := "(error) ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - streamd supports only 'noeviction' " +
		"(streamd never evicts keys)"
	if got := mustDo(t, c, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru"); got != want {
		t.Errorf("CONFIG SET maxmemory-policy allkeys-lru = %s", got)
	}
	if got := mustDo(t, c, "XADD", "s", "*", "f", "v"); !strings.HasPrefix(got, `"`) {
		t.Errorf("XADD with maxmemory 0 = %s", got)
	}
	if got := debug.SetMemoryLimit(-1); got != startMemoryLimit {
		t.Errorf("Go memory limit %d after maxmemory 0, want %d", got, startMemoryLimit)
	}
}

// TestGoMemoryLimit: maxmemory plus a quarter, at least plus 32 MiB, no
// overflow; 0 is the start-up limit.
func TestGoMemoryLimit(t *testing.T) {
	for in, want := range map[int64]int64{1: 1 + 32<<20, 100 << 20: 132 << 20, 1 << 30: 1<<30 + 256<<20, 1<<63 - 10: 1<<63 - 1} {
		if got := GoMemoryLimit(in); got != want {
			t.Errorf("GoMemoryLimit(%d) = %d, want %d", in, got, want)
		}
	}
	if GoMemoryLimit(0) != startMemoryLimit {
		t.Error("GoMemoryLimit(0) is not the start-up limit")
	}
}

// TestMaxMemoryVsRedis runs the same commands over a 1-byte maxmemory on
// redis-server and streamd: the OOM text, what still runs, MULTI's
// queue-time refusals and EXEC's EXECABORT (with the reason for a queue
// holding a denyoom command), CONFIG's replies, and the errorstats and
// commandstats' calls/rejected/failed counts they leave.
func TestMaxMemoryVsRedis(t *testing.T) {
	raddr := startRedis(t)
	_, saddr := startTestServer(t, nil)
	type side struct{ c, admin *respConn }
	sides := []side{{dial(t, raddr), dial(t, raddr)}, {dial(t, saddr), dial(t, saddr)}}
	do := func(admin bool, args ...string) {
		t.Helper()
		var got [2]Value
		for i, s := range sides {
			c := s.c
			if admin {
				c = s.admin
			}
			v, err := c.Do(args...)
			if err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			got[i] = v
		}
		if !got[1].Equal(got[0]) {
			t.Errorf("%q:\n streamd %s\n redis   %s", args, got[1], got[0])
		}
	}
	do(true, "XADD", "s", "1-1", "f", "v")
	do(true, "XADD", "s", "1-2", "f", "v")
	do(true, "XGROUP", "CREATE", "s", "g", "0")
	do(false, "MULTI")
	do(false, "XADD", "s", "2-1", "f", "v")
	do(true, "CONFIG", "SET", "maxmemory", "1")
	do(true, "CONFIG", "RESETSTAT")
	for _, cmd := range []string{
		"EXEC", "XADD s * f v", "XADD s 3-1 f v", "XGROUP CREATE s g2 $", "XGROUP CREATECONSUMER s g c",
		"XSETID s 5-0", "COPY s s2", "XLEN s", "XRANGE s - +", "XREADGROUP GROUP g c COUNT 1 STREAMS s >",
		"XACK s g 1-1", "XDEL s 1-1", "XCLAIM s g c 0 1-2", "XINFO GROUPS s",
		"MULTI", "PING", "XLEN s", "EXEC", "MULTI", "EXEC", "MULTI", "DISCARD",
		"MULTI", "XTRIM s MAXLEN 0", "EXEC", "XTRIM s MAXLEN 0", "DEL s", "EXISTS s",
		"CONFIG GET maxmemory", "CONFIG SET maxmemory lots", "CONFIG SET maxmemory -1",
	} {
		do(false, strings.Fields(cmd)...)
	}
	// The counts: errorstats whole, commandstats without the times.
	counts := func(c *respConn) (map[string]string, map[string]string) {
		errs := infoFields(t, c, "INFO", "errorstats")
		cmds := map[string]string{}
		for k, v := range infoFields(t, c, "INFO", "commandstats") {
			if strings.HasPrefix(k, "cmdstat_config") || strings.HasPrefix(k, "cmdstat_info") || strings.HasPrefix(k, "cmdstat_command") {
				continue
			}
			var kept []string
			for _, f := range strings.Split(v, ",") {
				if strings.HasPrefix(f, "calls=") || strings.HasPrefix(f, "rejected_calls=") || strings.HasPrefix(f, "failed_calls=") {
					kept = append(kept, f)
				}
			}
			cmds[k] = strings.Join(kept, ",")
		}
		return errs, cmds
	}
	rerrs, rcmds := counts(sides[0].admin)
	serrs, scmds := counts(sides[1].admin)
	if !reflect.DeepEqual(serrs, rerrs) {
		t.Errorf("errorstats: streamd %v, redis %v", serrs, rerrs)
	}
	if !reflect.DeepEqual(scmds, rcmds) {
		t.Errorf("commandstats: streamd %v\n redis %v", scmds, rcmds)
	}
	do(true, "CONFIG", "SET", "maxmemory", "0")
	do(false, "XADD", "s", "9-1", "f", "v")
}

// TestMaxMemoryCluster: the node that runs a write decides. A follower
// over its own maxmemory still forwards XADD to the leader, which accepts
// it; a leader over its maxmemory refuses it, forwarded or not, and reads
// through the follower still run.
func TestMaxMemoryCluster(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	leader, follower := dial(t, leaderOf(nodes, 0).addr), dial(t, followersOf(nodes, 0)[0].addr)
	defer leader.Close()
	defer follower.Close()
	mustDo(t, follower, "CONFIG", "SET", "maxmemory", "1")
	if got := mustDo(t, follower, "XADD", "s", "1-1", "f", "v"); got != `"1-1"` {
		t.Errorf("XADD through a follower over its maxmemory = %s", got)
	}
	mustDo(t, follower, "CONFIG", "SET", "maxmemory", "0")
	mustDo(t, leader, "CONFIG", "SET", "maxmemory", "1")
	defer mustDo(t, leader, "CONFIG", "SET", "maxmemory", "0")
	for _, c := range []*respConn{follower, leader} {
		if got := mustDo(t, c, "XADD", "s", "*", "f", "v"); got != oomText {
			t.Errorf("XADD with the leader over maxmemory = %s", got)
		}
	}
	if got := mustDo(t, follower, "XLEN", "s"); got != "(integer) 1" {
		t.Errorf("XLEN through the follower = %s", got)
	}
}
