//go:build linux

package server

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestClusterForwardLoopTurn: clients of a follower, in three databases,
// pipeline XADDs at the same time; the follower's event loop forwards each
// turn's requests together, on one trunk per database, and every client
// gets its own replies in order, without leaving the loop. The leader
// holds every entry, in the right database.
func TestClusterForwardLoopTurn(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	f := followersOf(nodes, 0)[0]
	lead := leaderOf(nodes, 0)
	const clients, rounds, depth = 6, 20, 16
	handoffs := f.srv.stats.LoopHandoffs.Load()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- loopTurnClient(f.addr, i, rounds, depth)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := f.srv.stats.LoopHandoffs.Load() - handoffs; n != 0 {
		t.Errorf("%d clients left the event loop; the loop should have forwarded everything", n)
	}
	l, err := dialRESP(lead.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range clients {
		must(t, "SELECT", l.Send("SELECT", strconv.Itoa(i%3)))
		if _, err := l.Receive(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		v, err := l.Do("XLEN", fmt.Sprintf("k%d", i))
		must(t, "XLEN", err)
		if v.Int != rounds*depth {
			t.Errorf("k%d in db %d holds %d entries at the leader, want %d", i, i%3, v.Int, rounds*depth)
		}
	}
}

// loopTurnClient selects database i%3 and pipelines rounds × depth XADDs
// to k<i> with the IDs 1-1, 2-1, …, checking each reply.
func loopTurnClient(addr string, i, rounds, depth int) error {
	c, err := dialRESP(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if v, err := c.Do("SELECT", strconv.Itoa(i%3)); err != nil || v.String() != "+OK" {
		return fmt.Errorf("client %d: SELECT: %v %v", i, v, err)
	}
	key := fmt.Sprintf("k%d", i)
	n := 0
	for range rounds {
		var cmds [][]string
		for j := 1; j <= depth; j++ {
			cmds = append(cmds, []string{"XADD", key, fmt.Sprintf("%d-1", n+j), "c", strconv.Itoa(i)})
		}
		if err := c.SendRaw(pipelineBytes(cmds)); err != nil {
			return err
		}
		for j := 1; j <= depth; j++ {
			v, err := c.Receive(10 * time.Second)
			if err != nil {
				return fmt.Errorf("client %d, XADD %d: %v", i, n+j, err)
			}
			if want := fmt.Sprintf(`"%d-1"`, n+j); v.String() != want {
				return fmt.Errorf("client %d: reply %v to XADD %s %d-1", i, v, key, n+j)
			}
		}
		n += depth
	}
	return nil
}

// TestClusterForwardWaitAfterTrunk: WAIT after writes a follower forwarded
// on a trunk asks the leader for what it had applied (STREAMD.WAITLAST),
// and counts both replicas once they hold it; the internal command is
// unknown on the client port.
func TestClusterForwardWaitAfterTrunk(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	f := followersOf(nodes, 0)[0]
	got := runPipeline(t, f.addr, [][]string{
		{"XADD", "s", "1-1", "f", "v"}, {"XADD", "s", "2-1", "f", "v"}, {"WAIT", "2", "5000"},
		{"STREAMD.WAITLAST", "0", "1", "0"},
	})
	wantEq(t, "XADD", got[1].String(), `"2-1"`)
	wantEq(t, "WAIT", got[2].String(), "(integer) 2")
	if got[3].Kind != '-' || got[3].Str[:3] != "ERR" {
		t.Errorf("STREAMD.WAITLAST on the client port: %v, want an unknown-command error", got[3])
	}
}

// TestClusterForwardLoopSentTurns: a follower's loop sends a turn's
// forwarded requests and serves other clients before their replies come
// (loopTurn.sendLater). A client that sends its next pipeline before
// reading the last one's replies (so it arrives while its turn is out)
// still gets every reply in order; clients that go away with their turn
// out are closed once it is answered; the loop goes on serving.
func TestClusterForwardLoopSentTurns(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	f := followersOf(nodes, 0)[0]
	sentLater := func() int64 {
		f.srv.mu.Lock()
		l := f.srv.loop
		f.srv.mu.Unlock()
		if l == nil {
			return 0
		}
		return l.sentLater.Load()
	}
	before := sentLater()
	base := loopClients(t, f.srv)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- aheadClient(f.addr, i, 30, 16)
		}()
	}
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- leavingClient(f.addr, i, 20)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if sentLater() == before {
		t.Fatal("the follower's loop sent no turn to be answered later")
	}
	waitLoopClients(t, f.srv, base)
	got := runPipeline(t, f.addr, [][]string{{"PING"}, {"XADD", "after", "*", "f", "v"}})
	wantEq(t, "PING", got[0].String(), "+PONG")
	if got[1].Kind != '$' {
		t.Fatalf("XADD after the test: %v", got[1])
	}
}

// aheadClient pipelines rounds × depth XADDs to ahead<i>, always sending a
// round before reading the replies of the one before, and checks every
// reply's order.
func aheadClient(addr string, i, rounds, depth int) error {
	c, err := dialRESP(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	key := fmt.Sprintf("ahead%d", i)
	round := func(r int) []byte {
		var cmds [][]string
		for j := 1; j <= depth; j++ {
			cmds = append(cmds, []string{"XADD", key, fmt.Sprintf("%d-%d", r+1, j), "f", "v"})
		}
		return pipelineBytes(cmds)
	}
	if err := c.SendRaw(round(0)); err != nil {
		return err
	}
	for r := range rounds {
		if r+1 < rounds {
			if err := c.SendRaw(round(r + 1)); err != nil {
				return err
			}
		}
		for j := 1; j <= depth; j++ {
			v, err := c.Receive(10 * time.Second)
			if err != nil {
				return fmt.Errorf("client %d, round %d, XADD %d: %v", i, r, j, err)
			}
			if want := fmt.Sprintf(`"%d-%d"`, r+1, j); v.String() != want {
				return fmt.Errorf("client %d: reply %v, want %s", i, v, want)
			}
		}
	}
	return nil
}

// leavingClient, n times: connects, pipelines XADDs to leaving<i> and
// closes without reading their replies.
func leavingClient(addr string, i, n int) error {
	for r := range n {
		c, err := dialRESP(addr)
		if err != nil {
			return err
		}
		var cmds [][]string
		for range 16 {
			cmds = append(cmds, []string{"XADD", fmt.Sprintf("leaving%d", i), "*", "round", strconv.Itoa(r)})
		}
		err = c.SendRaw(pipelineBytes(cmds))
		c.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
