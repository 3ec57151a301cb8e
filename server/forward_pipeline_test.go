package server

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"streamd/config"
	"streamd/internal/testutil"
	"streamd/server/resp"
)

// pipelineBytes encodes cmds as one pipeline (one write).
func pipelineBytes(cmds [][]string) []byte {
	var b []byte
	for _, c := range cmds {
		args := make([][]byte, len(c))
		for i, a := range c {
			args[i] = []byte(a)
		}
		b = resp.AppendCommand(b, args...)
	}
	return b
}

// mixedPipeline is a pipeline on key k of forwarded writes and reads,
// errors the leader answers, errors answered here (arity), keyless
// commands run here, SELECT (the upstream's database mirrored mid-pipeline)
// and a run of writes with reads between them.
func mixedPipeline(k string) [][]string {
	cmds := [][]string{
		{"XADD", k, "1-1", "f", "v"},
		{"XLEN", k},
		{"XADD", k, "1-1", "f", "v"}, // the leader's error: ID not greater
		{"PING"},                     // here
		{"XADD", k, "2-1", "f", "v"},
		{"XRANGE", k, "-", "+"},
		{"XGROUP", "CREATE", k + ":missing", "g", "0"}, // the leader's error
		{"SELECT", "1"},
		{"XLEN", k},
		{"XADD", k, "5-1", "a", "b"},
		{"SELECT", "0"},
		{"XLEN", k},
		{"XADD", k, "not-an-id", "f", "v"}, // the leader's error
		{"XADD", k},                        // arity: answered here
		{"XDEL", k, "1-1"},
		{"ECHO", "hi"},
		{"XLEN", k},
		// A transaction and a blocking read in the middle.
		{"MULTI"},
		{"XADD", k, "6-1", "m", "1"},
		{"XLEN", k},
		{"EXEC"},
		{"WATCH", k},
		{"MULTI"},
		{"XLEN", k},
		{"EXEC"},
		{"XREAD", "BLOCK", "1000", "STREAMS", k, "5-1"},
		{"XLEN", k},
		// UNWATCH after a WATCH at the leader, behind forwarded writes.
		{"WATCH", k},
		{"XADD", k, "7-1", "w", "1"},
		{"XLEN", k},
		{"UNWATCH"},
		{"XLEN", k},
		{"WATCH", k},
		{"XADD", k, "7-2", "w", "2"},
		{"MULTI"},
		{"XLEN", k},
		{"DISCARD"},
		{"XLEN", k},
	}
	for i := 10; i < 110; i++ {
		cmds = append(cmds, []string{"XADD", k, fmt.Sprintf("%d-1", i), "n", fmt.Sprint(i)})
		if i%10 == 0 {
			cmds = append(cmds, []string{"XLEN", k}, []string{"XREVRANGE", k, "+", "-", "COUNT", "1"})
		}
	}
	return append(cmds, []string{"XLEN", k}, []string{"XRANGE", k, "-", "+", "COUNT", "3"})
}

// forwardPaths runs f on a 3-node cluster of shards whose clients the event
// loop serves (the default: a turn's forwarded requests go together on a
// trunk) and on one where each client has a goroutine (event-loop no: each
// client's pipeline goes as its own batch).
func forwardPaths(t *testing.T, shards int, f func(t *testing.T, nodes []*cnode)) {
	for _, loop := range []bool{true, false} {
		name := "loop"
		if !loop {
			name = "goroutines"
		}
		t.Run(name, func(t *testing.T) {
			f(t, startClusterWith(t, 3, shards, false, func(_ int, cfg *config.Config) { cfg.EventLoop = loop }))
		})
	}
}

// runPipeline sends cmds to addr in one write and reads every reply.
func runPipeline(t *testing.T, addr string, cmds [][]string) []Value {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendRaw(pipelineBytes(cmds)); err != nil {
		t.Fatal(err)
	}
	out := make([]Value, len(cmds))
	for i := range cmds {
		if out[i], err = c.Receive(20 * time.Second); err != nil {
			t.Fatalf("reply %d (%v): %v", i, cmds[i], err)
		}
	}
	return out
}

// TestClusterForwardPipelineOrder: a pipeline of mixed reads, writes and
// errors sent to a follower gets the replies the leader gives the same
// pipeline, in request order.
func TestClusterForwardPipelineOrder(t *testing.T) {
	forwardPaths(t, 1, testForwardPipelineOrder)
}

func testForwardPipelineOrder(t *testing.T, nodes []*cnode) {
	f := followersOf(nodes, 0)[0]
	lead := leaderOf(nodes, 0)
	cmds := mixedPipeline("k")
	viaF := runPipeline(t, f.addr, cmds)
	if v := runPipeline(t, lead.addr, [][]string{{"FLUSHALL"}}); v[0].String() != "+OK" {
		t.Fatalf("FLUSHALL: %v", v[0])
	}
	direct := runPipeline(t, lead.addr, cmds)
	for i := range cmds {
		if !viaF[i].Equal(direct[i]) {
			t.Errorf("reply %d to %v: via the follower %v, at the leader %v", i, cmds[i], viaF[i], direct[i])
		}
	}
	// A few by hand, so that both agreeing on something wrong fails too.
	wantEq(t, "first XADD", viaF[0].String(), `"1-1"`)
	wantEq(t, "XLEN", viaF[1].String(), "(integer) 1")
	if !strings.HasPrefix(viaF[2].String(), "(error) ERR The ID specified in XADD is equal or smaller") {
		t.Errorf("XADD 1-1 again: %v", viaF[2])
	}
	wantEq(t, "PING", viaF[3].String(), "+PONG")
	wantEq(t, "XLEN in db 1", viaF[8].String(), "(integer) 0")
	wantEq(t, "XADD in db 1", viaF[9].String(), `"5-1"`)
	wantEq(t, "XLEN back in db 0", viaF[11].String(), "(integer) 2")
	if !strings.HasPrefix(viaF[13].String(), "(error) ERR wrong number of arguments") {
		t.Errorf("XADD k: %v", viaF[13])
	}
	wantEq(t, "ECHO", viaF[15].String(), `"hi"`)
	wantEq(t, "EXEC", viaF[20].String(), `["6-1", (integer) 2]`)
	wantEq(t, "EXEC after WATCH", viaF[24].String(), `[(integer) 2]`)
	wantEq(t, "XREAD BLOCK", viaF[25].String(), `[["k", [["6-1", ["m", "1"]]]]]`)
	wantEq(t, "UNWATCH", viaF[30].String(), "+OK")
	wantEq(t, "XLEN after UNWATCH", viaF[31].String(), "(integer) 3")
	wantEq(t, "DISCARD", viaF[36].String(), "+OK")
	wantEq(t, "XLEN after DISCARD", viaF[37].String(), "(integer) 4")
	wantEq(t, "last XLEN", viaF[len(viaF)-2].String(), "(integer) 104")

	// The protocol changes mid-pipeline: the upstream mirrors it.
	proto := runPipeline(t, f.addr, [][]string{{"HELLO", "3"}, {"XINFO", "STREAM", "k"}, {"HELLO", "2"},
		{"XINFO", "STREAM", "k"}, {"XLEN", "k"}})
	if proto[1].Kind != '%' || proto[3].Kind != '*' {
		t.Errorf("XINFO STREAM after HELLO 3: %c, after HELLO 2: %c; want a map, then an array", proto[1].Kind, proto[3].Kind)
	}
	wantEq(t, "XLEN after the HELLOs", proto[4].String(), "(integer) 104")
}

// TestClusterForwardPipelineClientGone: a client that pipelines writes to
// a follower and closes before the replies leaves no connection behind,
// and what it sent is applied or not, as for any client gone mid-way.
func TestClusterForwardPipelineClientGone(t *testing.T) {
	forwardPaths(t, 1, testForwardPipelineClientGone)
}

func testForwardPipelineClientGone(t *testing.T, nodes []*cnode) {
	f := followersOf(nodes, 0)[0]
	lead := leaderOf(nodes, 0)
	for round := range 5 {
		c, err := dialRESP(f.addr)
		if err != nil {
			t.Fatal(err)
		}
		var cmds [][]string
		for i := 1; i <= 500; i++ {
			cmds = append(cmds, []string{"XADD", "s", fmt.Sprintf("%d-%d", round+1, i), "f", "v"})
		}
		must(t, "send", c.SendRaw(pipelineBytes(cmds)))
		c.Close()
	}
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		f.srv.mu.Lock()
		n := len(f.srv.clients) - f.srv.internalClients
		f.srv.mu.Unlock()
		if n != 0 {
			return fmt.Errorf("%d clients still connected to the follower", n)
		}
		return nil
	})
	// Every XADD that ran ran in order: the stream holds a prefix of each
	// round's IDs, rounds in order.
	l, err := dialRESP(lead.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	v, err := l.Do("XRANGE", "s", "-", "+")
	must(t, "XRANGE", err)
	next := map[int]int{}
	for _, e := range v.Elems {
		var ms, seq int
		fmt.Sscanf(e.Elems[0].Str, "%d-%d", &ms, &seq)
		if seq != next[ms]+1 {
			t.Fatalf("entry %s after %d-%d", e.Elems[0].Str, ms, next[ms])
		}
		next[ms] = seq
	}
	// The follower still forwards for a new client.
	viaF := runPipeline(t, f.addr, [][]string{{"XADD", "s", "9-1", "f", "v"}, {"XLEN", "s"}})
	wantEq(t, "XADD after", viaF[0].String(), `"9-1"`)
	wantEq(t, "XLEN after", viaF[1].String(), fmt.Sprintf("(integer) %d", len(v.Elems)+1))
}

// TestClusterForwardPipelineLeaderChange: a follower's client pipelines
// XADDs while the shard's leadership moves twice (to the other follower,
// then to the client's node); see checkPipelinedXADDs.
func TestClusterForwardPipelineLeaderChange(t *testing.T) {
	forwardPaths(t, 1, func(t *testing.T, nodes []*cnode) {
		fs := followersOf(nodes, 0)
		f, other := fs[0], fs[1]
		checkPipelinedXADDs(t, nodes, f.addr, func(waitMore func(int)) {
			waitMore(500)
			moveLeader(t, nodes, 0, other)
			waitMore(500)
			moveLeader(t, nodes, 0, f)
			waitMore(500)
		})
	})
}

// moveLeader transfers shard's leadership to `to`, asking whichever node
// leads it until `to` does (a transfer can fail, or an election pick
// another node, on a busy machine), and until every node sees it.
func moveLeader(t *testing.T, nodes []*cnode, shard int, to *cnode) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, 10*time.Millisecond, func() error {
		from := leaderOf(nodes, shard)
		switch {
		case from.node == nil:
			return errors.New("no leader")
		case from != to:
			if err := from.node.TransferLeader(shard, to.id); err != nil {
				return fmt.Errorf("transfer shard %d from %s to %s: %v", shard, from.id, to.id, err)
			}
		}
		if !to.node.Shard(shard).IsLeader() {
			return fmt.Errorf("%s does not lead shard %d yet", to.id, shard)
		}
		for _, cn := range nodes {
			if id, _ := cn.node.Leader(shard); id != to.id {
				return fmt.Errorf("%s sees %q leading shard %d", cn.id, id, shard)
			}
		}
		return nil
	})
}

// TestClusterForwardPipelineLeaderStops: a follower's client pipelines
// XADDs while the leader's server and node shut down (its upstreams break
// with requests in flight, then it cannot be dialled until a new leader is
// elected); see checkPipelinedXADDs.
func TestClusterForwardPipelineLeaderStops(t *testing.T) {
	forwardPaths(t, 1, func(t *testing.T, nodes []*cnode) {
		f := followersOf(nodes, 0)[0]
		lead := leaderOf(nodes, 0)
		checkPipelinedXADDs(t, nodes, f.addr, func(waitMore func(int)) {
			waitMore(500)
			lead.srv.Close()
			lead.node.Close(false)
			waitMore(500)
		})
	})
}

// checkPipelinedXADDs pipelines XADD s i-1 (i = 1, 2, …) to addr, at most
// 200 requests in flight, until during returned (it is given waitMore,
// which waits for n more replies). Every request must get one reply, in
// order: its own ID, or an error saying it was not run or its outcome is
// unknown; at least half are acknowledged, and every acknowledged entry is
// in the stream afterwards, read at the leader.
func checkPipelinedXADDs(t *testing.T, nodes []*cnode, addr string, during func(waitMore func(n int))) {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	const chunk, maxTotal = 50, 200000
	var mu sync.Mutex
	var replies []Value
	progress := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(replies)
	}
	// At most 4 chunks in flight, so that requests are always on their way
	// when the leadership moves: a token per request sent, back per reply.
	tokens := make(chan struct{}, 4*chunk)
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		for {
			v, err := c.Receive(30 * time.Second)
			if err != nil {
				readErr <- fmt.Errorf("reply %d: %v", progress(), err)
				return
			}
			if v.Kind == '+' && v.Str == "PONG" { // the sender's last request
				readErr <- nil
				return
			}
			<-tokens
			mu.Lock()
			replies = append(replies, v)
			mu.Unlock()
		}
	}()
	sendErr := make(chan error, 1)
	go func() {
		for start := 1; start <= maxTotal; start += chunk {
			select {
			case <-stop:
				sendErr <- c.Send("PING")
				return
			default:
			}
			var cmds [][]string
			for i := start; i < start+chunk; i++ {
				tokens <- struct{}{}
				cmds = append(cmds, []string{"XADD", "s", fmt.Sprintf("%d-1", i), "f", "v"})
			}
			if err := c.SendRaw(pipelineBytes(cmds)); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- c.Send("PING")
	}()
	during(func(n int) {
		want := progress() + n
		testutil.Eventually(t, 30*time.Second, time.Millisecond, func() error {
			if g := progress(); g < want {
				return fmt.Errorf("%d replies of %d", g, want)
			}
			return nil
		})
	})
	close(stop)
	must(t, "send", <-sendErr)
	must(t, "read", <-readErr)
	total := len(replies)

	acked := 0
	var ids []string
	errs := map[string]int{}
	for i, v := range replies {
		want := fmt.Sprintf("%d-1", i+1)
		switch {
		case v.Kind == '$' && v.Str == want:
			acked++
			ids = append(ids, want)
		case v.Kind == '-' && (strings.HasPrefix(v.Str, "TRYAGAIN ") || strings.HasPrefix(v.Str, "CLUSTERDOWN ") ||
			strings.HasPrefix(v.Str, "ERR outcome unknown: ")):
			errs[v.Str]++
		default:
			for j := max(0, i-5); j < min(len(replies), i+12); j++ {
				t.Logf("DEBUG %d: %v", j, replies[j])
			}
			t.Fatalf("reply %d to XADD s %s: %v", i, want, v)
		}
	}
	if acked < total/2 {
		t.Fatalf("only %d of %d XADDs acknowledged (errors: %v)", acked, total, errs)
	}
	var in map[string]bool
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		var l *cnode
		for _, cn := range nodes {
			if cn.node.Shard(0).IsLeader() {
				l = cn
			}
		}
		if l == nil {
			return fmt.Errorf("no leader")
		}
		r, err := dialRESP(l.addr)
		if err != nil {
			return err
		}
		defer r.Close()
		v, err := r.Do("XRANGE", "s", "-", "+")
		if err != nil {
			return err
		}
		if v.Kind != '*' {
			return fmt.Errorf("XRANGE: %v", v)
		}
		in = make(map[string]bool, len(v.Elems))
		for _, e := range v.Elems {
			in[e.Elems[0].Str] = true
		}
		return nil
	})
	for _, id := range ids {
		if !in[id] {
			t.Fatalf("acknowledged %s is not in the stream", id)
		}
	}
	t.Logf("%d of %d acknowledged, %d in the stream; errors: %v", acked, total, len(in), errs)
}

// TestClusterForwardPipelineTwoShards: with two shards led by different
// nodes, a pipeline alternating between their keys gets its replies in
// order, both on a node that leads neither (two upstreams in flight) and
// on a node that leads one (local writes and forwarded ones alternating).
func TestClusterForwardPipelineTwoShards(t *testing.T) {
	forwardPaths(t, 2, testForwardPipelineTwoShards)
}

func testForwardPipelineTwoShards(t *testing.T, nodes []*cnode) {
	moveLeader(t, nodes, 0, nodes[0])
	moveLeader(t, nodes, 1, nodes[1])
	keys := keysOfShards(2)
	for _, at := range []*cnode{nodes[2], nodes[0]} {
		var cmds [][]string
		var want []string
		for i := 1; i <= 60; i++ {
			k := keys[i%2]
			id := fmt.Sprintf("%d-1", i)
			cmds = append(cmds, []string{"XADD", k, id, "at", at.id})
			want = append(want, `"`+id+`"`)
			if i%7 == 0 {
				cmds = append(cmds, []string{"XLEN", k})
				want = append(want, fmt.Sprintf("(integer) %d", (i+i%2)/2))
			}
		}
		got := runPipeline(t, at.addr, cmds)
		for i := range cmds {
			if got[i].String() != want[i] {
				t.Fatalf("on %s, reply %d to %v: %v, want %s", at.id, i, cmds[i], got[i], want[i])
			}
		}
		// The next node's run starts from empty streams.
		if v := runPipeline(t, at.addr, [][]string{{"DEL", keys[0]}, {"DEL", keys[1]}}); v[0].Int != 1 || v[1].Int != 1 {
			t.Fatalf("DEL: %v", v)
		}
	}
}
