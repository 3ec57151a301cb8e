package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"streamd/internal/testutil"
)

// TestAcceptOutOfFiles: with its open-file limit lowered to 64 while it
// runs, a server flooded with connections gets "too many open files" from
// accept; it logs it, keeps running, and serves again once connections
// close (it used to exit).
func TestAcceptOutOfFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	port := pickPort(t)
	s := startReady(t, port, t.TempDir())
	lim := unix.Rlimit{Cur: 64, Max: 64}
	if err := unix.Prlimit(s.cmd.Process.Pid, unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		t.Skipf("prlimit: %v", err)
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 100 {
		c, err := net.DialTimeout("tcp", s.addr(), time.Second)
		if err != nil {
			break // the listen backlog is full too
		}
		conns = append(conns, c)
	}
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if s.exited() {
			t.Fatalf("streamd exited when out of file descriptors: %v\n%s", s.err, s.logs())
		}
		if !strings.Contains(s.logs(), "too many open files") {
			return fmt.Errorf("no accept failure logged yet (%d connections open)", len(conns))
		}
		return nil
	})
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	testutil.Eventually(t, 20*time.Second, 50*time.Millisecond, func() error {
		if s.exited() {
			t.Fatalf("streamd exited: %v\n%s", s.err, s.logs())
		}
		return ping(s.addr())
	})
}

// haveSysResource reports whether this process holds CAP_SYS_RESOURCE,
// which lets it (and the streamd it starts) raise its hard open-file limit.
func haveSysResource() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<unix.CAP_SYS_RESOURCE) != 0
		}
	}
	return false
}

// underFileLimit returns the wrapper that runs streamd with its open-file
// limit at soft:hard and, unless mayRaise, without CAP_SYS_RESOURCE (which
// would let it raise the hard limit), or skips the test without
// prlimit/setpriv.
func underFileLimit(t *testing.T, soft, hard int, mayRaise bool) []string {
	t.Helper()
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) not installed")
	}
	w := []string{"prlimit", fmt.Sprintf("--nofile=%d:%d", soft, hard)}
	if haveSysResource() && !mayRaise {
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("CAP_SYS_RESOURCE held, and no setpriv (util-linux) to drop it")
		}
		w = append(w, "setpriv", "--bounding-set=-sys_resource")
	}
	return w
}

// startUnderFileLimit starts streamd under underFileLimit's wrapper and
// waits until it answers; it returns the process and its port.
func startUnderFileLimit(t *testing.T, soft, hard int, mayRaise bool) (*proc, int) {
	t.Helper()
	if testing.Short() {
		t.Skip("process test")
	}
	port := pickPort(t)
	s := startServerVia(t, underFileLimit(t, soft, hard, mayRaise), port, t.TempDir())
	s.waitReady(60 * time.Second)
	return s, port
}

// TestMaxClientsFitsFileLimit: started with an open-file limit of 256 it
// cannot raise, streamd lowers maxclients to 224 (256 - 32) as Redis does,
// logs Redis's three lines, reports 224 on CONFIG GET, and refuses a
// CONFIG SET maxclients the limit cannot hold with Redis's error.
func TestMaxClientsFitsFileLimit(t *testing.T) {
	s, port := startUnderFileLimit(t, 256, 256, false)
	s.requireLogs(
		`"You requested maxclients of 10000 requiring at least 10032 max file descriptors."`,
		`"Server can't set maximum open files to 10032 because of OS error: Operation not permitted."`,
		`"Current maximum open files is 256. maxclients has been reduced to 224 to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'."`)
	c := newClient(t, port, 0)
	if got := fmt.Sprint(do(t, c, "CONFIG", "GET", "maxclients")); got != "[maxclients 224]" {
		t.Errorf("CONFIG GET maxclients = %s, want [maxclients 224]", got)
	}
	err := c.Do(ctxT(t), "CONFIG", "SET", "maxclients", "1000").Err()
	const refused = "ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating system is not able to handle the specified number of clients, try with 224"
	if err == nil || err.Error() != refused {
		t.Errorf("CONFIG SET maxclients 1000: %v, want %q", err, refused)
	}
	if got := fmt.Sprint(do(t, c, "CONFIG", "GET", "maxclients")); got != "[maxclients 224]" {
		t.Errorf("after the refused CONFIG SET: %s", got)
	}
	do(t, c, "CONFIG", "SET", "maxclients", "200")
	if got := fmt.Sprint(do(t, c, "CONFIG", "GET", "maxclients")); got != "[maxclients 200]" {
		t.Errorf("CONFIG SET maxclients 200, then GET: %s", got)
	}
}

// TestMaxClientsRaisesFileLimit: streamd raises its open-file limit for
// maxclients + 32 and says so, as Redis does: past the hard limit with
// CAP_SYS_RESOURCE, else as far as the hard limit (maxclients lowered to
// fit).
func TestMaxClientsRaisesFileLimit(t *testing.T) {
	s, port := startUnderFileLimit(t, 256, 2048, true)
	c := newClient(t, port, 0)
	got := fmt.Sprint(do(t, c, "CONFIG", "GET", "maxclients"))
	var lim unix.Rlimit
	if err := unix.Prlimit(s.cmd.Process.Pid, unix.RLIMIT_NOFILE, nil, &lim); err != nil {
		t.Fatalf("prlimit: %v", err)
	}
	if haveSysResource() {
		// Go raised the soft limit to the hard one (2048) as it started.
		s.requireLogs(`"Increased maximum number of open files to 10032 (it was originally set to 2048)."`)
		if got != "[maxclients 10000]" || lim.Cur != 10032 {
			t.Errorf("maxclients %s, open-file limit %d; want 10000, 10032", got, lim.Cur)
		}
		return
	}
	if got != "[maxclients 2016]" || lim.Cur != 2048 {
		t.Errorf("maxclients %s, open-file limit %d; want 2016, 2048", got, lim.Cur)
	}
	s.requireLogs(`"Current maximum open files is 2048. maxclients has been reduced to 2016`)
}

// TestFileLimitTooLowToStart: with 32 descriptors or fewer there is no
// room for a client: streamd exits with Redis's message.
func TestFileLimitTooLowToStart(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	s := startServerVia(t, underFileLimit(t, 32, 32, false), pickPort(t), t.TempDir())
	if !s.waitExit(60 * time.Second) {
		t.Fatal("streamd still running with an open-file limit of 32")
	}
	if s.exitCode() == 0 {
		t.Errorf("exit status 0")
	}
	s.requireLogs("Your current 'ulimit -n' of 32 is not enough for the server to start. Please increase your open file limit to at least 10032. Exiting.")
}

// requireLogs fails the test for each text the process has not logged.
func (s *proc) requireLogs(texts ...string) {
	s.t.Helper()
	for _, want := range texts {
		if !strings.Contains(s.logs(), want) {
			s.t.Errorf("log lacks %s", want)
		}
	}
}
