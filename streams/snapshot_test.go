package streams

import (
	"errors"
	"reflect"
	"testing"
)

// layout is a stream's node layout, for comparisons.
type layoutNode struct {
	Key     ID
	Entries []Entry
	Deleted []bool
}

func layout(s *Stream) []layoutNode {
	var out []layoutNode
	s.SnapshotNodes(func(key ID, entries []Entry, deleted []bool) bool {
		out = append(out, layoutNode{key, append([]Entry(nil), entries...), append([]bool(nil), deleted...)})
		return true
	})
	return out
}

// restore rebuilds s through a Restorer from its layout.
func restore(t *testing.T, s *Stream) *Stream {
	t.Helper()
	r := NewRestorer(s.SnapshotMeta())
	for _, n := range layout(s) {
		if err := r.AddNode(n.Key, n.Entries, n.Deleted); err != nil {
			t.Fatal(err)
		}
	}
	c, err := r.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sameStream(t *testing.T, a, b *Stream) {
	t.Helper()
	if a.Len() != b.Len() || a.LastID() != b.LastID() || a.EntriesAdded() != b.EntriesAdded() ||
		a.MaxDeletedID() != b.MaxDeletedID() || a.FirstID() != b.FirstID() || a.NodeCount() != b.NodeCount() ||
		a.SnapshotMeta() != b.SnapshotMeta() {
		t.Fatalf("counters differ: %+v len %d vs %+v len %d", a.SnapshotMeta(), a.Len(), b.SnapshotMeta(), b.Len())
	}
	if !reflect.DeepEqual(layout(a), layout(b)) {
		t.Fatalf("layouts differ:\n%+v\n%+v", layout(a), layout(b))
	}
}

// TestRestorerKeepsLayout rebuilds a stream with tombstones, a node left
// with only tombstones by an exact trim and XSETID counters, then checks
// that the copy has the same nodes and trims and appends the same.
func TestRestorerKeepsLayout(t *testing.T) {
	s := New()
	for i := uint64(1); i <= 20; i++ {
		s.AppendNode(ID{Ms: i}, [][]byte{[]byte("f"), []byte("v")}, 4, 0)
	}
	s.Delete(ID{Ms: 2})
	s.Delete(ID{Ms: 8}) // the last of node 5-0..8-0
	s.Trim(TrimArgs{Strategy: TrimMinID, MinID: ID{Ms: 8}})
	if err := s.SetID(ID{Ms: 30}, 25, &ID{Ms: 9}); err != nil {
		t.Fatal(err)
	}
	c := restore(t, s)
	sameStream(t, s, c)

	// The same operations on both keep them equal.
	for _, x := range []*Stream{s, c} {
		x.AppendNode(ID{Ms: 31}, [][]byte{[]byte("a"), []byte("b")}, 4, 0)
		x.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 6, Approx: true})
		x.Delete(ID{Ms: 14})
	}
	sameStream(t, s, c)

	e := New()
	sameStream(t, e, restore(t, e))
}

// TestRestorerKeepsTail covers XSETID on an emptied stream below an old
// node's key: the append drops the tombstone-only node (dropTombstonesFrom),
// and a restored or cloned stream keeps appending to the same tail.
func TestRestorerKeepsTail(t *testing.T) {
	s := New()
	for i := uint64(10); i < 12; i++ {
		s.AppendNode(ID{Ms: i}, [][]byte{[]byte("f"), []byte("v")}, 2, 0)
	}
	s.Delete(ID{Ms: 11})
	s.Trim(TrimArgs{Strategy: TrimMinID, MinID: ID{Ms: 11}}) // node 10..11, all tombstones
	if s.Len() != 0 || s.NodeCount() != 1 {
		t.Fatalf("setup: len %d nodes %d", s.Len(), s.NodeCount())
	}
	if err := s.SetID(ID{Ms: 1}, -1, nil); err != nil {
		t.Fatal(err)
	}
	s.AppendNode(ID{Ms: 2}, [][]byte{[]byte("f"), []byte("v")}, 2, 0) // node 10-0 dropped: new node 2-0
	if m := s.SnapshotMeta(); m.Tail != 0 || s.NodeCount() != 1 {
		t.Fatalf("tail index %d nodes %d, want the one node 2-0", m.Tail, s.NodeCount())
	}
	for _, c := range []*Stream{restore(t, s), s.CloneForSnapshot()} {
		sameStream(t, s, c)
		a := s.CloneForSnapshot()
		for _, x := range []*Stream{a, c} {
			x.AppendNode(ID{Ms: 3}, [][]byte{[]byte("f"), []byte("v")}, 2, 0) // into node 2-0
		}
		sameStream(t, a, c)
		if a.NodeCount() != 1 {
			t.Fatalf("append after restore started a node: %+v", layout(a))
		}
	}
}

func TestRestorerErrors(t *testing.T) {
	e := []Entry{{ID: ID{Ms: 5}, Fields: [][]byte{[]byte("f"), []byte("v")}}}
	r := NewRestorer(SnapshotMeta{Tail: 0})
	if err := r.AddNode(ID{Ms: 5}, nil, nil); !errors.Is(err, ErrBadSnapshotNode) {
		t.Fatalf("empty node: %v", err)
	}
	if err := r.AddNode(ID{Ms: 5}, e, []bool{false, true}); !errors.Is(err, ErrBadSnapshotNode) {
		t.Fatalf("flags length: %v", err)
	}
	if err := r.AddNode(ID{Ms: 5}, e, []bool{false}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddNode(ID{Ms: 5}, e, []bool{false}); !errors.Is(err, ErrBadSnapshotNode) {
		t.Fatalf("node key not increasing: %v", err)
	}
	for _, tail := range []int{-1, 1, -2} {
		r := NewRestorer(SnapshotMeta{Tail: tail})
		if err := r.AddNode(ID{Ms: 5}, e, []bool{false}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Finish(); !errors.Is(err, ErrBadSnapshotNode) {
			t.Fatalf("tail %d of 1 node: %v", tail, err)
		}
	}
	if _, err := NewRestorer(SnapshotMeta{Tail: 0}).Finish(); !errors.Is(err, ErrBadSnapshotNode) {
		t.Fatalf("tail 0 of no node: %v", err)
	}
}
