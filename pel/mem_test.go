package pel

import (
	"math/rand"
	"runtime"
	"testing"

	"streamd/internal/testutil"
	"streamd/streams"
)

// TestTreeBytesMatchesHeap compares TreeBytes with what building the PEL
// really took from the heap: 200k entries delivered in order to 10
// consumers (full leaves), then half of them acknowledged at random (leaves
// of every fill), then a clone that changes (copied nodes). The trees are
// nearly all of a PEL's memory, so the two must agree within 3%.
func TestTreeBytesMatchesHeap(t *testing.T) {
	const n = 200_000
	consumers := []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}
	within := func(step string, heap int64, p *PEL) {
		t.Helper()
		got := p.TreeBytes()
		if d := float64(got-heap) / float64(heap); d < -0.03 || d > 0.03 {
			t.Fatalf("%s: TreeBytes %d, heap grew %d (%.1f%%)", step, got, heap, 100*d)
		}
		t.Logf("%s: TreeBytes %d, heap %d, %.1f bytes per pending entry", step, got, heap, float64(heap)/float64(p.Len()))
	}
	before := testutil.LiveHeap()
	p := New()
	for j := 0; j < n; j++ {
		id := streams.ID{Ms: 1_700_000_000_000 + uint64(j/4), Seq: uint64(j % 4)}
		p.Put(NACK{ID: id, Consumer: consumers[j%len(consumers)], DeliveryMs: int64(j), DeliveryCount: 1})
	}
	within("in order", int64(testutil.LiveHeap()-before), p)

	r := rand.New(rand.NewSource(1))
	for _, j := range r.Perm(n)[:n/2] {
		p.Remove(streams.ID{Ms: 1_700_000_000_000 + uint64(j/4), Seq: uint64(j % 4)})
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	within("half acknowledged at random", int64(testutil.LiveHeap()-before), p)

	c := p.Clone()
	mid := testutil.LiveHeap()
	for j := 0; j < n; j += 100 {
		c.Remove(streams.ID{Ms: 1_700_000_000_000 + uint64(j/4), Seq: uint64(j % 4)})
	}
	// The clone's copied nodes are what it adds to the heap; its TreeBytes
	// counts all it reaches: those, and the nodes it still shares with p.
	grown := int64(testutil.LiveHeap() - mid)
	if shared := c.TreeBytes() - grown; grown <= 0 || shared < 0 || shared > p.TreeBytes() {
		t.Fatalf("clone: %d + %d bytes of trees, heap grew %d", p.TreeBytes(), c.TreeBytes(), grown)
	}
	runtime.KeepAlive(p)
	runtime.KeepAlive(c)
}
