package streams

import (
	"fmt"
	"math"
	"testing"
)

// checkInvariants verifies the stream's internal structure: nodes in key
// order with ascending entries, each keyed by its first entry, live counts
// and the length agreeing with the tombstones, tail the last node, and the
// recorded first ID the first live entry.
func checkInvariants(t *testing.T, s *Stream) {
	t.Helper()
	var live int64
	var prev *ID
	var last *node
	s.nodes.Ascend(func(n *node) bool {
		last = n
		var entries []Entry
		var deleted []bool
		for i, p := 0, int(n.marks[0]); i < n.count; i, p = i+1, n.next(p) {
			if i%markStride == 0 && int(n.marks[i/markStride]) != p {
				t.Fatalf("node %v: mark %d at %d, entry at %d", n.key, i/markStride, n.marks[i/markStride], p)
			}
			entries = append(entries, n.entry(p))
			deleted = append(deleted, n.deletedAt(p))
		}
		if len(entries) == 0 || n.key != entries[0].ID || n.last != entries[len(entries)-1].ID {
			t.Fatalf("node key %v / last %v do not match its entries", n.key, n.last)
		}
		// A node rebuilt from what a snapshot holds has the same master
		// and listpack size.
		var names [][]byte
		for i, e := range entries {
			if !deleted[i] {
				names = fieldNames(e.Fields)
				break
			}
		}
		r := newNode(n.key, names, 0)
		for i, e := range entries {
			r.add(e.ID, e.Fields, deleted[i])
		}
		if r.lpSize() != n.lpSize() || r.nmaster != n.nmaster || string(r.buf[:r.marks[0]]) != string(n.buf[:n.marks[0]]) {
			t.Fatalf("node %v: master %q lpSize %d, rebuilt %q %d", n.key, n.buf[:n.marks[0]], n.lpSize(), r.buf[:r.marks[0]], r.lpSize())
		}
		nl := 0
		for i, e := range entries {
			if prev != nil && !prev.Less(e.ID) {
				t.Fatalf("entry %v not after %v", e.ID, *prev)
			}
			id := e.ID
			prev = &id
			if deleted[i] {
				if e.Fields != nil {
					t.Fatalf("deleted entry %v keeps its fields", e.ID)
				}
			} else {
				nl++
			}
		}
		if nl != n.live {
			t.Fatalf("node %v: live %d, counted %d", n.key, n.live, nl)
		}
		live += int64(nl)
		return true
	})
	if live != s.length {
		t.Fatalf("length %d, live entries %d", s.length, live)
	}
	if last != s.tail {
		t.Fatalf("tail is not the last node")
	}
	if prev != nil && s.lastID.Less(*prev) && s.length > 0 {
		t.Fatalf("last ID %v below entry %v", s.lastID, *prev)
	}
	want := ID{}
	if e, ok := s.First(); ok {
		want = e.ID
	}
	if s.firstID != want {
		t.Fatalf("recorded first ID %v, want %v", s.firstID, want)
	}
}

// fill appends ms-1 for ms in 1..n with Redis's default node size.
func fill(t *testing.T, n int) *Stream {
	t.Helper()
	s := New()
	for i := 1; i <= n; i++ {
		s.Append(ID{uint64(i), 1}, [][]byte{[]byte("f"), []byte("v")})
	}
	checkInvariants(t, s)
	return s
}

func ids(s *Stream) []ID {
	var out []ID
	s.Ascend(MinID, func(e Entry) bool { out = append(out, e.ID); return true })
	return out
}

func TestNextID(t *testing.T) {
	max := uint64(math.MaxUint64)
	tests := []struct {
		name string
		last ID
		spec IDSpec
		now  int64
		want ID
		err  error
	}{
		{"auto new ms", ID{5, 3}, IDSpec{Auto: true}, 10, ID{10, 0}, nil},
		{"auto same ms", ID{10, 3}, IDSpec{Auto: true}, 10, ID{10, 4}, nil},
		{"auto clock behind", ID{20, 3}, IDSpec{Auto: true}, 10, ID{20, 4}, nil},
		{"auto seq overflow", ID{20, max}, IDSpec{Auto: true}, 10, ID{21, 0}, nil},
		{"auto exhausted", MaxID, IDSpec{Auto: true}, 10, ID{}, ErrStreamExhausted},
		{"explicit exhausted", MaxID, IDSpec{ID: ID{1, 1}}, 10, ID{}, ErrStreamExhausted},
		{"ms-* new ms", ID{5, 3}, IDSpec{AutoSeq: true, ID: ID{Ms: 7}}, 0, ID{7, 0}, nil},
		{"ms-* same ms", ID{5, 3}, IDSpec{AutoSeq: true, ID: ID{Ms: 5}}, 0, ID{5, 4}, nil},
		{"ms-* older ms", ID{5, 3}, IDSpec{AutoSeq: true, ID: ID{Ms: 4}}, 0, ID{}, ErrIDTooSmall},
		{"ms-* seq full", ID{5, max}, IDSpec{AutoSeq: true, ID: ID{Ms: 5}}, 0, ID{}, ErrIDTooSmall},
		{"0-* empty", ID{}, IDSpec{AutoSeq: true}, 0, ID{0, 1}, nil},
		{"explicit ok", ID{5, 3}, IDSpec{ID: ID{5, 4}}, 0, ID{5, 4}, nil},
		{"explicit equal", ID{5, 3}, IDSpec{ID: ID{5, 3}}, 0, ID{}, ErrIDTooSmall},
		{"explicit smaller", ID{5, 3}, IDSpec{ID: ID{4, 9}}, 0, ID{}, ErrIDTooSmall},
		{"explicit zero", ID{}, IDSpec{ID: ID{}}, 0, ID{}, ErrIDZero},
		{"explicit zero before exhausted", MaxID, IDSpec{ID: ID{}}, 0, ID{}, ErrIDZero},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			s.lastID = tc.last
			got, err := s.NextID(tc.spec, tc.now)
			if err != tc.err || got != tc.want {
				t.Fatalf("NextID = %v, %v; want %v, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestAppendNodesAndCounters(t *testing.T) {
	tests := []struct {
		n, nodeMax int
		wantNodes  int64
	}{
		{1, 100, 1}, {100, 100, 1}, {101, 100, 2}, {350, 100, 4}, {350, 0, 1}, {7, 1, 7},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d/%d", tc.n, tc.nodeMax), func(t *testing.T) {
			s := New()
			for i := 1; i <= tc.n; i++ {
				s.AppendNode(ID{uint64(i), 0}, [][]byte{[]byte("f"), []byte("v")}, tc.nodeMax, 0)
			}
			checkInvariants(t, s)
			if s.NodeCount() != tc.wantNodes || s.Len() != int64(tc.n) || s.EntriesAdded() != int64(tc.n) {
				t.Fatalf("nodes %d len %d added %d", s.NodeCount(), s.Len(), s.EntriesAdded())
			}
			if s.LastID() != (ID{uint64(tc.n), 0}) || s.FirstID() != (ID{1, 0}) {
				t.Fatalf("last %v first %v", s.LastID(), s.FirstID())
			}
		})
	}
}

func TestRanges(t *testing.T) {
	s := fill(t, 250)
	for _, id := range []ID{{100, 1}, {101, 1}, {150, 1}, {3, 1}} {
		s.Delete(id)
	}
	checkInvariants(t, s)
	collect := func(asc bool, from ID, max int) []ID {
		var out []ID
		fn := func(e Entry) bool { out = append(out, e.ID); return len(out) < max }
		if asc {
			s.Ascend(from, fn)
		} else {
			s.Descend(from, fn)
		}
		return out
	}
	tests := []struct {
		name string
		asc  bool
		from ID
		max  int
		want []ID
	}{
		{"asc from start", true, MinID, 3, []ID{{1, 1}, {2, 1}, {4, 1}}},
		{"asc across node with deletes", true, ID{99, 0}, 3, []ID{{99, 1}, {102, 1}, {103, 1}}},
		{"asc mid id", true, ID{149, 2}, 2, []ID{{151, 1}, {152, 1}}},
		{"asc past end", true, ID{251, 0}, 3, nil},
		{"asc at last", true, ID{250, 1}, 3, []ID{{250, 1}}},
		{"desc from max", false, MaxID, 2, []ID{{250, 1}, {249, 1}}},
		{"desc across node", false, ID{101, 5}, 3, []ID{{99, 1}, {98, 1}, {97, 1}}},
		{"desc below first", false, ID{1, 0}, 3, nil},
		{"desc at first", false, ID{1, 1}, 3, []ID{{1, 1}}},
		{"desc exact deleted", false, ID{3, 1}, 2, []ID{{2, 1}, {1, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := collect(tc.asc, tc.from, tc.max)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	if _, ok := s.Get(ID{3, 1}); ok {
		t.Fatal("Get found a deleted entry")
	}
	if e, ok := s.Get(ID{4, 1}); !ok || string(e.Fields[1]) != "v" {
		t.Fatal("Get missed a live entry")
	}
	if e, _ := s.First(); e.ID != (ID{1, 1}) {
		t.Fatalf("First %v", e.ID)
	}
	if e, _ := s.Last(); e.ID != (ID{250, 1}) {
		t.Fatalf("Last %v", e.ID)
	}
}

func TestDelete(t *testing.T) {
	s := fill(t, 150)
	if !s.Delete(ID{150, 1}) || s.Delete(ID{150, 1}) || s.Delete(ID{7, 0}) {
		t.Fatal("Delete reported wrongly")
	}
	if s.MaxDeletedID() != (ID{150, 1}) || s.Len() != 149 {
		t.Fatalf("max deleted %v len %d", s.MaxDeletedID(), s.Len())
	}
	s.Delete(ID{1, 1})
	if s.MaxDeletedID() != (ID{150, 1}) || s.FirstID() != (ID{2, 1}) {
		t.Fatalf("max deleted %v first %v", s.MaxDeletedID(), s.FirstID())
	}
	checkInvariants(t, s)
	// Emptying the second node removes it; appending starts a new one.
	for i := 101; i < 150; i++ {
		s.Delete(ID{uint64(i), 1})
	}
	checkInvariants(t, s)
	if s.NodeCount() != 1 {
		t.Fatalf("nodes %d, want 1", s.NodeCount())
	}
	s.Append(ID{200, 0}, [][]byte{[]byte("a"), []byte("b")})
	checkInvariants(t, s)
	if s.NodeCount() != 2 || s.LastID() != (ID{200, 0}) {
		t.Fatalf("nodes %d last %v", s.NodeCount(), s.LastID())
	}
	// Deleting everything leaves no node and a 0-0 first ID (Redis 7.0.15).
	for _, id := range ids(s) {
		s.Delete(id)
	}
	checkInvariants(t, s)
	if s.NodeCount() != 0 || s.Len() != 0 || s.FirstID() != (ID{}) || s.LastID() != (ID{200, 0}) {
		t.Fatalf("nodes %d len %d first %v last %v", s.NodeCount(), s.Len(), s.FirstID(), s.LastID())
	}
}

// TestWideEntryRanges: an entry with 17 to 64 field/value items read
// through a range (which shares a slab of field slices) is served whole; the
// slab grew to 16 only and panicked before.
func TestWideEntryRanges(t *testing.T) {
	s := New()
	s.AppendNode(ID{Ms: 1}, [][]byte{[]byte("f"), []byte("v")}, 100, NoNodeMaxBytes)
	wide := make([][]byte, 24)
	for i := range wide {
		wide[i] = []byte{byte('a' + i)}
	}
	s.AppendNode(ID{Ms: 2}, wide, 100, NoNodeMaxBytes)
	last, ok := s.Last()
	if !ok || len(last.Fields) != 24 {
		t.Fatalf("last %v %v", last, ok)
	}
	var n int
	s.Ascend(MinID, func(e Entry) bool {
		n += len(e.Fields)
		return true
	})
	if n != 26 {
		t.Fatalf("ascend served %d items, want 26", n)
	}
}
