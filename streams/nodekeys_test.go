package streams

import (
	"reflect"
	"testing"
)

// TestNodeKeys checks that NodeKeys lists each node's master ID in order,
// follows node removal (a node whose entries are all deleted goes) and
// stops when fn returns false.
func TestNodeKeys(t *testing.T) {
	keys := func(s *Stream) []ID {
		out := []ID{}
		s.NodeKeys(func(id ID) bool { out = append(out, id); return true })
		return out
	}
	s := New()
	if got := keys(s); len(got) != 0 {
		t.Fatalf("empty stream: %v", got)
	}
	for i := 1; i <= 7; i++ {
		s.AppendNode(ID{uint64(i), 0}, [][]byte{[]byte("f"), []byte("v")}, 3, 0)
	}
	if got, want := keys(s), []ID{{1, 0}, {4, 0}, {7, 0}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	// Deleting the master entry keeps the node (tombstone); deleting all
	// of a node's entries removes it.
	s.Delete(ID{4, 0})
	if got, want := keys(s), []ID{{1, 0}, {4, 0}, {7, 0}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after deleting 4-0: %v, want %v", got, want)
	}
	s.Delete(ID{5, 0})
	s.Delete(ID{6, 0})
	if got, want := keys(s), []ID{{1, 0}, {7, 0}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after emptying a node: %v, want %v", got, want)
	}
	if int64(len(keys(s))) != s.NodeCount() {
		t.Fatalf("NodeKeys lists %d keys, NodeCount %d", len(keys(s)), s.NodeCount())
	}
	var first []ID
	s.NodeKeys(func(id ID) bool { first = append(first, id); return false })
	if !reflect.DeepEqual(first, []ID{{1, 0}}) {
		t.Fatalf("early stop: %v", first)
	}
}
