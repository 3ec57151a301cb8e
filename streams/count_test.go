package streams

import (
	"fmt"
	"testing"
)

func TestCountBefore(t *testing.T) {
	s := New()
	for i := uint64(1); i <= 350; i++ {
		s.AppendNode(ID{Ms: i}, [][]byte{[]byte("f"), []byte("v")}, 100, 0)
	}
	// Tombstones in the first node and in the middle of the third.
	for _, ms := range []uint64{3, 4, 250} {
		if !s.Delete(ID{Ms: ms}) {
			t.Fatalf("delete %d", ms)
		}
	}
	naive := func(id ID) int64 {
		var n int64
		s.Ascend(MinID, func(e Entry) bool {
			if !e.ID.Less(id) {
				return false
			}
			n++
			return true
		})
		return n
	}
	for _, id := range []ID{MinID, {Ms: 1}, {Ms: 2}, {Ms: 5}, {Ms: 100}, {Ms: 101}, {Ms: 101, Seq: 1},
		{Ms: 250}, {Ms: 251}, {Ms: 350}, {Ms: 351}, {Ms: 1 << 40}} {
		if got, want := s.CountBefore(id), naive(id); got != want {
			t.Errorf("CountBefore(%s) = %d, want %d", id, got, want)
		}
	}
	if got := New().CountBefore(ID{Ms: 5}); got != 0 {
		t.Errorf("empty stream: %d", got)
	}
}

// TestTrimFrom: with From, the entries below it stay unasked, in earlier
// nodes and in the node holding From.
func TestTrimFrom(t *testing.T) {
	for _, strat := range []TrimStrategy{TrimMaxLen, TrimMinID} {
		s := New()
		for i := uint64(1); i <= 30; i++ {
			s.AppendNode(ID{Ms: i}, [][]byte{[]byte("f"), []byte("v")}, 10, 0)
		}
		var asked []uint64
		a := TrimArgs{Strategy: strat, MaxLen: 19, MinID: ID{Ms: 26}, From: ID{Ms: 14},
			Keep: func(id ID) bool { asked = append(asked, id.Ms); return id.Ms == 20 }}
		if n := s.Trim(a); n != 11 {
			t.Fatalf("%v: removed %d, want 11 (14-25 but 20)", strat, n)
		}
		if asked[0] != 14 || len(asked) != 12 {
			t.Fatalf("%v: asked %v", strat, asked)
		}
		var left []uint64
		s.Ascend(MinID, func(e Entry) bool { left = append(left, e.ID.Ms); return true })
		want := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 20, 26, 27, 28, 29, 30}
		if fmt.Sprint(left) != fmt.Sprint(want) {
			t.Fatalf("%v: left %v, want %v", strat, left, want)
		}
		if s.FirstID() != (ID{Ms: 1}) {
			t.Fatalf("first ID %s", s.FirstID())
		}
	}
}
