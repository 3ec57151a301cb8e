package replication

import (
	"sync"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func TestProposeClockNeverGoesBack(t *testing.T) {
	times := []int64{1000, 900, 1200}
	i := 0
	s := newShardClock(func() int64 { now := times[i%len(times)]; i++; return now })
	want := []streams.ID{{Ms: 1000}, {Ms: 1000, Seq: 1}, {Ms: 1200}}
	for j, w := range want {
		res, err := s.Propose(wire.XAdd{Base: wire.Base{Key: "s"}, ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), []byte("v")}})
		if err != nil || res != w {
			t.Fatalf("xadd %d = %v, %v; want %v", j, res, err, w)
		}
	}
}

func TestQueryUsesClampedClock(t *testing.T) {
	now := int64(1000)
	s := newShardClock(func() int64 { return now })
	if _, err := s.Propose(wire.XAdd{Base: wire.Base{Key: "k"}, ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Propose(wire.Expire{Base: wire.Base{Key: "k"}, Ms: 100, Relative: true}); err != nil {
		t.Fatal(err)
	}
	now = 500 // the clock steps back: the key keeps its remaining time from 1000
	if res, _ := s.Query(wire.TTL{Base: wire.Base{Key: "k"}, Millis: true}); res != int64(100) {
		t.Fatalf("pttl %v, want 100", res)
	}
	now = 1100
	if res, _ := s.Query(wire.Exists{Names: []string{"k"}}); res != int64(0) {
		t.Fatalf("exists after deadline %v", res)
	}
}

func TestShardConcurrent(t *testing.T) {
	s := NewShard()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if _, err := s.Propose(wire.XAdd{Base: wire.Base{Key: "s"}, ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), []byte("v")}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if _, err := s.Query(wire.XRange{Base: wire.Base{Key: "s"}, End: streams.MaxID, Count: 10}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if res, _ := s.Query(wire.XLen{Base: wire.Base{Key: "s"}}); res != int64(800) {
		t.Fatalf("xlen %v, want 800", res)
	}
	if s.NodeMaxEntries() != streams.DefaultNodeMaxEntries || s.NodeMaxBytes() != 4096 {
		t.Fatal("default node settings")
	}
}
