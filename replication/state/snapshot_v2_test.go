package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// TestSnapshotV1ToV2 reads version 1 snapshots of random states (the
// format of releases before node buffers) and requires the same state: its
// version 2 snapshot, and so the state hash, equals the original's, and it
// answers the same.
func TestSnapshotV1ToV2(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		ks, g := buildState(t, seed, 2500)
		v1 := snapV1(t, ks)
		if string(v1[12:16]) != "\x00\x00\x00\x01" {
			t.Fatalf("version 1 header %q", v1[:16])
		}
		up := restoreSnap(t, v1)
		checkInvariants(t, up)
		if up.Level() != 0 {
			t.Fatalf("a version 1 snapshot restored at level %d", up.Level())
		}
		want, got := snap(t, ks), snap(t, up)
		if sha256.Sum256(want) != sha256.Sum256(got) {
			t.Fatalf("seed %d: state hash after v1 -> v2 differs (%d vs %d bytes)", seed, len(want), len(got))
		}
		sameView(t, ks, up, g.now)
	}
}

// TestEngineLevel: below level 1 nodes split by entry count only, as
// releases before it did; from the EngineLevel entry on, also at
// stream-node-max-bytes. The level rises only, never past CurrentLevel,
// and survives a snapshot.
func TestEngineLevel(t *testing.T) {
	ks := New()
	mustApply(t, ks, wire.ConfigSet{Name: "stream-node-max-bytes", Value: "1000"}, 1)
	big := bytes.Repeat([]byte{'x'}, 300)
	add := func(n int) {
		for i := 0; i < n; i++ {
			mustApply(t, ks, wire.XAdd{Base: base("s"), ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), big}, Trim: wire.Trim{Limit: -1}}, 2)
		}
	}
	nodes := func() int64 { return ks.dbs[0].keys["s"].Stream.NodeCount() }
	add(10)
	if ks.Level() != 0 || nodes() != 1 {
		t.Fatalf("level %d, %d nodes; want level 0 and one node of 10 entries", ks.Level(), nodes())
	}
	if res := mustApply(t, ks, wire.EngineLevel{Level: 1}, 3); res != int64(1) {
		t.Fatalf("EngineLevel result %v", res)
	}
	add(9) // 300-byte values, 1000-byte nodes: 3 entries a node
	if nodes() != 4 {
		t.Fatalf("%d nodes after level 1, want 4", nodes())
	}
	if res := mustApply(t, ks, wire.EngineLevel{Level: 0}, 4); res != int64(1) || ks.Level() != 1 {
		t.Fatalf("a lower level lowered it: %v, level %d", res, ks.Level())
	}
	if _, err := ks.Apply(wire.EngineLevel{Level: CurrentLevel + 1}, 5); err == nil ||
		!strings.HasPrefix(err.Error(), "ERR engine level 2 is not supported") || ks.Level() != 1 {
		t.Fatalf("unknown level: %v, level %d", err, ks.Level())
	}
	rs := restoreSnap(t, snap(t, ks))
	if rs.Level() != 1 || rs.Clone().Level() != 1 {
		t.Fatalf("restored level %d", rs.Level())
	}
	for _, k := range []*Keyspace{ks, rs} {
		for range 5 {
			mustApply(t, k, wire.XAdd{Base: base("s"), ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), big}, Trim: wire.Trim{Limit: -1}}, 6)
		}
	}
	if !bytes.Equal(snap(t, ks), snap(t, rs)) {
		t.Fatal("restored state appends differently")
	}
}

// reframe returns snapshot b with its body changed by edit, framed and
// checksummed again, so only the record decoding can refuse it.
func reframe(t *testing.T, b []byte, edit func(body []byte) []byte) []byte {
	t.Helper()
	var body []byte
	off := len(SnapshotMagic) + 4
	for {
		n := int(binary.BigEndian.Uint32(b[off:]))
		if n == 0 {
			off += 4
			break
		}
		body = append(body, b[off+frameHeaderLen:off+frameHeaderLen+n]...)
		off += frameHeaderLen + n
	}
	records := binary.BigEndian.Uint64(b[off:])
	var out bytes.Buffer
	f := newFrameWriter(&out)
	f.raw(b[:len(SnapshotMagic)+4])
	f.write(edit(body))
	if err := f.finish(records); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestSnapshotBadNodeBuffer: a node buffer that passes the checksums but is
// not a valid node is a clean ErrCorruptSnapshot naming the node.
func TestSnapshotBadNodeBuffer(t *testing.T) {
	ks := New()
	for i := 0; i < 3; i++ {
		mustApply(t, ks, wire.XAdd{Base: base("s"), ID: streams.IDSpec{Auto: true}, Fields: fv("f", "hello"), Trim: wire.Trim{Limit: -1}}, 7)
	}
	b := snap(t, ks)
	if rs := restoreSnap(t, reframe(t, b, func(body []byte) []byte { return body })); !bytes.Equal(snap(t, rs), b) {
		t.Fatal("reframe changed the snapshot")
	}
	cases := []struct {
		name string
		edit func(body []byte) []byte
	}{
		{"value length past the buffer", func(body []byte) []byte {
			i := bytes.Index(body, []byte("\x05hello"))
			body[i] = 0x7f
			return body
		}},
		{"unknown entry flag", func(body []byte) []byte {
			i := bytes.Index(body, []byte("\x05hello"))
			body[i-3] = 0x40 // the first entry's flags byte
			return body
		}},
		{"ID out of order", func(body []byte) []byte {
			i := bytes.LastIndex(body, []byte("\x05hello"))
			body[i-1] = 0 // the last entry's seq delta: 2 -> 0
			return body
		}},
	}
	for _, tc := range cases {
		_, err := ReadSnapshot(bytes.NewReader(reframe(t, b, tc.edit)))
		if !errors.Is(err, ErrCorruptSnapshot) || !strings.Contains(err.Error(), "bad stream node") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
