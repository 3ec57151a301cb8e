package streams

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// TestNodeBytesReplicas runs a seeded random mix of appends (varied field
// names, values of 1 to 600 bytes, integer-looking values), deletes and
// trims with a stream-node-max-bytes limit on a stream and on a copy
// restored from its snapshot layout at random steps, as a replica
// restoring a snapshot would: both must keep the same nodes (so that "~"
// trims agree), the same listpack sizes, and the entries appended.
func TestNodeBytesReplicas(t *testing.T) {
	names := [][]string{{"f"}, {"f"}, {"a", "b"}, {"b", "a"}, {"x", "y", "z"}}
	for seed := int64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := New()
		r := restore(t, s)
		model := map[ID][][]byte{}
		var live []ID
		next := ID{1, 0}
		maxEntries := rng.Intn(30)
		maxBytes := int64(100 + rng.Intn(3000))
		for step := 0; step < 1000; step++ {
			switch op := rng.Intn(12); {
			case op < 6:
				next = ID{next.Ms + uint64(rng.Intn(3)), next.Seq + 1 + uint64(rng.Intn(300))}
				var fields [][]byte
				for _, n := range names[rng.Intn(len(names))] {
					v := bytes.Repeat([]byte{byte('a' + rng.Intn(26))}, 1+rng.Intn(600)*rng.Intn(2))
					if rng.Intn(4) == 0 {
						v = []byte(fmt.Sprint(rng.Int63n(1<<40) - 1<<39))
					}
					fields = append(fields, []byte(n), v)
				}
				s.AppendNode(next, fields, maxEntries, maxBytes)
				r.AppendNode(next, fields, maxEntries, maxBytes)
				model[next] = fields
				live = append(live, next)
			case op < 9 && len(live) > 0:
				i := rng.Intn(len(live))
				if rng.Intn(2) == 0 {
					i = 0 // the head: a node's first live entry changes
				}
				if !s.Delete(live[i]) || !r.Delete(live[i]) {
					t.Fatalf("seed %d step %d: delete of live %v failed", seed, step, live[i])
				}
				delete(model, live[i])
				live = append(live[:i], live[i+1:]...)
			case op == 9:
				ta := TrimArgs{Strategy: TrimMaxLen, MaxLen: int64(rng.Intn(len(live) + 1)), Approx: rng.Intn(2) == 0}
				if len(live) > 0 && rng.Intn(2) == 0 {
					ta = TrimArgs{Strategy: TrimMinID, MinID: live[rng.Intn(len(live))], Approx: rng.Intn(2) == 0}
				}
				if a, b := s.Trim(ta), r.Trim(ta); a != b {
					t.Fatalf("seed %d step %d: trim removed %d and %d", seed, step, a, b)
				}
				for len(live) > int(s.Len()) {
					delete(model, live[0])
					live = live[1:]
				}
			case op == 10:
				r = restore(t, s)
			default:
				if c := s.CloneForSnapshot(); rng.Intn(2) == 0 {
					s = c
				}
			}
			checkInvariants(t, s)
			checkInvariants(t, r)
			sameStream(t, s, r)
			var sizes [2][]int64
			for k, x := range []*Stream{s, r} {
				x.nodes.Ascend(func(n *node) bool { sizes[k] = append(sizes[k], n.lpSize()); return true })
			}
			if fmt.Sprint(sizes[0]) != fmt.Sprint(sizes[1]) {
				t.Fatalf("seed %d step %d: listpack sizes %v and %v", seed, step, sizes[0], sizes[1])
			}
			i := 0
			s.Ascend(MinID, func(e Entry) bool {
				if e.ID != live[i] || fmt.Sprintf("%q", e.Fields) != fmt.Sprintf("%q", model[e.ID]) {
					t.Fatalf("seed %d step %d: entry %v %q, want %v %q", seed, step, e.ID, e.Fields, live[i], model[live[i]])
				}
				i++
				return true
			})
			if i != len(live) {
				t.Fatalf("seed %d step %d: %d entries, want %d", seed, step, i, len(live))
			}
		}
	}
}

// TestLpInt checks which strings Redis's listpack stores as integers.
func TestLpInt(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "1": true, "-1": true, "123": true, "9223372036854775807": true,
		"-9223372036854775808": true, "9223372036854775808": false, "-9223372036854775809": false,
		"": false, "-": false, "-0": false, "01": false, "+1": false, "1a": false, " 1": false,
		"v": false, "18446744073709551616": false, "100000000000000000000": false,
	} {
		if _, ok := lpInt([]byte(s)); ok != want {
			t.Errorf("lpInt(%q) = %v, want %v", s, ok, want)
		}
	}
	// Sizes as listpack.c encodes them.
	for _, c := range []struct {
		s    string
		want int64
	}{{"v", 3}, {"5", 2}, {"127", 2}, {"128", 3}, {"-4096", 3}, {"40000", 5}, {string(make([]byte, 63)), 65},
		{string(make([]byte, 64)), 67}, {string(make([]byte, 126)), 130}, {string(make([]byte, 5000)), 5007}} {
		if got := lpStrElem([]byte(c.s)); got != c.want {
			t.Errorf("lpStrElem(%d bytes %.8q) = %d, want %d", len(c.s), c.s, got, c.want)
		}
	}
}

// TestEntriesStayValid checks that entries handed out (their values share
// the nodes' buffers) keep their contents whatever the stream does next,
// and that appending to a value handed out does not change the stream.
func TestEntriesStayValid(t *testing.T) {
	s := New()
	val := func(i int) []byte { return []byte(fmt.Sprintf("value-%d-%s", i, bytes.Repeat([]byte{'x'}, i%50))) }
	for i := 1; i <= 300; i++ {
		s.AppendNode(ID{uint64(i), 0}, [][]byte{[]byte("f"), val(i)}, 10, 0)
	}
	var got []Entry
	s.Ascend(MinID, func(e Entry) bool { got = append(got, e); return true })
	check := func(when string) {
		t.Helper()
		for i, e := range got {
			if string(e.Fields[0]) != "f" || string(e.Fields[1]) != string(val(i+1)) {
				t.Fatalf("%s: entry %v is %q", when, e.ID, e.Fields)
			}
		}
	}
	// A value handed out is capped: appending to it copies.
	_ = append(got[0].Fields[1], "!!!!"...)
	_ = append(got[0].Fields, []byte("extra"))
	if e, _ := s.Get(ID{1, 0}); string(e.Fields[1]) != string(val(1)) || len(e.Fields) != 2 {
		t.Fatalf("stream changed by an append to a handed-out value: %q", e.Fields)
	}
	for i := 295; i <= 300; i++ {
		s.Delete(ID{uint64(i), 0})
	}
	check("after deletes")
	if err := s.SetID(ID{294, 0}, -1, nil); err != nil {
		t.Fatal(err)
	}
	s.AppendNode(ID{294, 5}, [][]byte{[]byte("g"), []byte("overwrite?")}, 10, 0) // drops tombstones
	if s.tail.key != (ID{291, 0}) || s.tail.count != 5 {
		t.Fatalf("tail %v holds %d entries, want 291-0 with 5 (tombstones dropped)", s.tail.key, s.tail.count)
	}
	check("after XSETID and an append over tombstones")
	for i := 301; i <= 600; i++ {
		s.AppendNode(ID{uint64(i), 0}, [][]byte{[]byte("f"), []byte("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")}, 10, 0)
	}
	s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 123})
	c := s.Clone()
	c.Delete(ID{600, 0})
	check("after appends, trims and a clone")
	checkInvariants(t, s)
	checkInvariants(t, c)
}
