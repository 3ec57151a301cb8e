//go:build linux

package server

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
)

// loopClients is how many clients the server's event loop serves now.
func loopClients(t *testing.T, s *Server) int {
	t.Helper()
	return int(s.stats.LoopClients.Load())
}

// waitLoopClients polls until the loop serves n clients.
func waitLoopClients(t *testing.T, s *Server, n int) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, time.Millisecond, func() error {
		if got := loopClients(t, s); got != n {
			return fmt.Errorf("event loop serves %d clients, want %d", got, n)
		}
		return nil
	})
}

// rawReplies reads n replies from a connection as Values.
func rawReplies(t *testing.T, r *bufio.Reader, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		v, err := readValue(r)
		if err != nil {
			t.Fatalf("reply %d: %v (after %q)", i, err, out)
		}
		out = append(out, v.String())
	}
	return out
}

// TestLoopServesThenHandsOff: the loop runs plain writes and connection
// commands itself; the first command it does not run (MULTI) hands the
// client to its goroutines, with the rest of the same write, and every
// reply keeps request order.
func TestLoopServesThenHandsOff(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := bufio.NewReader(nc)
	fmt.Fprint(nc, "*2\r\n$5\r\nHELLO\r\n$1\r\n2\r\n")
	rawReplies(t, r, 1)
	waitLoopClients(t, srv, 1)
	fmt.Fprint(nc, "*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$3\r\n1-1\r\n$1\r\nf\r\n$1\r\n1\r\n*1\r\n$4\r\nPING\r\n")
	if got := rawReplies(t, r, 2); got[0] != `"1-1"` || got[1] != "+PONG" {
		t.Fatalf("replies %q", got)
	}
	if n := loopClients(t, srv); n != 1 {
		t.Fatalf("after XADD and PING the loop serves %d clients, want 1", n)
	}
	req := func(args ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		return b.String()
	}
	fmt.Fprint(nc, req("XADD", "s", "1-2", "f", "2")+req("CLIENT", "SETNAME", "x")+req("XADD", "s", "1-3", "f", "3")+
		req("MULTI")+req("XLEN", "s")+req("EXEC")+req("XADD", "s", "1-4", "f", "4")+req("XLEN", "s")+req("CLIENT", "GETNAME"))
	want := []string{`"1-2"`, "+OK", `"1-3"`, "+OK", "+QUEUED", "[(integer) 3]", `"1-4"`, "(integer) 4", `"x"`}
	if got := rawReplies(t, r, len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("replies\n got %q\nwant %q", got, want)
	}
	waitLoopClients(t, srv, 0)
	if h, turns := srv.stats.LoopHandoffs.Load(), srv.stats.LoopTurns.Load(); h != 1 || turns < 3 {
		t.Fatalf("handoffs %d (want 1), turns %d (want at least 3)", h, turns)
	}
}

// TestLoopPartialRequests: a request that arrives in pieces waits in the
// loop for its rest; one larger than the read buffer, an inline command
// and a malformed one go to the goroutine path, which answers as always.
func TestLoopPartialRequests(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	conn := func() (net.Conn, *bufio.Reader) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return nc, bufio.NewReader(nc)
	}
	nc, r := conn()
	msg := "*5\r\n$4\r\nXADD\r\n$1\r\np\r\n$3\r\n1-1\r\n$1\r\nf\r\n$5\r\nhello\r\n"
	for _, cut := range []int{1, 3, 9, 20, 41} {
		// The loop reads the first piece alone before the rest is sent.
		read := srv.stats.NetInput.Load() + int64(cut)
		nc.Write([]byte(msg[:cut]))
		testutil.Eventually(t, 10*time.Second, time.Millisecond, func() error {
			if srv.stats.NetInput.Load() < read {
				return fmt.Errorf("the server has not read the first %d bytes", cut)
			}
			return nil
		})
		nc.Write([]byte(msg[cut:]))
		got := rawReplies(t, r, 1)[0]
		if cut == 1 && got != `"1-1"` || cut > 1 && !strings.Contains(got, "equal or smaller") {
			t.Fatalf("cut at %d: %s", cut, got)
		}
	}
	if n := loopClients(t, srv); n != 1 {
		t.Fatalf("after split requests the loop serves %d clients, want 1", n)
	}

	big := strings.Repeat("v", 100<<10)
	fmt.Fprintf(nc, "*5\r\n$4\r\nXADD\r\n$1\r\np\r\n$1\r\n*\r\n$1\r\nf\r\n$%d\r\n%s\r\n*2\r\n$4\r\nXLEN\r\n$1\r\np\r\n", len(big), big)
	if got := rawReplies(t, r, 2); got[1] != "(integer) 2" {
		t.Fatalf("big XADD then XLEN: %q", got)
	}
	waitLoopClients(t, srv, 0)

	nc2, r2 := conn()
	fmt.Fprint(nc2, "PING\r\n")
	if got := rawReplies(t, r2, 1); got[0] != "+PONG" {
		t.Fatalf("inline PING: %q", got)
	}
	nc3, r3 := conn()
	fmt.Fprint(nc3, "*1\r\n$x\r\n")
	if got := rawReplies(t, r3, 1); !strings.Contains(got[0], "Protocol error") {
		t.Fatalf("malformed request: %q", got)
	}
	if _, err := r3.ReadByte(); err == nil {
		t.Fatal("connection still open after a protocol error")
	}
}

// TestLoopClientKill: CLIENT KILL of a loop client closes it through the
// loop; the client is gone from CLIENT LIST and its socket reads EOF.
func TestLoopClientKill(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	victim := dial(t, addr)
	defer victim.Close()
	idv, err := victim.Do("CLIENT", "ID")
	if err != nil {
		t.Fatal(err)
	}
	waitLoopClients(t, srv, 1)
	killer := dial(t, addr)
	defer killer.Close()
	if v, err := killer.Do("CLIENT", "KILL", "ID", fmt.Sprint(idv.Int)); err != nil || v.Int != 1 {
		t.Fatalf("CLIENT KILL: %v %v", v, err)
	}
	if _, err := victim.Receive(10 * time.Second); err == nil {
		t.Fatal("killed client still reads")
	}
	testutil.Eventually(t, 10*time.Second, time.Millisecond, func() error {
		if v, _ := killer.Do("CLIENT", "LIST"); strings.Contains(v.Str, fmt.Sprintf("id=%d ", idv.Int)) {
			return fmt.Errorf("killed client still listed:\n%s", v.Str)
		}
		return nil
	})
}

// TestLoopTimeoutHandsOff: once "timeout" is set, the loop's clients go to
// goroutines, which close them when idle that long.
func TestLoopTimeoutHandsOff(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	idle := dial(t, addr)
	defer idle.Close()
	if _, err := idle.Do("PING"); err != nil {
		t.Fatal(err)
	}
	waitLoopClients(t, srv, 1)
	admin := dial(t, addr)
	defer admin.Close()
	if v, err := admin.Do("CONFIG", "SET", "timeout", "1"); err != nil || v.Str != "OK" {
		t.Fatalf("CONFIG SET timeout: %v %v", v, err)
	}
	if _, err := idle.Receive(15 * time.Second); err == nil {
		t.Fatal("idle client not closed by timeout")
	}
	if n := loopClients(t, srv); n != 0 {
		t.Fatalf("loop serves %d clients with timeout set", n)
	}
}

// TestLoopPushToLoopClient: an invalidation redirected to a client the loop
// serves is written to it (a push's drain goroutine on the loop's socket).
func TestLoopPushToLoopClient(t *testing.T) {
	srv, addr := startTestServer(t, nil)
	target := dial(t, addr)
	defer target.Close()
	if _, err := target.Do("HELLO", "3"); err != nil {
		t.Fatal(err)
	}
	id, err := target.Do("CLIENT", "ID")
	if err != nil {
		t.Fatal(err)
	}
	waitLoopClients(t, srv, 1)
	tracker := dial(t, addr)
	defer tracker.Close()
	if v, err := tracker.Do("CLIENT", "TRACKING", "on", "REDIRECT", fmt.Sprint(id.Int)); err != nil || v.Str != "OK" {
		t.Fatalf("CLIENT TRACKING: %v %v", v, err)
	}
	if _, err := tracker.Do("XLEN", "k"); err != nil {
		t.Fatal(err)
	}
	writer := dial(t, addr)
	defer writer.Close()
	if _, err := writer.Do("XADD", "k", "*", "f", "v"); err != nil {
		t.Fatal(err)
	}
	target.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	v, err := readValue(target.r) // unasked: the push itself
	if err != nil || !strings.Contains(v.String(), "invalidate") || !strings.Contains(v.String(), "k") {
		t.Fatalf("push to the loop client: %v %v", v, err)
	}
	if v, err := target.Do("PING"); err != nil || v.Str != "PONG" {
		t.Fatalf("PING after the push: %v %v", v, err)
	}
	if n := loopClients(t, srv); n != 2 { // target and writer
		t.Fatalf("loop serves %d clients after the push, want 2", n)
	}
}

// TestLoopConcurrentPipelines: many loop clients pipelining XADDs to one
// stream get every reply, in order, and the stream holds every entry; with
// deep pipelines the turns are heavy and the helper takes half of each.
func TestLoopConcurrentPipelines(t *testing.T) {
	for _, shape := range []struct{ clients, rounds, depth int }{{12, 40, 8}, {16, 12, 48}} {
		t.Run(fmt.Sprint(shape.clients, "x", shape.depth), func(t *testing.T) {
			srv := loopPipelines(t, shape.clients, shape.rounds, shape.depth)
			srv.mu.Lock()
			splits := srv.loop.splits.Load()
			srv.mu.Unlock()
			if heavy := shape.clients*shape.depth >= 2*splitRequests; heavy && splits == 0 {
				t.Errorf("no turn was shared with the helper")
			}
		})
	}
}

func loopPipelines(t *testing.T, clients, rounds, depth int) *Server {
	srv, addr := startTestServer(t, nil)
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer nc.Close()
			r := bufio.NewReader(nc)
			last := ""
			for k := 0; k < rounds; k++ {
				var b strings.Builder
				for j := 0; j < depth; j++ {
					v := fmt.Sprint(i, "-", k, "-", j)
					fmt.Fprintf(&b, "*5\r\n$4\r\nXADD\r\n$1\r\nq\r\n$1\r\n*\r\n$1\r\nf\r\n$%d\r\n%s\r\n", len(v), v)
				}
				nc.Write([]byte(b.String()))
				for j := 0; j < depth; j++ {
					v, err := readValue(r)
					if err != nil {
						errs <- err
						return
					}
					id := v.String()
					if id <= last && len(id) <= len(last) {
						errs <- fmt.Errorf("client %d: ID %s after %s", i, id, last)
						return
					}
					last = id
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c := dial(t, addr)
	defer c.Close()
	if v, err := c.Do("XLEN", "q"); err != nil || v.Int != int64(clients*rounds*depth) {
		t.Fatalf("XLEN: %v %v, want %d", v, err, clients*rounds*depth)
	}
	return srv
}

// TestLoopOff: with event-loop no every client gets goroutines.
func TestLoopOff(t *testing.T) {
	srv, addr := startTestServer(t, func(c *config.Config) { c.EventLoop = false })
	c := dial(t, addr)
	defer c.Close()
	if v, err := c.Do("XADD", "s", "*", "f", "v"); err != nil || v.Str == "" {
		t.Fatalf("XADD: %v %v", v, err)
	}
	if n := loopClients(t, srv); n != 0 {
		t.Fatalf("loop serves %d clients with event-loop no", n)
	}
}

// TestLoopRequirePass: with a password the loop serves AUTH and what
// follows; NOAUTH before it; an unauthenticated client's request over
// Redis's pre-AUTH limits is refused as Redis does (by the goroutine path).
func TestLoopRequirePass(t *testing.T) {
	srv, addr := startTestServer(t, func(c *config.Config) { c.RequirePass = "secret" })
	c := dial(t, addr)
	defer c.Close()
	if v, _ := c.Do("XADD", "s", "*", "f", "v"); !strings.HasPrefix(v.Str, "NOAUTH") {
		t.Fatalf("XADD before AUTH: %v", v)
	}
	if v, _ := c.Do("AUTH", "wrong"); !strings.HasPrefix(v.Str, "WRONGPASS") {
		t.Fatalf("AUTH wrong: %v", v)
	}
	if v, err := c.Do("AUTH", "secret"); err != nil || v.Str != "OK" {
		t.Fatalf("AUTH: %v %v", v, err)
	}
	if v, err := c.Do("XADD", "s", "*", "f", "v"); err != nil || v.Kind != '$' {
		t.Fatalf("XADD after AUTH: %v %v", v, err)
	}
	if n := loopClients(t, srv); n != 1 {
		t.Fatalf("loop serves %d clients, want 1", n)
	}
	anon := dial(t, addr)
	defer anon.Close()
	args := []string{"XADD", "s", "*"}
	for i := 0; i < 6; i++ {
		args = append(args, "f", "v")
	}
	v, err := anon.Do(args...)
	if err != nil || !strings.Contains(v.Str, "Protocol error: unauthenticated multibulk length") {
		t.Fatalf("unauthenticated 15-argument request: %v %v", v, err)
	}
}
