package state

import (
	"bytes"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func snap(t testing.TB, ks *Keyspace) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := ks.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func restoreSnap(t testing.TB, b []byte) *Keyspace {
	t.Helper()
	ks, err := ReadSnapshot(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// checkInvariants runs every group's PEL checker.
func checkInvariants(t testing.TB, ks *Keyspace) {
	t.Helper()
	if err := ks.CheckMemory(); err != nil {
		t.Fatal(err)
	}
	for i, d := range ks.dbs {
		for k, o := range d.keys {
			if err := o.Groups.Check(); err != nil {
				t.Fatalf("db %d key %q: %v", i, k, err)
			}
			if err := checkIDMP(o.IDMP); err != nil {
				t.Fatalf("db %d key %q: %v", i, k, err)
			}
		}
	}
}

// view is everything a client can read about the keyspace at nowMs: per
// key (expired ones included, which answer as absent) TTL, XINFO STREAM
// FULL, XRANGE, XINFO GROUPS and, per group, XPENDING (both forms) and
// XINFO CONSUMERS; plus INFO keyspace and the settings.
func view(ks *Keyspace, nowMs int64) []any {
	d, s := ks.IDMPDefaults()
	out := []any{ks.NodeMaxEntries(), ks.NodeMaxBytes(), ks.LastNow(), d, s}
	q := func(q wire.Query) {
		res, err := ks.Query(q, nowMs)
		if err != nil {
			out = append(out, err.Error())
			return
		}
		out = append(out, res)
	}
	q(wire.KeyspaceInfo{})
	for i, d := range ks.dbs {
		var keys []string
		for k := range d.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b := wire.Base{DB: i, Key: k}
			out = append(out, k)
			q(wire.TTL{Base: b, Millis: true})
			q(wire.XInfoStream{Base: b, Full: true})
			q(wire.XRange{Base: b, Start: streams.MinID, End: streams.MaxID, Count: -1})
			q(wire.XRange{Base: b, Start: streams.MinID, End: streams.MaxID, Count: -1, Rev: true})
			q(wire.XInfoGroups{Base: b})
			for _, g := range d.keys[k].Groups.All() {
				q(wire.XPending{Base: b, Group: g.Name, Summary: true})
				q(wire.XPending{Base: b, Group: g.Name, IdleMs: -1, Start: streams.MinID, End: streams.MaxID, Count: 1 << 30})
				q(wire.XInfoConsumers{Base: b, Group: g.Name})
			}
		}
	}
	return out
}

func sameView(t *testing.T, a, b *Keyspace, nowMs int64) {
	t.Helper()
	va, vb := view(a, nowMs), view(b, nowMs)
	if !reflect.DeepEqual(va, vb) {
		for i := range min(len(va), len(vb)) {
			if !reflect.DeepEqual(va[i], vb[i]) {
				t.Fatalf("views differ at %d:\n%+v\n%+v", i, va[i], vb[i])
			}
		}
		t.Fatalf("views differ in length: %d vs %d", len(va), len(vb))
	}
}

// buildState applies n random commands from seed to a new keyspace.
func buildState(t testing.TB, seed uint64, n int) (*Keyspace, *opGen) {
	t.Helper()
	ks := New()
	g := newOpGen(seed, ks)
	if _, err := ks.Apply(wire.ConfigSet{Name: "stream-node-max-entries", Value: "4"}, g.now); err != nil {
		t.Fatal(err)
	}
	for range n {
		ks.Apply(g.command(false), g.tick())
	}
	return ks, g
}

func TestSnapshotRoundTrip(t *testing.T) {
	ks, g := buildState(t, 1, 3000)
	// Something of everything, whatever the random run left.
	mustApply(t, ks, wire.ConfigSet{Name: "stream-node-max-bytes", Value: "8kb"}, g.now)
	zid := mustApply(t, ks, xadd("z", "*"), g.now).(streams.ID)
	mustApply(t, ks, wire.XGroupCreate{Base: base("z"), Group: "zg", EntriesRead: -1}, g.now)
	mustApply(t, ks, wire.XReadGroup{Group: "zg", Consumer: "zc", Streams: []wire.ReadStream{{Key: "z", New: true}}}, g.now)
	// A delivery count too big for the compact pending entry.
	mustApply(t, ks, wire.XClaim{Base: base("z"), Group: "zg", Consumer: "zc2", IDs: []streams.ID{zid},
		IdleMs: -1, TimeMs: -1, RetryCount: 1 << 40, JustID: true}, g.now)
	mustApply(t, ks, wire.Expire{Base: base("z"), Ms: 100_000, Relative: true}, g.now)
	mustApply(t, ks, wire.XAdd{Base: wire.Base{DB: 15, Key: "last"}, ID: streams.IDSpec{Auto: true},
		Fields: fv("", ""), Trim: wire.Trim{Limit: -1}}, g.now)
	checkInvariants(t, ks)

	b := snap(t, ks)
	rs := restoreSnap(t, b)
	checkInvariants(t, rs)
	if b2 := snap(t, rs); !bytes.Equal(b, b2) {
		t.Fatalf("snapshot of the restored state differs (%d vs %d bytes)", len(b), len(b2))
	}
	for _, now := range []int64{0, g.now, g.now + 150, g.now + 200_000} {
		sameView(t, ks, rs, now)
	}
	t.Logf("%d-byte snapshot", len(b))

	// Both go on the same way.
	g2 := newOpGen(99, ks)
	g2.now = g.now
	for range 1000 {
		cmd, now := g2.command(false), g2.tick()
		ra, ea := ks.Apply(cmd, now)
		rb, eb := rs.Apply(cmd, now)
		if !reflect.DeepEqual(ra, rb) || !reflect.DeepEqual(ea, eb) {
			t.Fatalf("%#v: %v %v vs %v %v", cmd, ra, ea, rb, eb)
		}
	}
	if !bytes.Equal(snap(t, ks), snap(t, rs)) {
		t.Fatal("snapshots differ after the same commands")
	}
}

// TestSnapshotClone checks that a clone snapshots like the original, and
// keeps doing so while the original changes.
func TestSnapshotClone(t *testing.T) {
	ks, g := buildState(t, 2, 2000)
	want := snap(t, ks)
	c := ks.Clone()
	if got := snap(t, c); !bytes.Equal(got, want) {
		t.Fatal("clone snapshot differs")
	}
	for range 2000 {
		ks.Apply(g.command(false), g.tick())
	}
	mustApply(t, ks, wire.FlushAll{}, g.tick())
	if got := snap(t, c); !bytes.Equal(got, want) {
		t.Fatal("clone changed with the original")
	}
	checkInvariants(t, c)
}

func TestSnapshotEmpty(t *testing.T) {
	b := snap(t, New())
	if !bytes.HasPrefix(b, []byte("STREAMD-SNAP\x00\x00\x00\x02")) {
		t.Fatalf("header %q", b)
	}
	rs := restoreSnap(t, b)
	if !bytes.Equal(snap(t, rs), b) || rs.NodeMaxEntries() != streams.DefaultNodeMaxEntries || rs.LastNow() != 0 {
		t.Fatal("empty keyspace round trip")
	}
}

// smallState is a keyspace with a bit of everything and a short snapshot,
// for the corruption tests.
func smallState(t *testing.T) *Keyspace {
	ks := New()
	mustApply(t, ks, wire.ConfigSet{Name: "stream-node-max-entries", Value: "2"}, 1000)
	for i := 0; i < 5; i++ {
		mustApply(t, ks, xadd("s", "*"), int64(1000+i))
	}
	mustApply(t, ks, wire.XDel{Base: base("s"), IDs: []streams.ID{id(1001, 0)}}, 1010)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "g", EntriesRead: -1}, 1010)
	mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "c", Count: 2, Streams: []wire.ReadStream{{Key: "s", New: true}}}, 1020)
	mustApply(t, ks, wire.Expire{Base: base("s"), Ms: 5000, Relative: true}, 1030)
	mustApply(t, ks, wire.XAdd{Base: wire.Base{DB: 3, Key: "t"}, ID: streams.IDSpec{Auto: true}, Fields: fv("k", "v"), Trim: wire.Trim{Limit: -1}}, 1040)
	return ks
}

// TestSnapshotTruncated cuts a snapshot at every length short of the whole:
// ReadSnapshot must always say it is truncated.
func TestSnapshotTruncated(t *testing.T) {
	b := snap(t, smallState(t))
	t.Logf("%d-byte snapshot", len(b))
	for n := 0; n < len(b); n++ {
		ks, err := ReadSnapshot(bytes.NewReader(b[:n]))
		if ks != nil || !errors.Is(err, ErrCorruptSnapshot) || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("cut at %d of %d: %v, %v", n, len(b), ks != nil, err)
		}
	}
}

// TestSnapshotFlipped changes every byte of a snapshot in several ways:
// ReadSnapshot must always refuse it.
func TestSnapshotFlipped(t *testing.T) {
	b := snap(t, smallState(t))
	c := make([]byte, len(b))
	for i := range b {
		for _, mask := range []byte{0x01, 0x10, 0x80, 0xff} {
			copy(c, b)
			c[i] ^= mask
			ks, err := ReadSnapshot(bytes.NewReader(c))
			if ks != nil || !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("byte %d ^ %#x: %v, %v", i, mask, ks != nil, err)
			}
		}
	}
}

func TestSnapshotErrors(t *testing.T) {
	b := snap(t, smallState(t))
	edit := func(f func(c []byte) []byte) error {
		_, err := ReadSnapshot(bytes.NewReader(f(append([]byte(nil), b...))))
		return err
	}
	tests := []struct {
		name string
		f    func(c []byte) []byte
		want string
	}{
		{"version", func(c []byte) []byte { c[15] = 7; return c }, "snapshot has unknown version 7"},
		{"magic", func(c []byte) []byte { c[0] = 'X'; return c }, "not a streamd snapshot"},
		{"body", func(c []byte) []byte { c[30] ^= 1; return c }, "snapshot checksum mismatch in frame at byte 16"},
		{"trailer crc", func(c []byte) []byte { c[len(c)-1] ^= 1; return c }, "snapshot checksum mismatch: body CRC-32C"},
		{"trailer count", func(c []byte) []byte { c[len(c)-13] ^= 1; return c }, "records read, trailer says"},
		{"trailing data", func(c []byte) []byte { return append(c, 0) }, "data after the trailer"},
		{"empty", func(c []byte) []byte { return nil }, "snapshot truncated: header cut short at byte 0"},
	}
	for _, tc := range tests {
		err := edit(tc.f)
		if !errors.Is(err, ErrCorruptSnapshot) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSnapshotFrames round-trips a snapshot of several frames (values
// larger than a frame included) and checks cuts and flips around the frame
// boundaries.
func TestSnapshotFrames(t *testing.T) {
	ks := New()
	big := bytes.Repeat([]byte("0123456789abcdef"), 10_000) // 160 kB, over two frames
	mustApply(t, ks, wire.XAdd{Base: base("big"), ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), big}, Trim: wire.Trim{Limit: -1}}, 1)
	for i := 0; i < 8000; i++ {
		mustApply(t, ks, xadd("many", "*"), int64(i))
	}
	b := snap(t, ks)
	rs := restoreSnap(t, b)
	if !bytes.Equal(snap(t, rs), b) {
		t.Fatal("multi-frame round trip differs")
	}
	sameView(t, ks, rs, 10_000)
	if len(b) < 3*frameMax {
		t.Fatalf("snapshot of %d bytes: want several frames", len(b))
	}
	var cuts []int
	for off := 16; off < len(b); off += frameHeaderLen + frameMax {
		for d := -2; d <= frameHeaderLen+1; d++ {
			if off+d > 0 && off+d < len(b) {
				cuts = append(cuts, off+d)
			}
		}
	}
	cuts = append(cuts, len(b)-trailerLen-4, len(b)-trailerLen, len(b)-1)
	c := make([]byte, len(b))
	for _, n := range cuts {
		if _, err := ReadSnapshot(bytes.NewReader(b[:n])); !errors.Is(err, ErrCorruptSnapshot) || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("cut at %d: %v", n, err)
		}
		copy(c, b)
		c[n] ^= 0x40
		if _, err := ReadSnapshot(bytes.NewReader(c)); !errors.Is(err, ErrCorruptSnapshot) {
			t.Fatalf("flip at %d: %v", n, err)
		}
	}
}

// errReader fails after n bytes.
type errReader struct {
	r *bytes.Reader
	n int
}

var errDisk = errors.New("disk on fire")

func (e *errReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, errDisk
	}
	p = p[:min(len(p), e.n)]
	n, err := e.r.Read(p)
	e.n -= n
	return n, err
}

// TestSnapshotReadError passes the reader's error through, not as
// corruption.
func TestSnapshotReadError(t *testing.T) {
	b := snap(t, smallState(t))
	_, err := ReadSnapshot(&errReader{r: bytes.NewReader(b), n: 40})
	if !errors.Is(err, errDisk) || errors.Is(err, ErrCorruptSnapshot) {
		t.Fatalf("read error: %v", err)
	}
}
