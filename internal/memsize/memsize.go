// Package memsize estimates what Go's allocator and the containers streamd
// keeps its state in (slices, maps, google/btree trees) take for a given
// content, for MEMORY USAGE and INFO used_memory. It computes from sizes
// only (no reflection, no runtime calls), so the engine packages may use it
// in their pure accounting. It imports nothing of streamd's.
package memsize

// classes are the Go runtime's small object size classes
// (internal/runtime/gc.SizeClassToSize, the same since Go 1.21).
var classes = [...]int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792,
	2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728,
	10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// pageSize is the runtime's page: objects above 32 KiB take whole pages.
const pageSize = 8192

// smallClass is Class for sizes up to smallMax, by (n+7)/8.
const smallMax = 1024

var smallClass = func() (t [smallMax/8 + 1]int64) {
	for i := range t {
		t[i] = classOf(int64(i) * 8)
	}
	return t
}()

// appendedTab is Appended for up to 64 elements of 8, 16, ... 64 bytes.
var appendedTab = func() (t [9][65]int64) {
	for e := int64(1); e <= 8; e++ {
		for n := int64(1); n <= 64; n++ {
			t[e][n] = appended(n, 8*e)
		}
	}
	return t
}()

// Class returns the bytes an allocation of n bytes takes: its size class,
// or whole pages above 32 KiB; 0 for n <= 0.
func Class(n int64) int64 {
	if n <= 0 {
		return 0
	}
	if n <= smallMax {
		return smallClass[(n+7)/8]
	}
	return classOf(n)
}

// classOf is Class by search.
func classOf(n int64) int64 {
	if n <= 0 {
		return 0
	}
	if n > classes[len(classes)-1] {
		return (n + pageSize - 1) / pageSize * pageSize
	}
	lo, hi := 0, len(classes)-1
	for lo < hi {
		m := (lo + hi) / 2
		if classes[m] < n {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return classes[lo]
}

// String returns the bytes a string's contents of length n take (the
// header is counted where the string is held).
func String(n int) int64 { return Class(int64(n)) }

// Appended returns the bytes of the backing array of a slice of n elements
// of size elem grown one append at a time from nil (Go's growslice:
// doubling below 256 elements, then by a quarter, rounded up to a size
// class).
func Appended(n, elem int64) int64 {
	if n <= 0 || elem <= 0 {
		return 0
	}
	if n <= 64 && elem <= 64 && elem%8 == 0 {
		return appendedTab[elem/8][n]
	}
	return appended(n, elem)
}

// appended is Appended by simulating the growth.
func appended(n, elem int64) int64 {
	c := int64(1)
	for c < n {
		if c < 256 {
			c *= 2
		} else {
			c += (c + 3*256) / 4
		}
		c = Class(c*elem) / elem
	}
	return Class(c * elem)
}

// Go's maps (Swiss tables since Go 1.24): slots in groups of 8 behind 8
// control bytes, at most 7/8 full, doubled when full, so between 7/16 and
// 7/8 full once grown: a slot costs its key and value over a mean load of
// about 2/3.
const (
	mapHeader = 48 // the map header (its directory and small-map fields)
	mapLoadPc = 66 // mean load of a grown map, in percent
)

// Map returns the bytes of a Go map holding n entries whose key and value
// take slot bytes together (string keys: 16 for the header, plus the value).
func Map(n, slot int64) int64 {
	if n <= 0 {
		return mapHeader
	}
	if n <= 8 {
		return mapHeader + Class(8+8*slot)
	}
	return mapHeader + (n*slot+n)*100/mapLoadPc
}

// google/btree at degree 32: a node holds at most 63 items. A tree filled
// in ascending order (stream nodes by ID, pending entries as XREADGROUP
// delivers them, each consumer's index) splits its rightmost node when it
// is full and gets one more item: the left half keeps 31 items in the
// 64-item array it grew, one item goes up to the parent, and the right
// half starts from an append of 32. Inner nodes fill the same way with the
// items that come up, plus an array of child pointers.
const (
	btreeNode    = 64 // node[T]: items and children slice headers, cow pointer (56 bytes)
	btreeTree    = 48 // BTreeG (32 bytes) and its copy-on-write context (16)
	btreeMax     = 63 // 2 × degree − 1
	btreePerNode = 32 // items a full node adds: 31 kept, 1 sent up
	// BTreeFreeList is NewG's own free list: the list and its 32-pointer
	// array (trees made with NewWithFreeListG share one and do not pay it).
	BTreeFreeList = 32 + 256
)

// BTree returns the bytes of a google/btree of degree 32 holding n items
// of size item, filled in ascending order, without its free list (see
// BTreeFreeList): the tree, its nodes and their arrays. Items' own
// allocations are the caller's to add.
func BTree(n, item int64) int64 {
	if n <= 0 {
		return btreeTree
	}
	return btreeTree + btreeLevel(n, item, false)
}

// btreeLevel returns the bytes of the nodes holding n items at one level
// of an ascending-filled tree, and of the levels above it.
func btreeLevel(n, item int64, inner bool) int64 {
	children := func(c int64) int64 {
		if !inner {
			return 0
		}
		return Appended(c, 8)
	}
	if n <= btreeMax {
		return btreeNode + Appended(n, item) + children(n+1)
	}
	splits := (n-btreeMax-1)/btreePerNode + 1
	rest := n - btreePerNode*splits
	full := btreeNode + Appended(btreeMax, item) + children(btreeMax+1)
	last := btreeNode + Appended(rest, item) + children(rest+1)
	return splits*full + last + btreeLevel(splits, item, true)
}
