package streams

import (
	"math/rand"
	"testing"
)

// TestAgainstModel runs a seeded random mix of appends, deletes, exact and
// approximate trims and ranges against a plain sorted slice, checking the
// invariants after every step. Approximate trims are checked for their
// bounds only (never below the threshold, never more than exact).
func TestAgainstModel(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := New()
		var model []ID
		next := ID{1, 0}
		nodeMax := 1 + rng.Intn(20)
		for step := 0; step < 2000; step++ {
			switch op := rng.Intn(10); {
			case op < 5:
				next = ID{next.Ms + uint64(rng.Intn(2)), next.Seq + 1}
				s.AppendNode(next, [][]byte{[]byte("f"), []byte("v")}, nodeMax, 0)
				model = append(model, next)
			case op < 7 && len(model) > 0:
				i := rng.Intn(len(model))
				if !s.Delete(model[i]) {
					t.Fatalf("seed %d step %d: delete of live %v failed", seed, step, model[i])
				}
				model = append(model[:i], model[i+1:]...)
			case op == 7:
				keep := int64(rng.Intn(len(model) + 1))
				approx := rng.Intn(2) == 0
				removed := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: keep, Approx: approx})
				if s.Len() < keep && int64(len(model)) >= keep || removed != int64(len(model))-s.Len() {
					t.Fatalf("seed %d step %d: maxlen %d removed %d len %d model %d", seed, step, keep, removed, s.Len(), len(model))
				}
				if !approx && s.Len() != min(keep, int64(len(model))) {
					t.Fatalf("seed %d step %d: exact maxlen %d left %d", seed, step, keep, s.Len())
				}
				model = model[len(model)-int(s.Len()):]
			case op == 8 && len(model) > 0:
				minID := model[rng.Intn(len(model))]
				approx := rng.Intn(2) == 0
				s.Trim(TrimArgs{Strategy: TrimMinID, MinID: minID, Approx: approx})
				cut := 0
				for cut < len(model) && model[cut].Less(minID) {
					cut++
				}
				dropped := len(model) - int(s.Len())
				if dropped > cut || (!approx && dropped != cut) {
					t.Fatalf("seed %d step %d: minid dropped %d of %d below", seed, step, dropped, cut)
				}
				model = model[dropped:]
			default:
				if len(model) == 0 {
					continue
				}
				from := model[rng.Intn(len(model))]
				var got []ID
				s.Descend(from, func(e Entry) bool { got = append(got, e.ID); return len(got) < 5 })
				j := 0
				for j < len(model) && !from.Less(model[j]) {
					j++
				}
				for k, id := range got {
					if id != model[j-1-k] {
						t.Fatalf("seed %d step %d: descend got %v want %v", seed, step, id, model[j-1-k])
					}
				}
			}
			checkInvariants(t, s)
			if got := ids(s); len(got) != len(model) {
				t.Fatalf("seed %d step %d: %d entries, model %d", seed, step, len(got), len(model))
			} else {
				for i := range got {
					if got[i] != model[i] {
						t.Fatalf("seed %d step %d: entry %d is %v, model %v", seed, step, i, got[i], model[i])
					}
				}
			}
		}
	}
}
