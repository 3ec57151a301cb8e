package main

// Redis's own tools against the binary, beyond e2e_test.go: `redis-cli
// --stat` prints its table with the server's real figures, and
// redis-benchmark pipelines 16 deep (-P 16) without an error.

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// statRow is one data line of redis-cli --stat.
type statRow struct {
	keys, clients, blocked, requests, delta, connections int64
	mem                                                  string
}

// statLine matches "keys mem clients blocked requests (+delta) connections".
var statLine = regexp.MustCompile(`^(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+) \(\+(\d+)\)\s+(\d+)\s*$`)

// TestRedisCliStat: `redis-cli --stat -i 0.2` against the binary prints the
// two header lines and then one line per interval whose keys, clients,
// blocked and requests are what the server holds: 2 streams, redis-cli plus
// the two clients the test keeps open, one of them blocked in XREAD, and a
// request count that grows by the printed delta (the INFO of each interval,
// plus the XADDs the test sends in between).
func TestRedisCliStat(t *testing.T) {
	cliBin := testutil.RequireTool(t, "redis-cli")
	stdbuf := testutil.RequireTool(t, "stdbuf") // redis-cli block-buffers a pipe
	s := startReady(t, pickPort(t), t.TempDir())
	c := newClient(t, s.port, 0)
	do(t, c, "XADD", "a", "1-1", "f", "v")
	do(t, c, "XADD", "b", "1-1", "f", "v")
	blocker := newClient(t, s.port, 0)
	blockCtx, cancelBlock := context.WithCancel(context.Background())
	defer cancelBlock()
	blockDone := make(chan error, 1)
	go func() { blockDone <- blocker.Do(blockCtx, "XREAD", "BLOCK", 0, "STREAMS", "b", "$").Err() }()
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		info := asStr(t, "INFO", do(t, c, "INFO", "clients"))
		if !strings.Contains(info, "blocked_clients:1\r\n") {
			return fmt.Errorf("XREAD not blocked yet: %q", info)
		}
		return nil
	})

	cmd := exec.Command(stdbuf, "-oL", cliBin, "-p", strconv.Itoa(s.port), "--stat", "-i", "0.2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("redis-cli --stat ended: %v", cmd.Wait())
			}
			return l
		case <-time.After(15 * time.Second):
			t.Fatal("redis-cli --stat printed nothing for 15s")
		}
		return ""
	}
	h1, h2 := next(), next()
	if !strings.HasPrefix(h1, "------- data ------ ---") || !strings.Contains(h1, " load ") {
		t.Fatalf("first header line %q", h1)
	}
	if f := strings.Fields(h2); strings.Join(f, " ") != "keys mem clients blocked requests connections" {
		t.Fatalf("second header line %q", h2)
	}
	var rows []statRow
	for len(rows) < 6 {
		l := next()
		m := statLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("redis-cli --stat line %q does not parse", l)
		}
		n := func(i int) int64 { v, _ := strconv.ParseInt(m[i], 10, 64); return v }
		rows = append(rows, statRow{keys: n(1), mem: m[2], clients: n(3), blocked: n(4), requests: n(5), delta: n(6), connections: n(7)})
		if len(rows) == 3 {
			for i := range 10 {
				do(t, c, "XADD", "a", fmt.Sprintf("2-%d", i), "f", "v")
			}
		}
	}
	t.Logf("redis-cli --stat rows: %+v", rows)
	memRE := regexp.MustCompile(`^\d+(\.\d+)?[BKMG]$`)
	grew := false
	for i, r := range rows {
		// Connections: c, blocker and redis-cli; no other client.
		if r.keys != 2 || r.clients != 3 || r.blocked != 1 || !memRE.MatchString(r.mem) || r.connections < 3 {
			t.Errorf("row %d = %+v, want keys 2, clients 3, blocked 1, a memory figure", i, r)
		}
		if i > 0 {
			if r.requests-rows[i-1].requests != r.delta || r.delta < 1 {
				t.Errorf("row %d: requests %d after %d, printed delta +%d", i, r.requests, rows[i-1].requests, r.delta)
			}
			grew = grew || r.delta >= 11
		}
	}
	if !grew {
		t.Errorf("no interval counted the 10 XADDs: %+v", rows)
	}
	cancelBlock()
	<-blockDone
}

// TestRedisBenchmarkPipelined: redis-benchmark -P 16 for the ping and xadd
// tests and for an explicit XADD: no error line, a result, and every XADD
// stored.
func TestRedisBenchmarkPipelined(t *testing.T) {
	benchBin := testutil.RequireTool(t, "redis-benchmark")
	s := startReady(t, pickPort(t), t.TempDir())
	port := strconv.Itoa(s.port)
	runs := [][]string{
		{"-p", port, "-P", "16", "-t", "ping,xadd", "-n", "20000", "-q"},
		{"-p", port, "-P", "16", "-c", "8", "-n", "40000", "-q", "XADD", "s", "*", "f", "v"},
	}
	for _, args := range runs {
		out, err := exec.Command(benchBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-benchmark %v: %v\n%s", args, err, out)
		}
		text := string(out)
		for _, line := range strings.Split(strings.ReplaceAll(text, "\r", "\n"), "\n") {
			if l := strings.ToLower(line); strings.Contains(l, "err") {
				t.Errorf("redis-benchmark %v printed an error line: %q", args, line)
			}
		}
		if strings.Count(text, "requests per second") < 1 {
			t.Errorf("redis-benchmark %v printed no result:\n%s", args, text)
		}
	}
	c := newClient(t, s.port, 0)
	if n := asInt(t, "XLEN", do(t, c, "XLEN", "s")); n != 40000 {
		t.Errorf("XLEN s = %d after 40000 pipelined XADDs", n)
	}
}
