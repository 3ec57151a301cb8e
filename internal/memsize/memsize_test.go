package memsize

import (
	"runtime"
	"testing"

	"github.com/google/btree"

	"streamd/internal/testutil"
)

func TestClass(t *testing.T) {
	for n, want := range map[int64]int64{0: 0, 1: 8, 8: 8, 9: 16, 33: 48, 1025: 1152, 32768: 32768, 32769: 40960} {
		if got := Class(n); got != want {
			t.Errorf("Class(%d) = %d, want %d", n, got, want)
		}
	}
}

// sink makes the appended slice live on the heap.
var sink []uint64

func TestAppendedMatchesGrowth(t *testing.T) {
	for _, n := range []int{1, 5, 31, 64, 100, 1000, 5000} {
		sink = nil
		for i := 0; i < n; i++ {
			sink = append(sink, uint64(i))
		}
		if got, want := Appended(int64(n), 8), Class(int64(cap(sink))*8); got != want {
			t.Errorf("Appended(%d, 8) = %d, want %d (cap %d)", n, got, want, cap(sink))
		}
	}
}

type item16 struct{ a, b uint64 }

// TestBTreeMatchesHeap fills trees in ascending order and compares BTree
// with the live heap they take (many small trees: one is too small a
// change of the heap to measure).
func TestBTreeMatchesHeap(t *testing.T) {
	for _, n := range []int{10, 63, 64, 100, 200, 1000, 5000, 100_000} {
		trees := max(1, 10_000/n)
		free := btree.NewFreeListG[item16](0)
		keep := make([]*btree.BTreeG[item16], trees)
		before := testutil.LiveHeap()
		for k := range keep {
			keep[k] = btree.NewWithFreeListG(32, func(a, b item16) bool { return a.a < b.a }, free)
			for i := 0; i < n; i++ {
				keep[k].ReplaceOrInsert(item16{a: uint64(i)})
			}
		}
		real := int64(testutil.LiveHeap()-before) - Class(int64(8*trees))
		runtime.KeepAlive(keep)
		est := int64(trees) * BTree(int64(n), 16)
		if d := est - real; d < -real/10 || d > real/10 {
			t.Errorf("%d trees of %d items of 16 bytes: estimate %d, heap %d", trees, n, est, real)
		}
		if testing.Verbose() {
			t.Logf("%d trees of %d items: estimate %d heap %d", trees, n, est, real)
		}
	}
}
