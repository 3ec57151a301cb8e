package server

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/replication"
	"streamd/replication/wire"
	"streamd/streams"
)

// presp encodes one command as a RESP multibulk.
func presp(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// TestPipelineRepliesInOrder sends one pipeline mixing plain writes (which
// are group-committed), a write the engine refuses, a read, a request
// refused at lookup and explicit IDs: every reply comes back in request
// order and the stream holds exactly the acknowledged entries.
func TestPipelineRepliesInOrder(t *testing.T) {
	d := startDurable(t, t.TempDir())
	c := d.dial()
	type step struct {
		args  []string
		check func(v Value) error
	}
	var steps []step
	idReply := func(v Value) error {
		if v.Kind != '$' || v.Nil {
			return fmt.Errorf("want an ID, got %s", v)
		}
		return nil
	}
	is := func(want string) func(Value) error {
		return func(v Value) error {
			if v.String() != want {
				return fmt.Errorf("got %s, want %s", v, want)
			}
			return nil
		}
	}
	for i := 0; i < 100; i++ {
		steps = append(steps, step{[]string{"XADD", "p", "*", "i", strconv.Itoa(i)}, idReply})
	}
	steps = append(steps,
		step{[]string{"XADD", "p", "1-1", "x", "y"},
			is("(error) ERR The ID specified in XADD is equal or smaller than the target stream top item")},
		step{[]string{"XLEN", "p"}, is("(integer) 100")},
	)
	for i := 100; i < 150; i++ {
		steps = append(steps, step{[]string{"XADD", "p", "*", "i", strconv.Itoa(i)}, idReply})
	}
	steps = append(steps,
		step{[]string{"XADD", "q", "5-5", "a", "b"}, is(`"5-5"`)},
		step{[]string{"XADD", "q", "5-*", "a", "b"}, is(`"5-6"`)},
		step{[]string{"XADD", "q", "*", "f"}, is("(error) ERR wrong number of arguments for 'xadd' command")},
		step{[]string{"XADD", "q", "MAXLEN", "x", "*", "a", "b"}, is("(error) ERR value is not an integer or out of range")},
		step{[]string{"XDEL", "q", "5-5"}, is("(integer) 1")},
		step{[]string{"XLEN", "q"}, is("(integer) 1")},
	)
	var b strings.Builder
	for _, s := range steps {
		b.WriteString(presp(s.args...))
	}
	if err := c.SendRaw([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	var ids []streams.ID
	for i, s := range steps {
		v, err := c.Receive(10 * time.Second)
		if err != nil {
			t.Fatalf("reply %d (%v): %v", i, s.args, err)
		}
		if err := s.check(v); err != nil {
			t.Fatalf("reply %d (%v): %v", i, s.args, err)
		}
		if s.args[0] == "XADD" && s.args[1] == "p" && v.Kind == '$' {
			id, err := streams.ParseID([]byte(v.Str), 0)
			if err != nil {
				t.Fatalf("reply %d: %v", i, err)
			}
			if len(ids) > 0 && !ids[len(ids)-1].Less(id) {
				t.Fatalf("reply %d: ID %v not after %v", i, id, ids[len(ids)-1])
			}
			ids = append(ids, id)
		}
	}
	v := pdo(t, c, "XRANGE", "p", "-", "+")
	if len(v.Elems) != len(ids) {
		t.Fatalf("XRANGE has %d entries, %d acknowledged", len(v.Elems), len(ids))
	}
	for i, e := range v.Elems {
		if e.Elems[0].Str != ids[i].String() || e.Elems[1].Elems[1].Str != strconv.Itoa(i) {
			t.Fatalf("entry %d = %s, want %v i %d", i, e, ids[i], i)
		}
	}
	cs := pinfo(t, c, "commandstats")["cmdstat_xadd"]
	if !strings.HasPrefix(cs, "calls=154,") || !strings.HasSuffix(cs, ",rejected_calls=1,failed_calls=2") {
		t.Errorf("cmdstat_xadd = %q, want calls=154 rejected_calls=1 failed_calls=2", cs)
	}
}

// pipelineEvent is a proposal or a wait the test observed, by op index.
type pipelineEvent struct {
	wait bool
	n    string // the XADD's field value
}

// recordingPending logs its Wait.
type recordingPending struct {
	inner pendingWrite
	n     string
	log   func(pipelineEvent)
}

func (p recordingPending) Wait() (any, error) {
	p.log(pipelineEvent{wait: true, n: p.n})
	return p.inner.Wait()
}

// TestPipelineProposesBeforeWaiting proves the group commit: a connection's
// buffered XADDs are all handed to the shard before the first is waited
// for. The pipeline sits behind a blocked XREAD until the server has read
// all of it, so every XADD is buffered when the connection gets to them.
func TestPipelineProposesBeforeWaiting(t *testing.T) {
	const n = 50
	var mu sync.Mutex
	var events []pipelineEvent
	record := func(e pipelineEvent) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	dir := t.TempDir()
	sh, err := replication.Open(replication.Options{Dir: dir, Logger: pquietLog()})
	if err != nil {
		t.Fatal(err)
	}
	d := serveShard(t, dir, sh, func(s *Server) {
		orig := s.proposeMany
		s.proposeMany = func(i int, ops []wire.Command, out []pendingWrite, waiting bool) {
			orig(i, ops, out, waiting)
			for k, op := range ops {
				if add, ok := op.(wire.XAdd); ok && add.Key == "p" {
					e := pipelineEvent{n: string(add.Fields[1])}
					record(e)
					out[k] = recordingPending{inner: out[k], n: e.n, log: record}
				}
			}
		}
	})
	a, gate := d.dial(), d.dial()
	var b strings.Builder
	b.WriteString(presp("XREAD", "BLOCK", "0", "STREAMS", "gate", "$"))
	for i := 0; i < n; i++ {
		b.WriteString(presp("XADD", "p", "*", "n", strconv.Itoa(i)))
	}
	if err := a.SendRaw([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, time.Millisecond, func() error {
		for _, c := range d.srv.clientList() {
			if c.isBlocked() && c.backlog.Load() == n {
				return nil
			}
		}
		return errors.New("the pipeline is not buffered behind the blocked XREAD yet")
	})
	pdo(t, gate, "XADD", "gate", "*", "open", "1")
	if v, err := a.Receive(10 * time.Second); err != nil || v.Kind != '*' {
		t.Fatalf("XREAD: %s %v", v, err)
	}
	for i := 0; i < n; i++ {
		if v, err := a.Receive(10 * time.Second); err != nil || v.Kind != '$' {
			t.Fatalf("XADD %d: %s %v", i, v, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2*n {
		t.Fatalf("%d events, want %d", len(events), 2*n)
	}
	for i, e := range events {
		wantWait := i >= n
		want := strconv.Itoa(i % n)
		if e.wait != wantWait || e.n != want {
			t.Fatalf("event %d = %+v, want wait=%v n=%s (all proposals before the first wait, in order)",
				i, e, wantWait, want)
		}
	}
	f := pinfo(t, gate, "persistence")
	if m := pinfoInt(t, f, "group_commit_max_batch"); m < n {
		t.Errorf("group_commit_max_batch = %d, want >= %d", m, n)
	}
}

// TestPipelineDrainsBeforeOtherCommands: a read, MULTI and a WATCHed
// client's write each see the pipelined writes sent before them.
func TestPipelineDrainsBeforeOtherCommands(t *testing.T) {
	d := startDurable(t, t.TempDir())
	c := d.dial()
	var b strings.Builder
	b.WriteString(presp("XADD", "k", "1-1", "a", "1"))
	b.WriteString(presp("XADD", "k", "2-1", "a", "2"))
	b.WriteString(presp("WATCH", "k"))
	b.WriteString(presp("XADD", "k", "3-1", "a", "3"))
	b.WriteString(presp("MULTI"))
	b.WriteString(presp("XLEN", "k"))
	b.WriteString(presp("EXEC"))
	b.WriteString(presp("XADD", "k", "4-1", "a", "4"))
	b.WriteString(presp("XLEN", "k"))
	if err := c.SendRaw([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	// The client's own XADD after WATCH dirties its watch: EXEC aborts.
	for i, want := range []string{`"1-1"`, `"2-1"`, "+OK", `"3-1"`, "+OK", "+QUEUED", "(nil array)", `"4-1"`, "(integer) 4"} {
		v, err := c.Receive(10 * time.Second)
		if err != nil || v.String() != want {
			t.Fatalf("reply %d = %s %v, want %s", i, v, err, want)
		}
	}
}
