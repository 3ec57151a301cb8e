package state

import (
	"testing"

	"streamd/streams"
)

// TestRaxNodeCount pins raxNodeCount to radix-tree-nodes measured on
// redis-server 7.0.15 with stream-node-max-entries 1 (one rax key per entry).
func TestRaxNodeCount(t *testing.T) {
	tests := []struct {
		ids  [][2]uint64
		want int64
	}{
		{nil, 1},
		{[][2]uint64{{1, 0}}, 2},
		{[][2]uint64{{1, 0}, {5, 0}}, 6},
		{[][2]uint64{{1, 0}, {5, 0}, {6, 0}}, 8},
		{[][2]uint64{{1, 0}, {2, 0}, {3, 0}, {4, 0}}, 10},
		{[][2]uint64{{1, 0}, {1, 1}, {1, 2}, {256, 0}, {70000, 5}}, 12},
		{[][2]uint64{{1000, 0}, {1001, 0}, {2000, 0}, {1700000000000, 0}, {1700000000001, 0}, {1700000000001, 1}}, 19},
		{[][2]uint64{{1, 0}, {2, 0}, {4, 0}, {5, 0}, {6, 0}, {7, 0}, {8, 0}}, 16},
		{[][2]uint64{{7, 0}, {8, 0}}, 6},
	}
	for _, tc := range tests {
		keys := make([][16]byte, len(tc.ids))
		for i, id := range tc.ids {
			keys[i] = raxKey(streams.ID{Ms: id[0], Seq: id[1]})
		}
		if got := raxNodeCount(keys); got != tc.want {
			t.Errorf("%v: got %d, want %d", tc.ids, got, tc.want)
		}
	}
}
