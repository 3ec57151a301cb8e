package pel

import (
	"encoding/binary"
	"math/rand"
	"slices"
	"testing"

	"streamd/streams"
)

// model is the simple reference for tree: a sorted slice of keys and their
// values.
type model struct {
	keys []streams.ID
	vals []int64
}

func (m *model) find(k streams.ID) (int, bool) {
	return slices.BinarySearchFunc(m.keys, k, streams.ID.Compare)
}

func (m *model) set(k streams.ID, v int64) (int64, bool) {
	i, ok := m.find(k)
	if ok {
		old := m.vals[i]
		m.vals[i] = v
		return old, true
	}
	m.keys = slices.Insert(m.keys, i, k)
	m.vals = slices.Insert(m.vals, i, v)
	return 0, false
}

func (m *model) delete(k streams.ID) (int64, bool) {
	i, ok := m.find(k)
	if !ok {
		return 0, false
	}
	old := m.vals[i]
	m.keys = slices.Delete(m.keys, i, i+1)
	m.vals = slices.Delete(m.vals, i, i+1)
	return old, true
}

func (m *model) clone() *model {
	return &model{keys: slices.Clone(m.keys), vals: slices.Clone(m.vals)}
}

// treeOps drives a tree and a model with the same operations, read from
// next (an operation code and a key), and fails at the first difference:
// answers, contents, ascents from a key, or the tree's own invariant. Some
// operations clone both; the clones are kept and compared at the end, so a
// write that leaks into a clone is caught.
func treeOps(t *testing.T, steps int, next func() (op byte, key uint64)) {
	t.Helper()
	var tr tree[int64]
	m := &model{}
	type pair struct {
		tr tree[int64]
		m  *model
	}
	var clones []pair
	key := func(k uint64) streams.ID { return streams.ID{Ms: k / 4, Seq: k % 4} }
	for step := 0; step < steps; step++ {
		op, k := next()
		id := key(k)
		switch op % 8 {
		case 0, 1, 2: // insert or update
			v := int64(step)
			old, replaced := tr.set(id, v)
			mold, mreplaced := m.set(id, v)
			if old != mold || replaced != mreplaced {
				t.Fatalf("step %d: set %s = (%d, %v), model (%d, %v)", step, id, old, replaced, mold, mreplaced)
			}
		case 3: // append after the greatest key, as XREADGROUP does
			if n := len(m.keys); n > 0 {
				id = streams.ID{Ms: m.keys[n-1].Ms, Seq: m.keys[n-1].Seq + 1}
			}
			tr.set(id, int64(step))
			m.set(id, int64(step))
		case 4, 5: // delete
			old, ok := tr.delete(id)
			mold, mok := m.delete(id)
			if old != mold || ok != mok {
				t.Fatalf("step %d: delete %s = (%d, %v), model (%d, %v)", step, id, old, ok, mold, mok)
			}
		case 6: // delete the smallest, as XACK in order does
			if len(m.keys) > 0 {
				first := m.keys[0]
				tr.delete(first)
				m.delete(first)
			}
		case 7: // clone, now and then
			if step%5 == 0 && len(clones) < 8 {
				clones = append(clones, pair{tr.clone(), m.clone()})
			}
			v, ok := tr.get(id)
			if i, mok := m.find(id); ok != mok || (ok && v != m.vals[i]) {
				t.Fatalf("step %d: get %s = (%d, %v)", step, id, v, ok)
			}
			var got []streams.ID
			tr.ascend(id, func(k streams.ID, _ int64) bool {
				got = append(got, k)
				return len(got) < 10
			})
			i, _ := m.find(id)
			want := m.keys[i:min(i+10, len(m.keys))]
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: ascend from %s = %v, want %v", step, id, got, want)
			}
		}
		if err := tr.check(); err != nil {
			t.Fatalf("step %d (op %d %s): %v", step, op%8, id, err)
		}
		if tr.Len() != len(m.keys) {
			t.Fatalf("step %d: length %d, model %d", step, tr.Len(), len(m.keys))
		}
	}
	compareTree(t, "final", &tr, m)
	for i := range clones {
		compareTree(t, "clone", &clones[i].tr, clones[i].m)
	}
}

// compareTree fails unless tr holds exactly m's keys and values.
func compareTree(t *testing.T, what string, tr *tree[int64], m *model) {
	t.Helper()
	if err := tr.check(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var keys []streams.ID
	var vals []int64
	tr.ascend(streams.MinID, func(k streams.ID, v int64) bool {
		keys = append(keys, k)
		vals = append(vals, v)
		return true
	})
	if !slices.Equal(keys, m.keys) || !slices.Equal(vals, m.vals) {
		t.Fatalf("%s: tree holds %d keys, model %d (or values differ)", what, len(keys), len(m.keys))
	}
	if len(m.keys) > 0 {
		lo, _, _ := tr.min()
		hi, _, _ := tr.max()
		if lo != m.keys[0] || hi != m.keys[len(m.keys)-1] {
			t.Fatalf("%s: min %s max %s", what, lo, hi)
		}
	}
}

// TestTreeAgainstModel runs random operations over key spaces of several
// sizes (small ones make updates and deletes of present keys common; large
// ones grow trees of several levels).
func TestTreeAgainstModel(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	for _, space := range []uint64{16, 300, 5000, 100000} {
		treeOps(t, 20000, func() (byte, uint64) { return byte(r.Intn(256)), r.Uint64() % space })
	}
}

// TestTreeAgainstModelSmallNodes is TestTreeAgainstModel with nodes of 8
// keys and 4 children, so that a few thousand keys make a tree of five
// levels or more, where inner nodes split and merge often.
func TestTreeAgainstModelSmallNodes(t *testing.T) {
	defer func(l, i int) { leafMax, innerMax = l, i }(leafMax, innerMax)
	leafMax, innerMax = 8, 4
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	for _, space := range []uint64{16, 300, 5000} {
		treeOps(t, 20000, func() (byte, uint64) { return byte(r.Intn(256)), r.Uint64() % space })
	}
}

// TestTreeInOrderPacksFull checks the point of the tree: IDs set in order
// fill their leaves, and acknowledging them in order empties the tree.
func TestTreeInOrderPacksFull(t *testing.T) {
	var tr tree[struct{}]
	n := 100 * leafMax
	for i := 0; i < n; i++ {
		tr.set(streams.ID{Ms: uint64(i)}, struct{}{})
	}
	leaves, slots := 0, 0
	var walk func(*node[struct{}])
	walk = func(nd *node[struct{}]) {
		if nd.kids == nil {
			leaves++
			slots += cap(nd.keys)
			return
		}
		for _, c := range nd.kids {
			walk(c)
		}
	}
	walk(tr.root)
	if leaves != n/leafMax || slots != n {
		t.Fatalf("%d keys in %d leaves of %d slots, want %d full leaves", n, leaves, slots, n/leafMax)
	}
	for i := 0; i < n; i++ {
		if _, ok := tr.delete(streams.ID{Ms: uint64(i)}); !ok {
			t.Fatalf("key %d missing", i)
		}
		if i%leafMax == 0 {
			if err := tr.check(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if tr.root != nil || tr.Len() != 0 {
		t.Fatalf("emptied tree has root %v, length %d", tr.root, tr.Len())
	}
}

// FuzzTree drives the tree and the model with operations read from the
// input, two bytes of key per operation.
func FuzzTree(f *testing.F) {
	f.Add([]byte{0, 0, 1, 3, 0, 2, 4, 0, 1, 7, 0, 0})
	f.Add(slices.Repeat([]byte{3, 0, 0}, 400))
	f.Fuzz(func(t *testing.T, in []byte) {
		steps := len(in) / 3
		i := 0
		treeOps(t, steps, func() (byte, uint64) {
			op, k := in[i], binary.LittleEndian.Uint16(in[i+1:])
			i += 3
			return op, uint64(k)
		})
	})
}
