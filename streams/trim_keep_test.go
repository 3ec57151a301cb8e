package streams

import (
	"reflect"
	"testing"
)

// keepStream returns a stream of entries 1-0..n-0 in nodes of nodeMax
// entries.
func keepStream(n, nodeMax int) *Stream {
	s := New()
	for i := 1; i <= n; i++ {
		s.AppendNode(ID{Ms: uint64(i)}, [][]byte{[]byte("f"), []byte("v")}, nodeMax, NoNodeMaxBytes)
	}
	return s
}

func liveIDs(s *Stream) []uint64 {
	out := []uint64{}
	s.Ascend(MinID, func(e Entry) bool { out = append(out, e.ID.Ms); return true })
	return out
}

// keepSet is a Keep that keeps the listed ms and records what it was asked.
func keepSet(asked *[]uint64, ms ...uint64) func(ID) bool {
	return func(id ID) bool {
		*asked = append(*asked, id.Ms)
		for _, m := range ms {
			if id.Ms == m {
				return true
			}
		}
		return false
	}
}

// Trim with Keep (Redis 8.2 DELREF/ACKED): the spec's §1.5 cases and the
// node scan of approximate trimming.
func TestTrimKeep(t *testing.T) {
	tests := []struct {
		name      string
		n, node   int
		args      TrimArgs
		keep      []uint64
		removed   int64
		live      []uint64
		asked     []uint64
		nodeCount int64
	}{
		// XADD MAXLEN = 1 ACKED with every entry referenced: nothing goes.
		{"maxlen exact all kept", 5, 100, TrimArgs{Strategy: TrimMaxLen, MaxLen: 1}, []uint64{1, 2, 3, 4, 5},
			0, []uint64{1, 2, 3, 4, 5}, []uint64{1, 2, 3, 4, 5}, 1},
		// Kept entries leave holes; trimming goes on past them and to
		// the next nodes until the length holds.
		{"maxlen exact holes across nodes", 6, 2, TrimArgs{Strategy: TrimMaxLen, MaxLen: 2}, []uint64{1, 3},
			4, []uint64{1, 3}, []uint64{1, 2, 3, 4, 5, 6}, 2},
		// Spec §1.5: nodes {1,2} {3,4} {5}, 3 and 5 still pending: MINID ~
		// 6-0 ACKED deletes 1, 2, 4; the emptied node goes.
		{"minid approx scans whole nodes", 5, 2, TrimArgs{Strategy: TrimMinID, MinID: ID{Ms: 6}, Approx: true}, []uint64{3, 5},
			3, []uint64{3, 5}, []uint64{1, 2, 3, 4, 5}, 2},
		// DELREF-like (nothing kept) with MINID ~ 5-0: two whole nodes.
		{"minid approx nothing kept", 5, 2, TrimArgs{Strategy: TrimMinID, MinID: ID{Ms: 5}, Approx: true}, nil,
			4, []uint64{5}, []uint64{1, 2, 3, 4}, 1},
		// "~" stops at the first node that cannot go whole.
		{"maxlen approx stops at partial node", 7, 3, TrimArgs{Strategy: TrimMaxLen, MaxLen: 2, Approx: true}, []uint64{2},
			5, []uint64{2, 7}, []uint64{1, 2, 3, 4, 5, 6}, 2},
		// LIMIT counts a node's live entries before it is scanned: after
		// {1,2} (1 kept) and {3,4}, 3 removed + 2 would pass 3.
		{"limit per node", 6, 2, TrimArgs{Strategy: TrimMaxLen, MaxLen: 0, Approx: true, Limit: 3}, []uint64{1},
			3, []uint64{1, 5, 6}, []uint64{1, 2, 3, 4}, 2},
		// KeepAbove: the scan stops at 3, the rest is never asked about.
		{"keep above stops the scan", 6, 2, TrimArgs{Strategy: TrimMaxLen, MaxLen: 0}, []uint64{1, 3, 4, 5, 6},
			1, []uint64{1, 3, 4, 5, 6}, []uint64{1, 2}, 3},
		{"keep above approx", 6, 2, TrimArgs{Strategy: TrimMaxLen, MaxLen: 0, Approx: true}, []uint64{1, 2, 3, 4, 5, 6},
			0, []uint64{1, 2, 3, 4, 5, 6}, []uint64{1, 2}, 3},
		// Exact MINID: the threshold is always met in its node.
		{"minid exact", 6, 4, TrimArgs{Strategy: TrimMinID, MinID: ID{Ms: 6}}, []uint64{2},
			4, []uint64{2, 6}, []uint64{1, 2, 3, 4, 5}, 2},
	}
	keepAbove := map[string]uint64{"keep above stops the scan": 2, "keep above approx": 2}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := keepStream(tc.n, tc.node)
			if ms, ok := keepAbove[tc.name]; ok {
				above := ID{Ms: ms}
				tc.args.KeepAbove = &above
			}
			var asked []uint64
			a := tc.args
			a.Keep = keepSet(&asked, tc.keep...)
			if got := s.Trim(a); got != tc.removed {
				t.Errorf("removed %d, want %d", got, tc.removed)
			}
			if got := liveIDs(s); !reflect.DeepEqual(got, tc.live) {
				t.Errorf("live %v, want %v", got, tc.live)
			}
			if !reflect.DeepEqual(asked, tc.asked) {
				t.Errorf("asked %v, want %v", asked, tc.asked)
			}
			if s.Len() != int64(len(tc.live)) {
				t.Errorf("Len %d", s.Len())
			}
			if got := s.NodeCount(); got != tc.nodeCount {
				t.Errorf("nodes %d, want %d", got, tc.nodeCount)
			}
			if len(tc.live) > 0 && s.FirstID() != (ID{Ms: tc.live[0]}) {
				t.Errorf("first ID %v", s.FirstID())
			}
		})
	}
}

// A Keep that keeps nothing trims exactly as KEEPREF does, entry for entry
// (only the node shapes may differ: scanned nodes are freed when emptied).
func TestTrimKeepNothingSameAsKeepRef(t *testing.T) {
	for _, approx := range []bool{false, true} {
		for maxlen := int64(0); maxlen < 40; maxlen += 7 {
			a, b := keepStream(37, 5), keepStream(37, 5)
			args := TrimArgs{Strategy: TrimMaxLen, MaxLen: maxlen, Approx: approx}
			ra := a.Trim(args)
			args.Keep = func(ID) bool { return false }
			rb := b.Trim(args)
			if ra != rb || !reflect.DeepEqual(liveIDs(a), liveIDs(b)) {
				t.Errorf("approx %v maxlen %d: %d %v vs %d %v", approx, maxlen, ra, liveIDs(a), rb, liveIDs(b))
			}
		}
	}
}
