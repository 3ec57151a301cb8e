package groups

import (
	"testing"

	"streamd/streams"
)

func TestRefs(t *testing.T) {
	s := streams.New()
	for i := 1; i <= 5; i++ {
		s.Append(streams.ID{Ms: uint64(i)}, [][]byte{[]byte("f"), []byte("v")})
	}
	id := func(ms uint64) streams.ID { return streams.ID{Ms: ms} }
	var set Set
	if set.Refs().Referenced(id(1)) {
		t.Fatal("no groups: nothing is referenced")
	}
	// Spec §1.2: group1 at 1-0, group2 at 3-0.
	set.Create("group1", id(1), -1)
	g2 := set.Create("group2", id(3), -1)
	r := set.Refs()
	if r.Referenced(id(1)) || !r.Referenced(id(2)) || !r.Referenced(id(5)) {
		t.Errorf("min last-id 1-0: 1 free, 2 and 5 referenced")
	}
	set.Destroy("group1")
	r = set.Refs()
	if r.Referenced(id(2)) || r.Referenced(id(3)) || !r.Referenced(id(4)) {
		t.Errorf("min last-id 3-0: 2, 3 free, 4 referenced")
	}
	// Pending in group2 (delivered: at or below its last-id).
	g2.ReadHistory(s, "c", streams.MinID, 0, 10) // creates the consumer; nothing pending yet
	g2.SetID(streams.MinID, -1)
	g2.ReadNew(s, "c", 2, false, 10) // 1 and 2 pending, last-id 2-0
	g2.SetID(id(5), -1)
	r = set.Refs()
	if !r.Referenced(id(1)) || !r.Referenced(id(2)) || r.Referenced(id(3)) {
		t.Errorf("pending 1, 2 referenced; 3 free")
	}
	if n := set.DropRefs(id(1)); n != 1 {
		t.Errorf("DropRefs %d", n)
	}
	if set.DropRefs(id(1)) != 0 || r.Referenced(id(1)) || g2.Pending("c") != 1 {
		t.Errorf("after DropRefs: pending %d", g2.Pending("c"))
	}
	if err := set.Check(); err != nil {
		t.Fatal(err)
	}
}

// Ascending answers as Referenced for any ascending sequence of IDs.
func TestRefsAscending(t *testing.T) {
	s := streams.New()
	for i := 1; i <= 500; i++ {
		s.Append(streams.ID{Ms: uint64(i)}, [][]byte{[]byte("f"), []byte("v")})
	}
	var set Set
	for gi, name := range []string{"a", "b", "c"} {
		g := set.Create(name, streams.MinID, -1)
		g.ReadNew(s, "c", int64(400+30*gi), false, 1)
		// Acknowledge a pattern, different per group, leaving runs
		// longer and shorter than refBatch.
		var acks []streams.ID
		for i := 1; i <= 500; i++ {
			if (i/(7+gi*50))%2 == 0 {
				acks = append(acks, streams.ID{Ms: uint64(i)})
			}
		}
		g.Ack(acks)
	}
	r := set.Refs()
	for _, step := range []uint64{1, 3, 64, 65, 200} {
		asc := r.Ascending()
		for ms := uint64(0); ms <= 520; ms += step {
			id := streams.ID{Ms: ms}
			if got, want := asc(id), r.Referenced(id); got != want {
				t.Fatalf("step %d: %v: Ascending %v, Referenced %v", step, id, got, want)
			}
		}
	}
	var empty Set
	if empty.Refs().Ascending()(streams.ID{Ms: 1}) {
		t.Fatal("no groups: referenced")
	}
}
