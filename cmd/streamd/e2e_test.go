package main

// End-to-end test of the built binary with Redis's own tools: redis-cli
// prints XINFO GROUPS and XPENDING as for Redis, redis-benchmark's PING and
// XADD runs complete without errors, and SIGTERM exits 0.

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/server/resp"
)

// ping sends an inline PING to addr and expects +PONG.
func ping(addr string) error { return pingAuth(addr, "") }

// pingAuth sends AUTH pass (when pass is set) and an inline PING to addr and
// expects +OK and +PONG.
func pingAuth(addr, pass string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	r := bufio.NewReader(c)
	if pass != "" {
		if _, err := c.Write(resp.AppendCommand(nil, []byte("AUTH"), []byte(pass))); err != nil {
			return err
		}
		if line, err := r.ReadString('\n'); err != nil || line != "+OK\r\n" {
			return fmt.Errorf("AUTH answered %q, %v", line, err)
		}
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// cli runs redis-cli against port and returns its trimmed output.
func cli(t *testing.T, bin string, port int, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"-p", strconv.Itoa(port)}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestBinaryWithRedisTools(t *testing.T) {
	cliBin := testutil.RequireTool(t, "redis-cli")
	benchBin := testutil.RequireTool(t, "redis-benchmark")
	dir := t.TempDir()
	bin := filepath.Join(dir, "streamd")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	port := testutil.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--dir", filepath.Join(dir, "data"), "--metrics-addr", "")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("streamd output:\n%s", logs.String())
		}
	})
	testutil.Eventually(t, 20*time.Second, 20*time.Millisecond, func() error {
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("streamd exited early: %v", err)
		default:
		}
		return ping(addr)
	})

	cli(t, cliBin, port, "XADD", "s", "1-1", "f", "v")
	wantOK := cli(t, cliBin, port, "XGROUP", "CREATE", "s", "g", "0")
	if wantOK != "OK" {
		t.Fatalf("XGROUP CREATE printed %q", wantOK)
	}
	cli(t, cliBin, port, "XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")

	// redis-cli's output to a pipe is one value per line, as real Redis gives.
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"XINFO", "GROUPS", "s"}, "name\ng\nconsumers\n1\npending\n1\nlast-delivered-id\n1-1\nentries-read\n1\nlag\n0"},
		{[]string{"XPENDING", "s", "g"}, "1\n1-1\n1-1\nalice\n1"},
		{[]string{"XLEN", "s"}, "1"},
		{[]string{"XRANGE", "s", "-", "+"}, "1-1\nf\nv"},
	}
	for _, tc := range tests {
		if got := cli(t, cliBin, port, tc.args...); got != tc.want {
			t.Errorf("redis-cli %s printed\n%s\nwant\n%s", strings.Join(tc.args, " "), got, tc.want)
		}
	}

	// redis-benchmark: its PING tests (inline and multibulk) and the xadd
	// test where the tool has one; then an explicit XADD workload.
	runs := [][]string{
		{"-p", strconv.Itoa(port), "-t", "ping,xadd", "-n", "100000", "-q"},
		{"-p", strconv.Itoa(port), "-n", "20000", "-q", "XADD", "bench", "*", "f", "v"},
	}
	for _, args := range runs {
		out, err := exec.Command(benchBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-benchmark %v: %v\n%s", args, err, out)
		}
		text := string(out)
		for _, line := range strings.Split(strings.ReplaceAll(text, "\r", "\n"), "\n") {
			l := strings.ToLower(line)
			if strings.Contains(l, "err") || strings.Contains(l, "error") {
				t.Errorf("redis-benchmark %v printed an error line: %q", args, line)
			}
		}
		if !strings.Contains(text, "requests per second") {
			t.Errorf("redis-benchmark %v printed no result:\n%s", args, text)
		}
	}
	if n := cli(t, cliBin, port, "XLEN", "bench"); n != "20000" {
		t.Errorf("XLEN bench = %s after 20000 benchmark XADDs", n)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("streamd exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("streamd did not exit within 20s of SIGTERM")
	}
}
