package server

import "testing"

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},                // nothing measured yet: the default
		{1 << 10, gcPercentMax}, // a nearly empty heap: bounded
		{4 << 20, 600},          // 4 MB live: a goal of 4 + 24 MB
		{12 << 20, 200},         // 12 MB live: 12 + 24 MB
		{gcHeadroom, 100},       // from here on, plain GOGC=100
		{1 << 30, 100},
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
