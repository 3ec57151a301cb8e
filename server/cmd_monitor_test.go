package server

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// monitorLines reads monitor lines from m until one matches end,
// normalising the time and client ports.
func monitorLines(t *testing.T, m *respConn, end string) []string {
	t.Helper()
	return readMonitor(t, m, end, true)
}

// readMonitor reads monitor lines until one ends with end, normalised or
// as they came.
func readMonitor(t *testing.T, m *respConn, end string, normalise bool) []string {
	t.Helper()
	timeRe := regexp.MustCompile(`^\d{10}\.\d{6} `)
	portRe := regexp.MustCompile(`:\d+\] `)
	var out []string
	for {
		v, err := m.Receive(10 * time.Second)
		if err != nil {
			t.Fatalf("monitor read after %q: %v", out, err)
		}
		if v.Kind != '+' || !timeRe.MatchString(v.Str) {
			t.Fatalf("monitor line %s", v)
		}
		line := v.Str
		if normalise {
			line = portRe.ReplaceAllString(timeRe.ReplaceAllString(line, "T "), ":P] ")
		}
		out = append(out, line)
		if strings.HasSuffix(line, end) {
			return out
		}
	}
}

// TestMonitorVsRedis runs one script on a real redis-server and on streamd
// while a client monitors, and compares the lines (time and ports
// normalised) and the monitor's own replies: what is shown (binary
// arguments, databases, MULTI/EXEC, redaction, blocking reads) and what is
// not (admin commands, refused commands), and how the monitoring
// connection behaves (keyspace refused, MONITOR again ignored, RESET).
func TestMonitorVsRedis(t *testing.T) {
	script := [][]string{
		{"XADD", "s", "1-1", "a b", "x\x01y\"\\\n\r\t\a\bz\xff"},
		{"CONFIG", "GET", "port"},
		{"SLOWLOG", "LEN"},
		{"NOSUCH"},
		{"XLEN"},
		{"SELECT", "3"},
		{"XLEN", "k"},
		{"SELECT", "0"},
		{"MULTI"}, {"XADD", "x", "1-1", "a", "1"}, {"SELECT", "2"}, {"XLEN", "x"}, {"EXEC"},
		{"SELECT", "0"},
		{"MULTI"}, {"NOSUCH"}, {"EXEC"},
		{"AUTH", "foo"},
		{"HELLO", "3", "AUTH", "default", "x"},
		{"HELLO", "2"},
		{"CLIENT", "SETNAME", "nm"},
		{"CLIENT", "INFO"},
		{"CLIENT", "LIST"},
		{"ECHO", ""},
		{"XREAD", "BLOCK", "10", "STREAMS", "s", "$"},
		{"PING", "END"},
	}
	run := func(addr string) (lines, own []string) {
		m, w := dial(t, addr), dial(t, addr)
		if r := mustDo(t, m, "MONITOR"); r != "+OK" {
			t.Fatalf("MONITOR: %s", r)
		}
		for _, args := range script {
			mustValue(t, w, args...)
		}
		lines = monitorLines(t, m, `"PING" "END"`)
		// The monitor's own commands.
		own = append(own, mustDo(t, m, "PING"))
		own = append(own, monitorLines(t, m, `"PING"`)...)
		own = append(own, mustDo(t, m, "XLEN", "s"), mustDo(t, m, "XADD", "s", "*", "f", "v"))
		if err := m.Send("MONITOR"); err != nil { // no reply
			t.Fatal(err)
		}
		own = append(own, mustDo(t, m, "RESET"), mustDo(t, m, "PING"))
		// After RESET nothing more is shown to it.
		mustValue(t, w, "PING", "after")
		own = append(own, mustDo(t, m, "ECHO", "last"))
		return lines, own
	}
	rl, ro := run(startRedis(t))
	_, saddr := startTestServer(t, nil)
	sl, so := run(saddr)
	if strings.Join(rl, "\n") != strings.Join(sl, "\n") {
		t.Errorf("monitor lines differ:\nredis:\n%s\nstreamd:\n%s", strings.Join(rl, "\n"), strings.Join(sl, "\n"))
	}
	if fmt.Sprint(ro) != fmt.Sprint(so) {
		t.Errorf("monitor connection differs:\nredis   %q\nstreamd %q", ro, so)
	}
}

// TestMonitorStreamd: a blocking read shows when it starts; a monitor
// stops on RESET and when its connection closes.
func TestMonitorStreamd(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	m, w, x := dial(t, addr), dial(t, addr), dial(t, addr)
	mustValue(t, m, "MONITOR")
	if !srv.monitors.Active() {
		t.Fatal("no monitor after MONITOR")
	}
	if err := w.Send("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); err != nil {
		t.Fatal(err)
	}
	// Shown while it is still blocked.
	if got := monitorLines(t, m, `"$"`); !strings.HasSuffix(got[0], `"XREAD" "BLOCK" "0" "STREAMS" "s" "$"`) {
		t.Fatalf("lines %q", got)
	}
	// The monitor shows the read before it resolves $: wait until it is
	// blocked, or the XADD could come first and the read wait for the next.
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n := srv.stats.BlockedClients.Load(); n != 1 {
			return fmt.Errorf("%d clients blocked", n)
		}
		return nil
	})
	mustValue(t, x, "XADD", "s", "1-1", "f", "v")
	if v, err := w.Receive(10 * time.Second); err != nil || v.Kind != '*' {
		t.Fatalf("XREAD: %v %v", v, err)
	}
	if got := monitorLines(t, m, `"v"`); len(got) != 1 {
		t.Fatalf("lines %q", got)
	}
	mustValue(t, m, "RESET")
	if srv.monitors.Active() {
		t.Fatal("monitor left after RESET")
	}
	mustValue(t, m, "MONITOR")
	m.Close()
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		if srv.monitors.Active() {
			return errors.New("monitor left after close")
		}
		return nil
	})
}

// TestMonitorSlowConsumer: a monitor that does not read is disconnected
// once its pending output passes the push limit; the commands it watches
// are not held up.
func TestMonitorSlowConsumer(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	m, w := dial(t, addr), dial(t, addr)
	mustValue(t, m, "MONITOR")           // and never read again
	arg := string(make([]byte, 256<<10)) // NULs: each is \x00 in the line, 1 MiB a line
	n := 2*pushOutputLimit/(1<<20) + 16  // well past the limit and the socket buffers
	start := time.Now()
	for i := 0; i < n; i++ {
		if v := mustValue(t, w, "ECHO", arg); len(v.Str) != len(arg) {
			t.Fatalf("ECHO %d: %d bytes", i, len(v.Str))
		}
	}
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		if srv.monitors.Active() {
			return errors.New("stalled monitor still attached")
		}
		return nil
	})
	t.Logf("%d MiB of monitor output in %v", n, time.Since(start))
	// Its connection was closed by the server: reading ends in an error.
	m.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 1<<20)
	for {
		if _, err := m.nc.Read(buf); err != nil {
			if strings.Contains(err.Error(), "timeout") {
				t.Fatalf("monitor connection still open: %v", err)
			}
			break
		}
	}
}

// TestMonitorCluster: a command forwarded from a follower to the leader
// shows on the leader's monitors (where it runs), not on the follower's.
func TestMonitorCluster(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	lead, fol := leaderOf(nodes, 0), followersOf(nodes, 0)[0]
	ml, mf := dial(t, lead.addr), dial(t, fol.addr)
	mustValue(t, ml, "MONITOR")
	mustValue(t, mf, "MONITOR")
	c := dial(t, fol.addr)
	if r := mustDo(t, c, "XADD", "s", "1-1", "f", "v"); r != `"1-1"` {
		t.Fatalf("XADD via follower: %s", r)
	}
	mustValue(t, c, "PING", "END")
	onFollower := monitorLines(t, mf, `"PING" "END"`)
	if len(onFollower) != 1 {
		t.Errorf("follower's monitor saw %q", onFollower)
	}
	onLeader := readMonitor(t, ml, `"XADD" "s" "1-1" "f" "v"`, false)
	last := onLeader[len(onLeader)-1]
	if strings.Contains(last, c.nc.LocalAddr().String()) {
		t.Errorf("leader shows the client's own address: %s", last)
	}
}
