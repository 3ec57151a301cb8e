package streams

import "testing"

// The expectations below were taken from redis-server 7.0.15 with the
// default stream-node-max-entries (100), entries ms-1 for ms in 1..fill.
func TestTrim(t *testing.T) {
	type step struct {
		args      TrimArgs
		removed   int64
		len       int64
		nodes     int64 // -1 = not checked
		firstLive ID
	}
	maxlen := func(n int64, approx bool, limit int64) TrimArgs {
		return TrimArgs{Strategy: TrimMaxLen, MaxLen: n, Approx: approx, Limit: TrimLimit(limit, approx, 100)}
	}
	minid := func(id ID, approx bool, limit int64) TrimArgs {
		return TrimArgs{Strategy: TrimMinID, MinID: id, Approx: approx, Limit: TrimLimit(limit, approx, 100)}
	}
	tests := []struct {
		name    string
		fill    int
		deletes []ID
		steps   []step
	}{
		{"maxlen ~ removes whole nodes", 350, nil, []step{
			{maxlen(120, true, -1), 200, 150, 2, ID{201, 1}},
			{maxlen(120, true, -1), 0, 150, 2, ID{201, 1}},
		}},
		{"maxlen ~ at exact boundary", 300, nil, []step{
			{maxlen(200, true, -1), 100, 200, 2, ID{101, 1}},
		}},
		{"minid ~ then exact", 350, nil, []step{
			{minid(ID{250, 1}, true, -1), 200, 150, 2, ID{201, 1}},
			{minid(ID{250, 1}, false, -1), 49, 101, 2, ID{250, 1}},
		}},
		{"limit counts live entries of a node", 350, []ID{{1, 1}, {2, 1}, {3, 1}}, []step{
			{maxlen(100, true, 150), 97, 250, 3, ID{101, 1}},
			{maxlen(100, true, 197), 100, 150, 2, ID{201, 1}},
			{maxlen(100, true, 0), 0, 150, 2, ID{201, 1}},
		}},
		{"limit smaller than a node trims nothing", 351, nil, []step{
			{maxlen(10, true, 50), 0, 351, 4, ID{1, 1}},
			{maxlen(10, false, -1), 341, 10, 1, ID{342, 1}},
		}},
		{"minid exact removes node whose deleted last entry is below", 250, []ID{{250, 1}}, []step{
			{minid(ID{251, 0}, false, -1), 249, 0, 0, ID{}},
		}},
		{"minid exact leaves a node of tombstones", 250, []ID{{250, 1}}, []step{
			{minid(ID{250, 1}, false, -1), 249, 0, 1, ID{}},
		}},
		{"maxlen 0 exact empties", 150, nil, []step{
			{maxlen(0, false, -1), 150, 0, 0, ID{}},
		}},
		{"maxlen above length", 50, nil, []step{
			{maxlen(60, false, -1), 0, 50, 1, ID{1, 1}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fill(t, tc.fill)
			for _, id := range tc.deletes {
				s.Delete(id)
			}
			maxDeleted := s.MaxDeletedID()
			for i, st := range tc.steps {
				got := s.Trim(st.args)
				checkInvariants(t, s)
				if got != st.removed || s.Len() != st.len {
					t.Fatalf("step %d: removed %d len %d; want %d, %d", i, got, s.Len(), st.removed, st.len)
				}
				if st.nodes >= 0 && s.NodeCount() != st.nodes {
					t.Fatalf("step %d: nodes %d, want %d", i, s.NodeCount(), st.nodes)
				}
				if s.FirstID() != st.firstLive {
					t.Fatalf("step %d: first %v, want %v", i, s.FirstID(), st.firstLive)
				}
				if s.MaxDeletedID() != maxDeleted {
					t.Fatalf("step %d: trim changed max-deleted-entry-id to %v", i, s.MaxDeletedID())
				}
			}
		})
	}
}

// A node left holding only tombstones still takes appends until it is full,
// as Redis's listpack does (checked against redis-server 7.0.15).
func TestAppendAfterTombstoneNode(t *testing.T) {
	s := fill(t, 250)
	s.Delete(ID{250, 1})
	s.Trim(TrimArgs{Strategy: TrimMinID, MinID: ID{250, 1}})
	s.Append(ID{300, 1}, [][]byte{[]byte("f"), []byte("v")})
	checkInvariants(t, s)
	if s.NodeCount() != 1 || s.Len() != 1 || s.FirstID() != (ID{300, 1}) {
		t.Fatalf("nodes %d len %d first %v", s.NodeCount(), s.Len(), s.FirstID())
	}
}

func TestTrimLimit(t *testing.T) {
	tests := []struct {
		given   int64
		approx  bool
		nodeMax int
		want    int64
	}{
		{-1, true, 100, 10000}, {-1, true, 0, 10000}, {-1, true, 20000, 1000000},
		{-1, false, 100, 0}, {5, true, 100, 5}, {0, true, 100, 0},
	}
	for _, tc := range tests {
		if got := TrimLimit(tc.given, tc.approx, tc.nodeMax); got != tc.want {
			t.Errorf("TrimLimit(%d, %v, %d) = %d, want %d", tc.given, tc.approx, tc.nodeMax, got, tc.want)
		}
	}
}

func TestSetID(t *testing.T) {
	md := func(ms, seq uint64) *ID { return &ID{ms, seq} }
	tests := []struct {
		name       string
		deletes    []ID
		last       ID
		added      int64
		maxDeleted *ID
		err        error
		wantLast   ID
		wantAdded  int64
		wantMaxDel ID
	}{
		{"raise last", nil, ID{9, 0}, -1, nil, nil, ID{9, 0}, 3, ID{}},
		{"below top", nil, ID{2, 5}, -1, nil, ErrSetIDTooSmall, ID{3, 1}, 3, ID{}},
		{"equal top", nil, ID{3, 1}, -1, nil, nil, ID{3, 1}, 3, ID{}},
		{"below top after delete is allowed", []ID{{3, 1}}, ID{2, 5}, -1, nil, nil, ID{2, 5}, 3, ID{3, 1}},
		{"entries added below length", nil, ID{9, 0}, 2, nil, ErrSetIDEntriesAdded, ID{3, 1}, 3, ID{}},
		{"entries added lowered", []ID{{3, 1}}, ID{9, 0}, 2, nil, nil, ID{9, 0}, 2, ID{3, 1}},
		{"max deleted above id", nil, ID{9, 0}, -1, md(10, 0), ErrSetIDBelowGivenMaxDeleted, ID{3, 1}, 3, ID{}},
		{"max deleted set", nil, ID{9, 0}, 7, md(8, 0), nil, ID{9, 0}, 7, ID{8, 0}},
		{"max deleted zero ignored", []ID{{2, 1}}, ID{9, 0}, -1, md(0, 0), nil, ID{9, 0}, 3, ID{2, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fill(t, 3)
			for _, id := range tc.deletes {
				s.Delete(id)
			}
			err := s.SetID(tc.last, tc.added, tc.maxDeleted)
			if err != tc.err {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if s.LastID() != tc.wantLast || s.EntriesAdded() != tc.wantAdded || s.MaxDeletedID() != tc.wantMaxDel {
				t.Fatalf("last %v added %d maxdel %v", s.LastID(), s.EntriesAdded(), s.MaxDeletedID())
			}
		})
	}
}

func TestClone(t *testing.T) {
	s := fill(t, 150)
	c := s.Clone()
	s.Delete(ID{5, 1})
	s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 10})
	s.Append(ID{200, 0}, [][]byte{[]byte("x"), []byte("y")})
	checkInvariants(t, c)
	checkInvariants(t, s)
	if c.Len() != 150 || len(ids(c)) != 150 || c.LastID() != (ID{150, 1}) {
		t.Fatalf("clone changed: len %d last %v", c.Len(), c.LastID())
	}
	c.Append(ID{151, 0}, [][]byte{[]byte("x"), []byte("y")})
	checkInvariants(t, c)
	if s.Len() != 11 {
		t.Fatalf("original changed by clone append: len %d", s.Len())
	}
}

// After XSETID lowered the last ID over deleted entries, an append must not
// land after tombstones with greater IDs: they are dropped so each node keeps
// its IDs in order (Get, Ascend and Descend binary-search nodes).
func TestAppendBelowTombstones(t *testing.T) {
	t.Run("tail keeps its live entries", func(t *testing.T) {
		s := fill(t, 250)
		s.Delete(ID{249, 1})
		s.Delete(ID{250, 1})
		if err := s.SetID(ID{248, 1}, -1, nil); err != nil {
			t.Fatal(err)
		}
		s.Append(ID{248, 5}, [][]byte{[]byte("f"), []byte("v")})
		checkInvariants(t, s)
		if _, ok := s.Get(ID{248, 5}); !ok {
			t.Fatal("appended entry not found")
		}
		if e, _ := s.Last(); e.ID != (ID{248, 5}) || s.Len() != 249 || s.NodeCount() != 3 {
			t.Fatalf("last %v len %d nodes %d", e.ID, s.Len(), s.NodeCount())
		}
	})
	t.Run("tombstone-only tail is removed", func(t *testing.T) {
		s := fill(t, 250)
		s.Delete(ID{250, 1})
		s.Trim(TrimArgs{Strategy: TrimMinID, MinID: ID{250, 1}})
		if err := s.SetID(ID{10, 0}, -1, nil); err != nil {
			t.Fatal(err)
		}
		s.Append(ID{20, 0}, [][]byte{[]byte("f"), []byte("v")})
		checkInvariants(t, s)
		var got []ID
		s.Ascend(MinID, func(e Entry) bool { got = append(got, e.ID); return true })
		if len(got) != 1 || got[0] != (ID{20, 0}) || s.NodeCount() != 1 {
			t.Fatalf("entries %v nodes %d", got, s.NodeCount())
		}
	})
}
