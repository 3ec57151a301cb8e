package pel

import (
	"sync/atomic"
	"unsafe"

	"streamd/streams"
)

// tree is an ordered map from stream IDs to values of type V: a B+tree
// whose leaves keep their keys and their values in two sorted arrays
// without pointers (for the PEL's values and for V = struct{}), so the
// garbage collector scans only the nodes' small headers.
//
// It is built for IDs that arrive in order (XREADGROUP delivers IDs in
// order, to the group and to each consumer): a full leaf that receives an
// insert at its right end stays full and the insert starts a new leaf,
// instead of splitting in the middle as a plain B-tree does (which leaves
// every node of an in-order build half empty). Inner nodes do the same.
// Deletes merge a node that falls under half full with a neighbour when the
// two fit in one node, and give back a leaf's spare capacity as it empties.
//
// Clone is copy-on-write: a node belongs to the tree whose generation it
// carries; a tree copies a node of another generation before changing it,
// so a clone costs nothing until either side changes, and a clone read on
// another goroutine (a snapshot) never sees the original's later writes.
//
// The zero value is an empty tree. A tree is not safe for concurrent use.
type tree[V any] struct {
	root *node[V]
	n    int
	gen  uint64
	// mem is the heap bytes of the nodes reachable from root and of the
	// spare (see node.bytes), kept up to date by every change.
	mem int64
	// spare is a full-size leaf that left the tree, kept for the next
	// right-edge split: acknowledging in order empties leaves at the left
	// edge as deliveries fill new ones at the right. It belongs to t
	// alone (a clone does not get it) and goes when the tree empties.
	spare *node[V]
}

// node is a leaf (kids == nil: keys[i] maps to vals[i]) or an inner node
// (kids != nil, len(kids) == len(keys)): keys[i], for i > 0, is a lower
// bound of kids[i]'s keys and greater than every key of kids[i-1]; keys[0]
// is not used to route. A leaf's keys and vals are windows, at the same
// offset, of the two arrays it allocated: removing a leaf's first entry
// starts the windows one later (front counts the slots so left before
// them), and the room freed in front is used again when the leaf runs out
// of room at the end. A window with room in front is never empty (an empty
// leaf leaves the tree), so it points into its array.
type node[V any] struct {
	gen   uint64
	keys  []streams.ID
	vals  []V
	kids  []*node[V]
	front int
}

// idSize and ptrSize are the sizes of an ID and of a pointer.
const (
	idSize  = int64(unsafe.Sizeof(streams.ID{}))
	ptrSize = int64(unsafe.Sizeof(uintptr(0)))
)

// bytes returns the heap bytes of n: the node (rounded up to Go's size
// class) and its arrays (whose sizes are size classes: leaves are
// allocated with power-of-two capacities, inner nodes grow by append).
func (n *node[V]) bytes() int64 {
	b := sizeClass(int64(unsafe.Sizeof(*n)))
	if n.kids != nil {
		return b + int64(cap(n.keys))*idSize + int64(cap(n.kids))*ptrSize
	}
	var v V
	return b + int64(n.front+cap(n.keys))*(idSize+int64(unsafe.Sizeof(v)))
}

// sizeClass rounds a small object's size up to the Go allocator's size
// class (the classes up to 128 bytes; beyond, to 16 bytes).
func sizeClass(n int64) int64 {
	switch {
	case n <= 8:
		return 8
	case n <= 16:
		return 16
	case n <= 24:
		return 24
	case n <= 32:
		return 32
	}
	return (n + 15) &^ 15
}

// Node sizes. They are variables only so that tests can shrink them to
// build deep trees from few keys.
var (
	// leafMax is the most entries a leaf holds: 128 IDs are 2 KiB (and
	// 128 PEL entries 2 KiB more), exact Go size classes.
	leafMax = 128
	// innerMax is the most children of an inner node.
	innerMax = 64
)

// leafMinCap is the smallest capacity a leaf shrinks to.
const leafMinCap = 4

// generations hands out the generations of cloned trees.
var generations atomic.Uint64

func idLess(a, b streams.ID) bool { return a.Ms < b.Ms || (a.Ms == b.Ms && a.Seq < b.Seq) }

// lowerBound returns the first index i with keys[i] >= k, and whether
// keys[i] == k.
func lowerBound(keys []streams.ID, k streams.ID) (int, bool) {
	lo, hi := 0, len(keys)
	if hi == 0 || idLess(keys[hi-1], k) {
		return hi, false // the append case, without a search
	}
	if !idLess(keys[0], k) {
		return 0, keys[0] == k // the first entry (XACK in order)
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if idLess(keys[m], k) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(keys) && keys[lo] == k
}

// childIndex returns the index of the child of an inner node whose keys
// include k's place: the last i > 0 with keys[i] <= k, else 0.
func childIndex(keys []streams.ID, k streams.ID) int {
	lo, hi := 1, len(keys)
	if hi <= 1 || idLess(k, keys[1]) {
		return 0
	}
	if !idLess(k, keys[hi-1]) {
		return hi - 1
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if idLess(k, keys[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo - 1
}

// Len returns the number of keys.
func (t *tree[V]) Len() int { return t.n }

// get returns the value of k.
func (t *tree[V]) get(k streams.ID) (V, bool) {
	n := t.root
	if n == nil {
		var zero V
		return zero, false
	}
	for n.kids != nil {
		n = n.kids[childIndex(n.keys, k)]
	}
	if i, ok := lowerBound(n.keys, k); ok {
		return n.vals[i], true
	}
	var zero V
	return zero, false
}

// has reports whether k is in the tree.
func (t *tree[V]) has(k streams.ID) bool {
	_, ok := t.get(k)
	return ok
}

// min returns the smallest key and its value.
func (t *tree[V]) min() (streams.ID, V, bool) {
	n := t.root
	if n == nil {
		var zero V
		return streams.ID{}, zero, false
	}
	for n.kids != nil {
		n = n.kids[0]
	}
	return n.keys[0], n.vals[0], true
}

// max returns the greatest key and its value.
func (t *tree[V]) max() (streams.ID, V, bool) {
	n := t.root
	if n == nil {
		var zero V
		return streams.ID{}, zero, false
	}
	for n.kids != nil {
		n = n.kids[len(n.kids)-1]
	}
	last := len(n.keys) - 1
	return n.keys[last], n.vals[last], true
}

// ascend calls fn with the keys >= from and their values, in order, until
// fn returns false. fn must not change the tree.
func (t *tree[V]) ascend(from streams.ID, fn func(streams.ID, V) bool) {
	if t.root != nil {
		ascendNode(t.root, from, fn)
	}
}

func ascendNode[V any](n *node[V], from streams.ID, fn func(streams.ID, V) bool) bool {
	if n.kids == nil {
		i, _ := lowerBound(n.keys, from)
		for ; i < len(n.keys); i++ {
			if !fn(n.keys[i], n.vals[i]) {
				return false
			}
		}
		return true
	}
	for i := childIndex(n.keys, from); i < len(n.kids); i++ {
		if !ascendNode(n.kids[i], from, fn) {
			return false
		}
	}
	return true
}

// clone returns a tree with the same contents that shares every node with
// t until either changes.
func (t *tree[V]) clone() tree[V] {
	c := *t
	if t.spare != nil {
		c.spare = nil
		c.mem -= t.spare.bytes()
	}
	t.gen = generations.Add(1)
	c.gen = generations.Add(1)
	return c
}

// mut returns n if it belongs to t, else a copy of n that does (with the
// same capacity, so appends into it do not reallocate again).
func (t *tree[V]) mut(n *node[V]) *node[V] {
	if n.gen == t.gen {
		return n
	}
	c := &node[V]{gen: t.gen, keys: append(make([]streams.ID, 0, cap(n.keys)), n.keys...)}
	if n.kids != nil {
		c.kids = append(make([]*node[V], 0, cap(n.kids)), n.kids...)
	} else {
		c.vals = append(make([]V, 0, cap(n.keys)), n.vals...)
	}
	t.mem += c.bytes() - n.bytes()
	return c
}

// set stores v for k and returns the value it replaced, if any.
func (t *tree[V]) set(k streams.ID, v V) (old V, replaced bool) {
	if t.root == nil {
		t.root = newLeaf[V](t.gen, 1, 1)
		t.root.keys[0], t.root.vals[0] = k, v
		t.n, t.mem = 1, t.root.bytes()
		return old, false
	}
	t.root = t.mut(t.root)
	old, replaced, right, sep := t.insert(t.root, k, v)
	if right != nil {
		t.root = &node[V]{gen: t.gen, keys: []streams.ID{t.root.keys[0], sep}, kids: []*node[V]{t.root, right}}
		t.mem += t.root.bytes()
	}
	if !replaced {
		t.n++
	}
	return old, replaced
}

// newLeaf returns a leaf of generation gen with n entries and capacity c.
func newLeaf[V any](gen uint64, n, c int) *node[V] {
	l := &node[V]{gen: gen}
	l.setArrays(make([]streams.ID, c), make([]V, c), n)
	return l
}

// appendLeaf returns a leaf of one entry and capacity leafMax for a
// right-edge split: the spare, if there is one, else a new leaf.
func (t *tree[V]) appendLeaf() *node[V] {
	r := t.spare
	if r == nil {
		return newLeaf[V](t.gen, 1, leafMax)
	}
	t.spare = nil
	t.mem -= r.bytes() // counted again as the split's new node
	r.gen = t.gen
	r.keys, r.vals = r.keys[:1], r.vals[:1]
	return r
}

// drop accounts for n leaving the tree, and keeps it as the spare when it
// is a full-size leaf that belongs to t and there is none.
func (t *tree[V]) drop(n *node[V]) {
	if n.kids != nil || n.gen != t.gen || t.spare != nil || n.front+cap(n.keys) != leafMax {
		t.mem -= n.bytes()
		return
	}
	kbase, vbase := n.arrays()
	clear(vbase)
	n.setArrays(kbase, vbase, 0)
	t.spare = n
}

// setArrays makes kbase and vbase leaf n's arrays, holding its n entries
// at their start.
func (n *node[V]) setArrays(kbase []streams.ID, vbase []V, l int) {
	n.keys, n.vals, n.front = kbase[:l], vbase[:l], 0
}

// arrays returns the whole arrays of leaf n's windows: front slots before
// them (the windows then point front elements into the arrays: see node).
func (n *node[V]) arrays() ([]streams.ID, []V) {
	if n.front == 0 {
		return n.keys[:cap(n.keys)], n.vals[:cap(n.vals)]
	}
	var v V
	k := unsafe.Add(unsafe.Pointer(unsafe.SliceData(n.keys)), -n.front*int(idSize))
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(n.vals)), -n.front*int(unsafe.Sizeof(v)))
	return unsafe.Slice((*streams.ID)(k), n.front+cap(n.keys)), unsafe.Slice((*V)(p), n.front+cap(n.vals))
}

// compact moves leaf n's entries to the start of its arrays, so that the
// room freed in front by removals is at the end.
func (n *node[V]) compact() {
	l, off := len(n.keys), n.front
	if off == 0 {
		return
	}
	kbase, vbase := n.arrays()
	copy(kbase, n.keys)
	copy(vbase, n.vals)
	clear(vbase[l : off+l])
	n.setArrays(kbase, vbase, l)
}

// insert stores v for k below n, which belongs to t. When n had to split, it
// returns the new right sibling and its separator.
func (t *tree[V]) insert(n *node[V], k streams.ID, v V) (old V, replaced bool, right *node[V], sep streams.ID) {
	b := n.bytes()
	old, replaced, right, sep = t.insertIn(n, k, v)
	t.mem += n.bytes() - b
	if right != nil {
		t.mem += right.bytes()
	}
	return old, replaced, right, sep
}

// insertIn is insert without the accounting of n and its new sibling.
func (t *tree[V]) insertIn(n *node[V], k streams.ID, v V) (old V, replaced bool, right *node[V], sep streams.ID) {
	if n.kids == nil {
		i, found := lowerBound(n.keys, k)
		if found {
			old, n.vals[i] = n.vals[i], v
			return old, true, nil, sep
		}
		if len(n.keys) < leafMax {
			n.insertAt(i, k, v)
			return old, false, nil, sep
		}
		if i == len(n.keys) {
			// An append to a full leaf: n stays full, k starts the next
			// leaf, made big enough for the appends likely to follow.
			right = t.appendLeaf()
			right.keys[0], right.vals[0] = k, v
			return old, false, right, k
		}
		m := len(n.keys) / 2
		right = newLeaf[V](t.gen, len(n.keys)-m, leafMax)
		copy(right.keys, n.keys[m:])
		copy(right.vals, n.vals[m:])
		clear(n.vals[m:])
		n.keys, n.vals = n.keys[:m], n.vals[:m]
		if i <= m {
			n.insertAt(i, k, v)
		} else {
			right.insertAt(i-m, k, v)
		}
		return old, false, right, right.keys[0]
	}
	i := childIndex(n.keys, k)
	c := t.mut(n.kids[i])
	n.kids[i] = c
	old, replaced, r, s := t.insert(c, k, v)
	if r == nil {
		return old, replaced, nil, sep
	}
	if len(n.kids) < innerMax {
		n.insertKid(i+1, s, r)
		return old, replaced, nil, sep
	}
	if i+1 == len(n.kids) {
		// The same right-edge split as a leaf's.
		right = &node[V]{gen: t.gen, keys: make([]streams.ID, 1, innerMax), kids: make([]*node[V], 1, innerMax)}
		right.keys[0], right.kids[0] = s, r
		return old, replaced, right, s
	}
	m := len(n.kids) / 2
	right = &node[V]{gen: t.gen, keys: make([]streams.ID, len(n.kids)-m, innerMax), kids: make([]*node[V], len(n.kids)-m, innerMax)}
	copy(right.keys, n.keys[m:])
	copy(right.kids, n.kids[m:])
	clear(n.kids[m:])
	n.keys, n.kids = n.keys[:m], n.kids[:m]
	if i+1 <= m {
		n.insertKid(i+1, s, r)
	} else {
		right.insertKid(i+1-m, s, r)
	}
	return old, replaced, right, right.keys[0]
}

// insertAt inserts k and v at position i of leaf n, growing its arrays by
// doubling up to leafMax entries.
func (n *node[V]) insertAt(i int, k streams.ID, v V) {
	l := len(n.keys)
	if l == cap(n.keys) && n.front > 0 {
		n.compact()
	}
	if l == cap(n.keys) {
		c := min(max(2*l, leafMinCap), leafMax)
		keys, vals := make([]streams.ID, c), make([]V, c)
		copy(keys, n.keys[:i])
		copy(keys[i+1:], n.keys[i:])
		copy(vals, n.vals[:i])
		copy(vals[i+1:], n.vals[i:])
		n.setArrays(keys, vals, l+1)
	} else {
		n.keys, n.vals = n.keys[:l+1], n.vals[:l+1]
		copy(n.keys[i+1:], n.keys[i:l])
		copy(n.vals[i+1:], n.vals[i:l])
	}
	n.keys[i], n.vals[i] = k, v
}

// insertKid inserts child c with separator s at position i of inner node n.
func (n *node[V]) insertKid(i int, s streams.ID, c *node[V]) {
	n.keys = append(n.keys, streams.ID{})
	copy(n.keys[i+1:], n.keys[i:])
	n.keys[i] = s
	n.kids = append(n.kids, nil)
	copy(n.kids[i+1:], n.kids[i:])
	n.kids[i] = c
}

// delete removes k and returns its value.
func (t *tree[V]) delete(k streams.ID) (V, bool) {
	if t.root == nil {
		var zero V
		return zero, false
	}
	t.root = t.mut(t.root)
	old, ok := t.remove(t.root, k)
	if !ok {
		return old, false
	}
	t.n--
	for {
		r := t.root
		switch {
		case r.kids != nil && len(r.kids) == 0, r.kids == nil && len(r.keys) == 0:
			t.root, t.spare, t.mem = nil, nil, 0
		case r.kids != nil && len(r.kids) == 1:
			t.root = r.kids[0]
			t.drop(r)
			continue
		}
		return old, true
	}
}

// remove deletes k below n, which belongs to t, and returns its value.
// When k is absent nothing changes but the ownership of the nodes on its
// path.
func (t *tree[V]) remove(n *node[V], k streams.ID) (old V, ok bool) {
	b := n.bytes()
	old, ok = t.removeIn(n, k)
	t.mem += n.bytes() - b
	return old, ok
}

// removeIn is remove without the accounting of n itself.
func (t *tree[V]) removeIn(n *node[V], k streams.ID) (old V, ok bool) {
	if n.kids == nil {
		i, found := lowerBound(n.keys, k)
		if !found {
			return old, false
		}
		old = n.vals[i]
		n.removeAt(i)
		return old, true
	}
	i := childIndex(n.keys, k)
	c := t.mut(n.kids[i])
	n.kids[i] = c
	if old, ok = t.remove(c, k); ok && 2*len(c.keys) < c.maxLen() {
		t.rebalance(n, i)
	}
	return old, ok
}

// maxLen is the most keys n may hold.
func (n *node[V]) maxLen() int {
	if n.kids == nil {
		return leafMax
	}
	return innerMax
}

// rebalance handles the child i of n, which belongs to t and fell under
// half full: an empty child goes; otherwise it merges with a neighbour when
// the two fit in one node.
func (t *tree[V]) rebalance(n *node[V], i int) {
	c := n.kids[i]
	switch {
	case len(c.keys) == 0:
		n.removeKid(i)
		t.drop(c)
	case i > 0 && len(n.kids[i-1].keys)+len(c.keys) <= c.maxLen():
		l := t.mut(n.kids[i-1])
		n.kids[i-1] = l
		b := l.bytes()
		l.absorb(c, n.keys[i])
		n.removeKid(i)
		t.mem += l.bytes() - b
		t.drop(c)
	case i+1 < len(n.kids) && len(c.keys)+len(n.kids[i+1].keys) <= c.maxLen():
		r, b := n.kids[i+1], c.bytes()
		c.absorb(r, n.keys[i+1])
		n.removeKid(i + 1)
		t.mem += c.bytes() - b
		t.drop(r)
	}
}

// absorb appends the contents of r, n's right neighbour under separator
// sep, to n (which the caller owns). r is only read.
func (n *node[V]) absorb(r *node[V], sep streams.ID) {
	if n.kids != nil {
		n.keys = append(append(n.keys, sep), r.keys[1:]...)
		n.kids = append(n.kids, r.kids...)
		return
	}
	l := len(n.keys) + len(r.keys)
	if l > cap(n.keys) && l <= n.front+cap(n.keys) {
		n.compact()
	}
	if l > cap(n.keys) {
		c := leafMinCap
		for c < l {
			c *= 2
		}
		c = min(c, leafMax)
		keys, vals := make([]streams.ID, c), make([]V, c)
		copy(keys, n.keys)
		copy(vals, n.vals)
		n.setArrays(keys, vals, len(n.keys))
	}
	n.keys = append(n.keys, r.keys...)
	n.vals = append(n.vals, r.vals...)
}

// removeAt deletes position i of leaf n, moving the shorter side: the
// entries before i move right and the leaf's windows start one later (so
// acknowledging in ID order, which removes the first entry of the first
// leaf, moves nothing), or the entries after i move left. It halves the
// leaf's arrays once its window is a quarter full.
func (n *node[V]) removeAt(i int) {
	l := len(n.keys) - 1
	var zero V
	if i < l/2 {
		copy(n.keys[1:i+1], n.keys[:i])
		copy(n.vals[1:i+1], n.vals[:i])
		n.vals[0] = zero
		n.keys, n.vals = n.keys[1:], n.vals[1:]
		n.front++
	} else {
		copy(n.keys[i:], n.keys[i+1:])
		copy(n.vals[i:], n.vals[i+1:])
		n.vals[l] = zero
		n.keys, n.vals = n.keys[:l], n.vals[:l]
	}
	if c := cap(n.keys); c > leafMinCap && 4*l <= c {
		keys, vals := make([]streams.ID, c/2), make([]V, c/2)
		copy(keys, n.keys)
		copy(vals, n.vals)
		n.setArrays(keys, vals, l)
	}
}

// removeKid deletes child i of inner node n.
func (n *node[V]) removeKid(i int) {
	l := len(n.kids) - 1
	copy(n.keys[i:], n.keys[i+1:])
	copy(n.kids[i:], n.kids[i+1:])
	n.kids[l] = nil
	n.keys, n.kids = n.keys[:l], n.kids[:l]
}
