package streams

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// bufNode is a node as SnapshotBuffers gives it.
type bufNode struct {
	Key     ID
	Entries int
	Buf     []byte
}

func buffers(s *Stream) []bufNode {
	var out []bufNode
	s.SnapshotBuffers(func(key ID, entries int, buf []byte) bool {
		out = append(out, bufNode{key, entries, append([]byte(nil), buf...)})
		return true
	})
	return out
}

// restoreBuffers rebuilds s through AddNodeBuffer from its buffers.
func restoreBuffers(t *testing.T, s *Stream) *Stream {
	t.Helper()
	r := NewRestorer(s.SnapshotMeta())
	for _, n := range buffers(s) {
		if err := r.AddNodeBuffer(n.Key, n.Entries, n.Buf); err != nil {
			t.Fatal(err)
		}
	}
	c, err := r.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sameBuffers(t *testing.T, a, b *Stream) {
	t.Helper()
	ba, bb := buffers(a), buffers(b)
	if len(ba) != len(bb) {
		t.Fatalf("%d nodes vs %d", len(ba), len(bb))
	}
	for i := range ba {
		if ba[i].Key != bb[i].Key || ba[i].Entries != bb[i].Entries || !bytes.Equal(ba[i].Buf, bb[i].Buf) {
			t.Fatalf("node %d differs:\n%+v\n%+v", i, ba[i], bb[i])
		}
	}
}

// randomStream applies a random mix of appends (field names varying, some
// values large or integers), XDELs, trims and XSETIDs.
func randomStream(seed uint64, steps int) *Stream {
	rng := rand.New(rand.NewPCG(seed, 7))
	s := New()
	maxEntries := []int{3, 10, 100}[rng.IntN(3)]
	maxBytes := []int64{NoNodeMaxBytes, 0, 200, 4096}[rng.IntN(4)]
	var ms uint64 = 1
	for i := 0; i < steps; i++ {
		switch k := rng.IntN(20); {
		case k < 12:
			ms += uint64(rng.IntN(3))
			id, _ := s.LastID().Next()
			if ms > id.Ms {
				id = ID{Ms: ms}
			}
			f := []byte("f")
			if rng.IntN(4) == 0 {
				f = []byte("g" + strconv.Itoa(rng.IntN(3)))
			}
			v := []byte(strconv.Itoa(rng.IntN(1000)))
			if rng.IntN(8) == 0 {
				v = bytes.Repeat([]byte{'x'}, rng.IntN(600))
			}
			fields := [][]byte{f, v}
			if rng.IntN(5) == 0 {
				fields = append(fields, []byte("h"), []byte("-12"))
			}
			s.AppendNode(id, fields, maxEntries, maxBytes)
		case k < 16:
			if e, ok := s.First(); ok {
				var pick ID
				n := rng.IntN(8)
				s.Ascend(e.ID, func(x Entry) bool { pick = x.ID; n--; return n > 0 })
				s.Delete(pick)
			}
		case k < 18:
			s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: int64(rng.IntN(40)), Approx: rng.IntN(2) == 0})
		case k < 19:
			if e, ok := s.First(); ok {
				s.Trim(TrimArgs{Strategy: TrimMinID, MinID: ID{Ms: e.ID.Ms + uint64(rng.IntN(3))}, Approx: rng.IntN(2) == 0})
			}
		default:
			if s.Len() == 0 && rng.IntN(2) == 0 {
				_ = s.SetID(ID{Ms: ms / 2}, -1, nil)
			}
		}
	}
	return s
}

// TestSnapshotBuffersRoundTrip: a stream rebuilt from its buffers, or from
// its entries (a version 1 snapshot), gives the same buffers, the same
// layout and the same future: equal streams, equal bytes.
func TestSnapshotBuffersRoundTrip(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		s := randomStream(seed, 600)
		fromBufs, fromEntries := restoreBuffers(t, s), restore(t, s)
		for _, c := range []*Stream{fromBufs, fromEntries} {
			sameStream(t, s, c)
			sameBuffers(t, s, c)
		}
		sameBuffers(t, fromBufs, restoreBuffers(t, fromEntries))
		// The same appends, deletes and trims keep them equal, node
		// sizes (stream-node-max-bytes) included.
		for _, x := range []*Stream{s, fromBufs, fromEntries} {
			id, _ := x.LastID().Next()
			for i := 0; i < 30; i++ {
				x.AppendNode(id, [][]byte{[]byte("f"), bytes.Repeat([]byte{'v'}, 100)}, 10, 500)
				id, _ = id.Next()
			}
			if e, ok := x.First(); ok {
				x.Delete(e.ID)
			}
			x.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 25, Approx: true})
		}
		sameStream(t, s, fromBufs)
		sameStream(t, s, fromEntries)
		sameBuffers(t, s, fromBufs)
		sameBuffers(t, s, fromEntries)
	}
}

// TestAddNodeBufferRejects checks that damaged buffers are clean errors.
func TestAddNodeBufferRejects(t *testing.T) {
	s := New()
	s.AppendNode(ID{Ms: 5}, [][]byte{[]byte("f"), []byte("v")}, 100, 0)
	s.AppendNode(ID{Ms: 6}, [][]byte{[]byte("f"), []byte("w")}, 100, 0)
	s.AppendNode(ID{Ms: 7}, [][]byte{[]byte("g"), []byte("x")}, 100, 0)
	good := buffers(s)[0]
	bad := func(name string, key ID, entries int, buf []byte) {
		t.Helper()
		r := NewRestorer(SnapshotMeta{Tail: 0})
		if err := r.AddNodeBuffer(key, entries, buf); !errors.Is(err, ErrBadSnapshotNode) {
			t.Errorf("%s: %v", name, err)
		}
	}
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good.Buf...)) }
	bad("no entries", good.Key, 0, good.Buf)
	bad("one entry too many", good.Key, 4, good.Buf)
	bad("one entry too few", good.Key, 2, good.Buf)
	bad("ms past 2^64", ID{Ms: math.MaxUint64}, 3, good.Buf)
	bad("truncated", good.Key, 3, good.Buf[:len(good.Buf)-1])
	bad("trailing byte", good.Key, 3, append(append([]byte(nil), good.Buf...), 0))
	// Layout: 01 01 'f' | 02 00 00 01 'v' | 02 01 00 01 'w' | 00 02 00 02 01 'g' 01 'x'
	bad("unknown flag", good.Key, 3, edit(func(b []byte) []byte { b[3] = 0x10; return b }))
	bad("same fields off for the master's", good.Key, 3, edit(func(b []byte) []byte {
		return append(append(b[:3:3], 0, 0, 0, 2, 1, 'f', 1, 'v'), good.Buf[8:]...)
	}))
	bad("ID going back", good.Key, 3, edit(func(b []byte) []byte { b[9] = 0; return b }))
	bad("non-minimal varint", good.Key, 3, edit(func(b []byte) []byte {
		return append(append(b[:4:4], 0x80, 0), good.Buf[5:]...)
	}))
	bad("tombstone with fields", good.Key, 3, edit(func(b []byte) []byte { b[8] = flagDeleted; return b }))
	bad("item past the end", good.Key, 3, edit(func(b []byte) []byte { b[len(b)-2] = 9; return b }))

	r := NewRestorer(SnapshotMeta{Tail: 0})
	if err := r.AddNodeBuffer(good.Key, 3, good.Buf); err != nil {
		t.Fatal(err)
	}
	if err := r.AddNodeBuffer(good.Key, 3, good.Buf); !errors.Is(err, ErrBadSnapshotNode) {
		t.Fatalf("same key twice: %v", err)
	}
}

// FuzzAddNodeBuffer: any buffer is either refused or restores a stream
// whose buffer is the same bytes (so canonical) and that reads without
// panicking.
func FuzzAddNodeBuffer(f *testing.F) {
	for seed := uint64(1); seed <= 5; seed++ {
		for _, n := range buffers(randomStream(seed, 80)) {
			f.Add(n.Key.Ms, n.Key.Seq, n.Entries, n.Buf)
		}
	}
	f.Fuzz(func(t *testing.T, ms, seq uint64, entries int, buf []byte) {
		r := NewRestorer(SnapshotMeta{Tail: 0})
		if err := r.AddNodeBuffer(ID{ms, seq}, entries, append([]byte(nil), buf...)); err != nil {
			if !errors.Is(err, ErrBadSnapshotNode) {
				t.Fatal(err)
			}
			return
		}
		s, err := r.Finish()
		if err != nil {
			t.Fatal(err)
		}
		got := buffers(s)
		if len(got) != 1 || got[0].Entries != entries || !bytes.Equal(got[0].Buf, buf) {
			t.Fatalf("accepted buffer is not canonical:\n%x\n%x", buf, got[0].Buf)
		}
		var n int64
		s.Ascend(MinID, func(Entry) bool { n++; return true })
		s.Descend(MaxID, func(Entry) bool { n--; return true })
		if n != 0 {
			t.Fatalf("ascend and descend disagree")
		}
	})
}
