package streams

import (
	"bytes"
	"math/rand"
	"runtime"
	"testing"

	"streamd/internal/testutil"
)

// TestMemoryCountFollowsChanges runs random appends (of varied sizes, so
// nodes split by bytes too), deletes and trims, and after each checks the
// running count against a walk of the nodes.
func TestMemoryCountFollowsChanges(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := New()
		s.Memory()
		var live []ID
		next := ID{Ms: 1}
		for step := 0; step < 3000; step++ {
			switch op := rng.Intn(10); {
			case op < 6:
				next = ID{Ms: next.Ms + uint64(rng.Intn(2)), Seq: next.Seq + 1}
				v := bytes.Repeat([]byte{'v'}, rng.Intn(300))
				s.AppendNode(next, [][]byte{[]byte("f"), v}, 1+rng.Intn(50), 1024)
				live = append(live, next)
			case op < 8 && len(live) > 0:
				i := rng.Intn(len(live))
				s.Delete(live[i])
				live = append(live[:i], live[i+1:]...)
			case op == 8:
				s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: int64(rng.Intn(len(live) + 1)), Approx: rng.Intn(2) == 0})
			default:
				if len(live) > 0 {
					s.Trim(TrimArgs{Strategy: TrimMinID, MinID: live[rng.Intn(len(live))], Approx: rng.Intn(2) == 0})
				}
			}
			if err := s.CheckMemory(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			live = live[len(live)-int(s.Len()):]
			s.Memory() // as the keyspace settles after each write
			if len(live) > 0 && rng.Intn(50) == 0 {
				// XSETID down to the last live entry (over deleted ones
				// at the tail): the next append drops those tombstones.
				top := live[len(live)-1]
				if err := s.SetID(top, -1, nil); err != nil {
					t.Fatal(err)
				}
				next = top
			}
		}
		if got, want := s.Memory(), s.fixedMemory()+s.walkNodes(0); got != want {
			t.Fatalf("seed %d: Memory %d, walk %d", seed, got, want)
		}
		if c := s.Clone(); c.MemoryUsage(0) != c.Memory() {
			t.Fatalf("seed %d: clone sampled %d, counted %d", seed, c.MemoryUsage(0), c.Memory())
		}
	}
}

// TestMemoryMatchesHeap compares Memory with the live heap streams add,
// for small and large entries (a thousand streams of one entry: the heap
// is too coarse a measure for one).
func TestMemoryMatchesHeap(t *testing.T) {
	for _, tc := range []struct {
		name             string
		streams, entries int
		value            int
	}{{"one entry", 1000, 1, 5}, {"small entries", 1, 100_000, 1}, {"large entries", 1, 40, 20_000}, {"mid entries", 1, 10_000, 200}} {
		before := testutil.LiveHeap()
		ss := make([]*Stream, tc.streams)
		v := bytes.Repeat([]byte{'x'}, tc.value)
		for k := range ss {
			ss[k] = New()
			for i := 0; i < tc.entries; i++ {
				ss[k].Append(ID{Ms: uint64(1 + i/4), Seq: uint64(i % 4)}, [][]byte{[]byte("field"), v})
			}
		}
		real := int64(testutil.LiveHeap()-before) - int64(8*tc.streams) // less the slice holding them
		var est int64
		for _, s := range ss {
			est += s.Memory()
		}
		runtime.KeepAlive(ss)
		t.Logf("%s: estimate %d, heap %d", tc.name, est, real)
		if d := est - real; d < -real/10 || d > real/10 {
			t.Errorf("%s: estimate %d, heap %d: off by more than 10%%", tc.name, est, real)
		}
	}
}
