package replication

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/replication/wire"
	"streamd/streams"
)

// The FSM finishes the small batches this node proposed as it applies
// them; the answers are those of the log (IDs in log order, each write's
// entry index), whoever finished a batch, and nothing stays recorded.
func TestFSMFinishesSmallBatches(t *testing.T) {
	s, err := open(Options{Dir: t.TempDir()}, hooks{raftWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(false)
	const writers, each = 8, 40
	ids := make([][]streams.ID, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				p := s.ProposeAsync(xadd("s", "w", fmt.Sprint(w), "i", fmt.Sprint(i)))
				res, err := p.Wait()
				if err != nil {
					t.Errorf("writer %d write %d: %v", w, i, err)
					return
				}
				id, ok := res.(streams.ID)
				if !ok || p.Index() == 0 {
					t.Errorf("writer %d write %d answered %#v at index %d", w, i, res, p.Index())
					return
				}
				ids[w] = append(ids[w], id)
			}
		}()
	}
	wg.Wait()
	for w, l := range ids {
		for i := 1; i < len(l); i++ {
			if !l[i-1].Less(l[i]) {
				t.Fatalf("writer %d: ID %v after %v", w, l[i], l[i-1])
			}
		}
	}
	if s.sent.finished.Load() == 0 {
		t.Fatal("no batch was finished by the FSM")
	}
	testutil.Eventually(t, 5*time.Second, time.Millisecond, func() error {
		if n := s.sent.n.Load(); n != 0 {
			return fmt.Errorf("%d batches still recorded", n)
		}
		return nil
	})
}

// ProposeAsyncMany queues its commands in order, as ProposeAsync of each
// would; once the shard is closed they fail at once.
func TestProposeAsyncMany(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cmds := make([]wire.Command, 40)
	for i := range cmds {
		cmds[i] = xadd("s", "i", fmt.Sprint(i))
	}
	out := make([]*Pending, len(cmds))
	s.ProposeAsyncMany(cmds, out)
	var last streams.ID
	for i, p := range out {
		res, err := p.Wait()
		id, ok := res.(streams.ID)
		if err != nil || !ok || !last.Less(id) {
			t.Fatalf("write %d: %v %v (after %v)", i, res, err, last)
		}
		last = id
	}
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	s.ProposeAsyncMany(cmds[:2], out)
	for i, p := range out[:2] {
		if _, err := p.Wait(); !errors.Is(err, ErrShuttingDown) {
			t.Fatalf("write %d after close: %v", i, err)
		}
	}
}
