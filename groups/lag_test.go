package groups

import (
	"fmt"
	"testing"

	"streamd/streams"
)

// info renders a group's entries-read and lag as XINFO GROUPS shows them
// ("nil" for null).
func info(g *Group, s *streams.Stream) string {
	read := "nil"
	if g.EntriesRead != EntriesReadInvalid {
		read = fmt.Sprint(g.EntriesRead)
	}
	lag := "nil"
	if v, ok := g.Lag(s); ok {
		lag = fmt.Sprint(v)
	}
	return fmt.Sprintf("%s %s %s", g.LastID, read, lag)
}

// TestEntriesReadAndLag replays a redis-server 7.0.15 session and compares
// every group's last-delivered-id, entries-read and lag after each step.
func TestEntriesReadAndLag(t *testing.T) {
	s := newStream(1, 2, 3, 4, 5)
	var set Set
	set.Create("g0", id(0), -1)
	set.Create("g1", id(0), 2)
	set.Create("g2", s.LastID(), -1)
	set.Create("g3", id(3), -1)
	set.Create("g4", id(0), 99)
	set.Create("g5", id(9), -1)
	readOne := func() {
		for _, n := range []string{"g0", "g1", "g3", "g4"} {
			set.Get(n).ReadNew(s, "c", 1, false, 1)
		}
	}
	steps := []struct {
		name string
		do   func()
		want map[string]string
	}{
		{"created", func() {}, map[string]string{
			"g0": "0-0 nil 5", "g1": "0-0 2 3", "g2": "5-0 nil 0", "g3": "3-0 nil nil", "g4": "0-0 99 -94", "g5": "9-0 nil nil"}},
		{"read one each", readOne, map[string]string{
			"g0": "1-0 1 4", "g1": "1-0 3 2", "g2": "5-0 nil 0", "g3": "4-0 nil nil", "g4": "1-0 100 -95", "g5": "9-0 nil nil"}},
		{"XDEL 4-0 puts a tombstone ahead", func() { s.Delete(id(4)) }, map[string]string{
			"g0": "1-0 1 nil", "g1": "1-0 3 nil", "g2": "5-0 nil 0", "g3": "4-0 nil nil", "g4": "1-0 100 nil", "g5": "9-0 nil nil"}},
		{"read one more", readOne, map[string]string{
			"g0": "2-0 nil nil", "g1": "2-0 nil nil", "g2": "5-0 nil 0", "g3": "5-0 5 0", "g4": "2-0 nil nil", "g5": "9-0 nil nil"}},
		{"SETID", func() {
			set.Get("g0").SetID(id(0), -1)
			set.Get("g1").SetID(s.LastID(), -1)
			set.Get("g2").SetID(id(0), 0)
		}, map[string]string{
			"g0": "0-0 nil nil", "g1": "5-0 nil 0", "g2": "0-0 0 nil", "g3": "5-0 5 0", "g4": "2-0 nil nil", "g5": "9-0 nil nil"}},
	}
	for _, st := range steps {
		st.do()
		for _, g := range set.All() {
			if got := info(g, s); got != st.want[g.Name] {
				t.Errorf("%s: %s = %q, want %q", st.name, g.Name, got, st.want[g.Name])
			}
		}
		if err := set.Check(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
}

func TestEstimateEntriesRead(t *testing.T) {
	empty := streams.New()
	if got := EstimateEntriesRead(empty, id(5)); got != 0 {
		t.Errorf("never-used stream: %d", got)
	}
	drained := newStream(1, 2)
	drained.Delete(id(1))
	drained.Delete(id(2))
	tests := []struct {
		name string
		s    *streams.Stream
		id   uint64
		want int64
	}{
		{"emptied stream, ID before last", drained, 1, 2},
		{"emptied stream, future ID", drained, 3, EntriesReadInvalid},
		{"last ID", newStream(1, 2, 3), 3, 3},
		{"first ID", newStream(1, 2, 3), 1, 1},
		{"before first", newStream(2, 3), 1, 0},
		{"middle", newStream(1, 2, 3), 2, EntriesReadInvalid},
	}
	for _, tc := range tests {
		if got := EstimateEntriesRead(tc.s, id(tc.id)); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}
