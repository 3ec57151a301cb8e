//go:build linux

package server

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"streamd/internal/testutil"
)

// settledLater is how many turns of writes it leads srv's event loop left
// to a goroutine (0 before the loop starts).
func settledLater(srv *Server) int64 {
	srv.mu.Lock()
	l := srv.loop
	srv.mu.Unlock()
	if l == nil {
		return 0
	}
	return l.settledLater.Load()
}

// TestClusterLeaderLoopTurn: clients of the leader, in three databases,
// pipeline XADDs at the same time; its event loop proposes each turn's
// writes and leaves their quorum wait to a goroutine (settleLater). Every
// client gets its replies in order without leaving the loop, clients that
// send their next pipeline before reading the last one's replies too, and
// clients that go away with their turn out are closed once it is settled.
// Both followers hold every entry.
func TestClusterLeaderLoopTurn(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	lead := leaderOf(nodes, 0)
	const clients, rounds, depth = 6, 20, 16
	base := loopClients(t, lead.srv)
	handoffs := lead.srv.stats.LoopHandoffs.Load()
	before := settledLater(lead.srv)
	var wg sync.WaitGroup
	errs := make(chan error, 3*clients)
	for i := range clients {
		wg.Add(3)
		go func() {
			defer wg.Done()
			errs <- loopTurnClient(lead.addr, i, rounds, depth)
		}()
		go func() {
			defer wg.Done()
			errs <- aheadClient(lead.addr, i, rounds, depth)
		}()
		go func() {
			defer wg.Done()
			errs <- leavingClient(lead.addr, i, 10)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := lead.srv.stats.LoopHandoffs.Load() - handoffs; n != 0 {
		t.Errorf("%d clients left the leader's event loop; it should have run every write", n)
	}
	if settledLater(lead.srv) == before {
		t.Fatal("the leader's loop settled no turn in a goroutine")
	}
	waitLoopClients(t, lead.srv, base)
	for _, f := range followersOf(nodes, 0) {
		c, err := dialRESP(f.addr)
		if err != nil {
			t.Fatal(err)
		}
		for i := range clients {
			key := fmt.Sprintf("ahead%d", i)
			testutil.Eventually(t, 10*time.Second, time.Millisecond, func() error {
				v, err := c.Do("XLEN", key)
				if err != nil {
					return err
				}
				if v.Int != rounds*depth {
					return fmt.Errorf("%s holds %d entries at a follower, want %d", key, v.Int, rounds*depth)
				}
				return nil
			})
		}
		c.Close()
	}
}

// TestClusterLeaderLoopMixed: a pipeline to the leader that mixes its
// writes with what the loop would have to wait for them to run (a PING, a
// read, an error) answers everything in order: the client goes to the
// goroutine path once its writes are settled, with the rest.
func TestClusterLeaderLoopMixed(t *testing.T) {
	nodes := startCluster(t, 3, 1, false)
	lead := leaderOf(nodes, 0)
	got := runPipeline(t, lead.addr, [][]string{
		{"XADD", "m", "1-1", "f", "v"}, {"XADD", "m", "2-1", "f", "v"}, {"PING"},
		{"XADD", "m", "3-1", "f", "v"}, {"XLEN", "m"}, {"NOSUCH"}, {"XADD", "m", "4-1", "f", "v"},
		{"XADD", "m", "1-1", "f", "v"}, {"ECHO", "e"},
	})
	want := []string{`"1-1"`, `"2-1"`, "+PONG", `"3-1"`, "(integer) 3", "", `"4-1"`, "", `"e"`}
	for i, w := range want {
		if w != "" {
			wantEq(t, fmt.Sprintf("reply %d", i+1), got[i].String(), w)
		}
	}
	if got[5].Kind != '-' || got[7].Kind != '-' {
		t.Errorf("unknown command and smaller ID: %v, %v; want errors", got[5], got[7])
	}
	// A pipeline longer than a client's writes in flight (maxPipeline)
	// goes on in the goroutine path after the first maxPipeline.
	var cmds [][]string
	for i := 1; i <= 2*maxPipeline+5; i++ {
		cmds = append(cmds, []string{"XADD", "long", fmt.Sprintf("%d-1", i), "f", "v"})
	}
	got = runPipeline(t, lead.addr, cmds)
	for i, v := range got {
		wantEq(t, fmt.Sprintf("long reply %d", i+1), v.String(), fmt.Sprintf(`"%d-1"`, i+1))
	}
}
