package streams

import "testing"

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
