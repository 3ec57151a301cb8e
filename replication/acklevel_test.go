package replication

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

// rangeIDs returns the IDs of key's entries on shard s (local state).
func rangeIDs(t *testing.T, s *Shard, key string) []streams.ID {
	t.Helper()
	res, err := s.Query(wire.XRange{Base: wire.Base{Key: key}, Start: streams.MinID, End: streams.MaxID, Count: -1})
	if err != nil {
		t.Fatalf("xrange %s: %v", key, err)
	}
	var ids []streams.ID
	for _, e := range res.([]streams.Entry) {
		ids = append(ids, e.ID)
	}
	return ids
}

// setAckLevel sets key's ACKLEVEL through s.
func setAckLevel(t *testing.T, s *Shard, key string, l wire.AckLevel) {
	t.Helper()
	propose(t, s, wire.XCfgSet{Base: wire.Base{Key: key}, AckLevel: l})
}

// waitLeaderAcks proposes XADDs to key on s until one is answered early
// (the tracker is ready once its barrier of the term has completed).
func waitLeaderAcks(t *testing.T, s *Shard, key string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		p := s.ProposeAsync(xadd(key, "warm", "up"))
		if _, err := p.Wait(); err != nil {
			return err
		}
		if _, ok := p.LeaderAcked(); !ok {
			return errors.New("not answered at LEADER level yet")
		}
		<-p.lead.applied
		return nil
	})
}

// ackedWrite is an XADD's answer: the ID, and whether it came early.
type ackedWrite struct {
	id    streams.ID
	early bool
}

// TestAckLevelConcurrentWriters: writers race on one LEADER stream (with
// '*', 'ms-*' and, now and then, an XSETID or XCFGSET on the same key in
// flight, which make XADDs wait for the quorum) and on a QUORUM stream.
// Every answered ID is in the stream once applied, IDs follow log order,
// no early answer was contradicted by the FSM, and all replicas agree.
func TestAckLevelConcurrentWriters(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.leader()
	propose(t, l.shard, xadd("s", "f", "v"))
	propose(t, l.shard, xadd("q", "f", "v"))
	propose(t, l.shard, wire.XGroupCreate{Base: wire.Base{Key: "s"}, Group: "g", EntriesRead: -1})
	setAckLevel(t, l.shard, "s", wire.AckLeader)
	waitLeaderAcks(t, l.shard, "s")

	// A consumer reads and acknowledges meanwhile: its writes to s do
	// not move the last ID, so they do not stop early answers.
	consumed := make(chan error, 1)
	stopConsumer := make(chan struct{})
	go func() {
		for {
			select {
			case <-stopConsumer:
				consumed <- nil
				return
			default:
			}
			res, err := l.shard.Propose(wire.XReadGroup{Group: "g", Consumer: "c", Count: 10,
				Streams: []wire.ReadStream{{Key: "s", New: true}}})
			if err != nil {
				consumed <- err
				return
			}
			kes, _ := res.([]state.KeyEntries)
			for _, ke := range kes {
				ack := wire.XAck{Base: wire.Base{Key: "s"}, Group: "g"}
				for _, e := range ke.Entries {
					ack.IDs = append(ack.IDs, e.ID)
				}
				if _, err := l.shard.Propose(ack); err != nil {
					consumed <- err
					return
				}
			}
		}
	}()

	const writers, each = 8, 60
	var mu sync.Mutex
	acked := map[string][]ackedWrite{}
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := "s"
				if w == writers-1 {
					key = "q"
				}
				var cmd wire.Command = xadd(key, "w", fmt.Sprint(w), "i", fmt.Sprint(i))
				switch {
				case w == 0 && i%15 == 7:
					// Another write to the stream in flight: XADDs wait.
					cmd = wire.XCfgSet{Base: wire.Base{Key: "s"}, AckLevel: wire.AckLeader}
				case w == 1 && i%3 == 0:
					x := xadd(key, "w", "1", "i", fmt.Sprint(i))
					x.ID = streams.IDSpec{AutoSeq: true, ID: streams.ID{Ms: uint64(time.Now().UnixMilli())}}
					cmd = x
				}
				p := l.shard.ProposeAsync(cmd)
				res, err := p.Wait()
				if _, ok := cmd.(wire.XAdd); !ok {
					if err != nil {
						errs <- err
					}
					continue
				}
				if err != nil {
					// An 'ms-*' behind the stream's time is refused, as Redis.
					if !errors.Is(err, streams.ErrIDTooSmall) {
						errs <- fmt.Errorf("writer %d: %v", w, err)
					}
					continue
				}
				_, early := p.LeaderAcked()
				mu.Lock()
				acked[key] = append(acked[key], ackedWrite{res.(streams.ID), early})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stopConsumer)
	if err := <-consumed; err != nil {
		t.Fatalf("consumer: %v", err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// A last QUORUM write: once it is applied everywhere, so is every
	// earlier entry.
	propose(t, l.shard, xadd("q", "f", "last"))
	c.converge()
	nEarly := 0
	for key, ws := range acked {
		seen := map[streams.ID]bool{}
		for _, w := range ws {
			if seen[w.id] {
				t.Fatalf("%s: ID %s answered twice", key, w.id)
			}
			seen[w.id] = true
			if w.early {
				nEarly++
				if key != "s" {
					t.Fatalf("%s: a QUORUM stream's XADD answered early", key)
				}
			}
		}
		for _, nd := range c.alive() {
			ids := rangeIDs(t, nd.shard, key)
			for i := 1; i < len(ids); i++ {
				if !ids[i-1].Less(ids[i]) {
					t.Fatalf("%s on %s: %s before %s", key, nd.id, ids[i-1], ids[i])
				}
			}
			in := map[streams.ID]bool{}
			for _, id := range ids {
				in[id] = true
			}
			for id := range seen {
				if !in[id] {
					t.Fatalf("%s on %s: acknowledged ID %s missing", key, nd.id, id)
				}
			}
		}
	}
	early, fell, bad := l.shard.AckStats()
	t.Logf("%d XADDs answered early (%d by the shard), %d waited for the quorum, %d mismatches", nEarly, early, fell, bad)
	if nEarly == 0 || bad != 0 {
		t.Fatalf("%d early answers, %d mismatches", nEarly, bad)
	}
}

// TestAckLevelLeaderCanLose is what README's "Delivery guarantees" says
// ACKLEVEL LEADER can lose: with the followers cut off, an XADD to a
// LEADER stream is still answered (the entry is in the leader's log); the
// leader dies, the others elect a leader without the entry, and it is
// gone. The same XADD to a QUORUM stream is not answered.
func TestAckLevelLeaderCanLose(t *testing.T) {
	const bound = 500 * time.Millisecond
	c := newTestCluster(t, 3, func(o *Options) {
		o.QuorumTimeout = bound
		// A long lease keeps the isolated leader leading past the bound.
		o.Timing = Timing{Heartbeat: 2 * time.Second, Election: 2 * time.Second, LeaderLease: 2 * time.Second}
	})
	old := c.leader()
	propose(t, old.shard, xadd("s", "f", "v"))
	propose(t, old.shard, xadd("q", "f", "v"))
	setAckLevel(t, old.shard, "s", wire.AckLeader)
	waitLeaderAcks(t, old.shard, "s")
	c.converge()

	c.partition([]*testNode{old})
	pl := old.shard.ProposeAsync(xadd("s", "f", "lost"))
	pq := old.shard.ProposeAsync(xadd("q", "f", "never acked"))
	res, err := pl.Wait()
	if err != nil {
		t.Fatalf("LEADER XADD cut off from the followers: %v", err)
	}
	lost := res.(streams.ID)
	if _, ok := pl.LeaderAcked(); !ok {
		t.Fatal("the LEADER XADD was not answered early")
	}
	_, err = pq.Wait()
	var ou *OutcomeUnknownError
	if !errors.As(err, &ou) {
		t.Fatalf("QUORUM XADD cut off from the followers: %v, want no acknowledgement (outcome unknown)", err)
	}
	if ids := rangeIDs(t, old.shard, "s"); len(ids) > 0 && ids[len(ids)-1] == lost {
		t.Fatal("the entry was applied without a majority")
	}

	c.kill(old)
	c.heal()
	nl := c.leader()
	propose(t, nl.shard, xadd("q", "f", "after"))
	c.converge()
	for _, id := range rangeIDs(t, nl.shard, "s") {
		if id == lost {
			t.Fatalf("acknowledged entry %s survived: the test did not reproduce the loss", lost)
		}
	}
	for _, nd := range c.alive() {
		if n := xlenOf(t, nd.shard, "q"); n != 2 {
			t.Fatalf("%s: q has %d entries, want 2 (the unacknowledged one is gone)", nd.id, n)
		}
	}
	// The applied outcome tells the lost entry's fate.
	<-pl.lead.applied
	if _, err := pl.Applied(); err == nil {
		t.Fatal("the lost entry's outcome reads as applied")
	}
	t.Logf("LEADER XADD %s acknowledged then lost; QUORUM XADD: %v", lost, ou)
}

// TestAckLevelSingleNode: a single node on raft's write path answers
// LEADER XADDs at its log write, with stream-default-acklevel leader too; explicit QUORUM on a
// stream overrides the default; DEL, XSETID and MULTI on the key keep the
// assigned IDs right.
func TestAckLevelSingleNode(t *testing.T) {
	s := mustOpenRaft(t, Options{})
	s.SetDefaultAckLevel(wire.AckLeader)
	waitLeaderAcks(t, s, "d")
	propose(t, s, xadd("q", "f", "v"))
	setAckLevel(t, s, "q", wire.AckQuorum)
	var pend []*Pending
	for i := range 200 {
		var cmd wire.Command = xadd("d", "i", fmt.Sprint(i))
		switch i % 40 {
		case 10:
			cmd = wire.Del{DB: 0, Names: []string{"d"}}
		case 20:
			cmd = wire.XSetID{Base: wire.Base{Key: "d"}, LastID: streams.ID{Ms: uint64(time.Now().UnixMilli()) + 100000}, EntriesAdded: -1}
		case 30:
			cmd = wire.Exec{Ops: []wire.Op{xadd("d", "in", "multi")}}
		case 35:
			cmd = xadd("q", "i", fmt.Sprint(i))
		}
		pend = append(pend, s.ProposeAsync(cmd))
	}
	early := 0
	for i, p := range pend {
		res, err := p.Wait()
		if i%40 == 20 || i%40 == 10 || i%40 == 30 {
			continue // XSETID after DEL: no such key
		}
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		applied, ok := p.LeaderAcked()
		if !ok {
			continue
		}
		if i%40 == 35 {
			t.Fatalf("write %d to a QUORUM stream answered early", i)
		}
		early++
		<-applied
		if r, err := p.Applied(); err != nil || r != res {
			t.Fatalf("write %d: answered %v, applied %v, %v", i, res, r, err)
		}
	}
	if _, _, bad := s.AckStats(); early == 0 || bad != 0 {
		t.Fatalf("%d early answers, %d mismatches", early, bad)
	}
}

// TestAckLevelLeaderKill: writers keep adding to a LEADER stream while
// the leader is killed; the new leader answers early again once its
// barrier of the new term completes, no early answer is ever contradicted
// by the FSM, IDs stay in order and the replicas agree. (Entries answered
// by the killed leader may be lost: that is what LEADER trades.)
func TestAckLevelLeaderKill(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	l := c.leader()
	propose(t, l.shard, xadd("s", "f", "v"))
	setAckLevel(t, l.shard, "s", wire.AckLeader)
	waitLeaderAcks(t, l.shard, "s")
	var wg sync.WaitGroup
	var mu sync.Mutex
	stop := make(chan struct{})
	var shards []*Shard
	cur := l.shard
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				s := cur
				mu.Unlock()
				if _, err := s.Propose(xadd("s", "w", fmt.Sprint(w), "i", fmt.Sprint(i))); err != nil {
					// Not leader, or shut down: back off a little before
					// trying the current leader again.
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
				}
			}
		}()
	}
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n, _, _ := l.shard.AckStats(); n < 50 {
			return fmt.Errorf("%d early answers", n)
		}
		return nil
	})
	shards = append(shards, l.shard)
	c.kill(l)
	nl := c.leader()
	mu.Lock()
	cur = nl.shard
	mu.Unlock()
	before, _, _ := nl.shard.AckStats()
	testutil.Eventually(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n, _, _ := nl.shard.AckStats(); n < before+50 {
			return fmt.Errorf("%d early answers on the new leader", n-before)
		}
		return nil
	})
	close(stop)
	wg.Wait()
	propose(t, nl.shard, xadd("s", "f", "last"))
	c.converge()
	for _, nd := range c.alive() {
		shards = append(shards, nd.shard)
		ids := rangeIDs(t, nd.shard, "s")
		for i := 1; i < len(ids); i++ {
			if !ids[i-1].Less(ids[i]) {
				t.Fatalf("%s: %s before %s", nd.id, ids[i-1], ids[i])
			}
		}
	}
	for _, s := range shards {
		if _, _, bad := s.AckStats(); bad != 0 {
			t.Fatalf("%d early answers contradicted by the FSM", bad)
		}
	}
}

// TestAckLevelRestoredLeaderStream: a stream RESTOREd with ACKLEVEL LEADER
// on a shard (on raft's write path) that never had one (nor the default) is
// answered early like one set by XCFGSET: the FSM wakes the idle tracker for it.
func TestAckLevelRestoredLeaderStream(t *testing.T) {
	src := mustOpen(t, Options{})
	propose(t, src, xadd("s", "f", "v"))
	setAckLevel(t, src, "s", wire.AckLeader)
	p, err := src.Query(wire.Dump{Base: wire.Base{Key: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpenRaft(t, Options{})
	propose(t, s, xadd("q", "f", "v"))
	propose(t, s, wire.Restore{Base: wire.Base{Key: "r"}, Payload: p.([]byte)})
	waitLeaderAcks(t, s, "r")
	pq := s.ProposeAsync(xadd("q", "f", "v"))
	if _, err := pq.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, early := pq.LeaderAcked(); early {
		t.Fatal("an XADD to a QUORUM stream was answered early")
	}
}
