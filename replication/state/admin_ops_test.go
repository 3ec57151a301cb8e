package state

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc64"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

// groupKey builds key "s" in ks: three entries, group g with consumer c
// owning two pending entries, group h empty, and a deadline.
func groupKey(t *testing.T, ks *Keyspace, db int, key string) {
	t.Helper()
	b := wire.Base{DB: db, Key: key}
	for _, spec := range []string{"1-1", "2-1", "3-1"} {
		x := xadd(key, spec)
		x.DB = db
		mustApply(t, ks, x, 1000)
	}
	mustApply(t, ks, wire.XGroupCreate{Base: b, Group: "g", EntriesRead: -1}, 1000)
	mustApply(t, ks, wire.XGroupCreate{Base: b, Group: "h", Dollar: true, EntriesRead: -1}, 1000)
	mustApply(t, ks, wire.XReadGroup{DB: db, Group: "g", Consumer: "c", Count: 2,
		Streams: []wire.ReadStream{{Key: key, New: true}}}, 2000)
	mustApply(t, ks, wire.Expire{Base: b, Ms: 1_000_000, Relative: true}, 2000)
}

// dumpOf is key's DUMP payload.
func dumpOf(t *testing.T, ks *Keyspace, db int, key string) []byte {
	t.Helper()
	p, _ := mustQuery(t, ks, wire.Dump{Base: wire.Base{DB: db, Key: key}}, 3000).([]byte)
	if p == nil {
		t.Fatalf("DUMP %d %q: no key", db, key)
	}
	return p
}

// snapshotRoundTrip checks the keyspace's snapshot reads back to the same
// bytes (COPY and RESTORE make ordinary keys).
func snapshotRoundTrip(t *testing.T, ks *Keyspace) {
	t.Helper()
	var a, b bytes.Buffer
	if err := ks.WriteSnapshot(&a); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSnapshot(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := back.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("snapshot differs after a round trip")
	}
}

func TestCopy(t *testing.T) {
	ks := New()
	groupKey(t, ks, 0, "s")
	if got := mustApply(t, ks, wire.Copy{Src: "s", Dst: "d"}, 3000); got != int64(1) {
		t.Fatalf("COPY = %v", got)
	}
	if !bytes.Equal(dumpOf(t, ks, 0, "s"), dumpOf(t, ks, 0, "d")) {
		t.Fatal("the copy differs from the source")
	}
	if ttl := mustQuery(t, ks, wire.TTL{Base: base("d"), Millis: true, Abs: true}, 3000); ttl != int64(1_002_000) {
		t.Fatalf("copy's deadline %v", ttl)
	}
	// The copy is deep: acknowledging on it leaves the source's PEL.
	mustApply(t, ks, wire.XAck{Base: base("d"), Group: "g", IDs: []streams.ID{id(1, 1)}}, 3000)
	if bytes.Equal(dumpOf(t, ks, 0, "s"), dumpOf(t, ks, 0, "d")) {
		t.Fatal("XACK on the copy changed the source")
	}
	if got := mustApply(t, ks, wire.Copy{Src: "s", Dst: "d"}, 3000); got != int64(0) {
		t.Fatalf("COPY onto an existing key = %v", got)
	}
	if got := mustApply(t, ks, wire.Copy{Src: "s", Dst: "d", Replace: true}, 3000); got != int64(1) {
		t.Fatalf("COPY REPLACE = %v", got)
	}
	if got := mustApply(t, ks, wire.Copy{Src: "nokey", Dst: "x"}, 3000); got != int64(0) {
		t.Fatalf("COPY of a missing key = %v", got)
	}
	if _, err := ks.Apply(wire.Copy{Src: "s", Dst: "s"}, 3000); !errors.Is(err, ErrSameObject) {
		t.Fatalf("COPY s s: %v", err)
	}
	if got := mustApply(t, ks, wire.Copy{Src: "s", Dst: "s", DstDB: 7}, 3000); got != int64(1) {
		t.Fatalf("COPY to db 7 = %v", got)
	}
	if !bytes.Equal(dumpOf(t, ks, 0, "s"), dumpOf(t, ks, 7, "s")) {
		t.Fatal("the copy in db 7 differs")
	}
	if _, err := ks.Apply(wire.Copy{Src: "s", Dst: "s", DstDB: 16}, 3000); !errors.Is(err, ErrDBIndexRange) {
		t.Fatalf("COPY to db 16: %v", err)
	}
	snapshotRoundTrip(t, ks)
}

func TestDumpRestore(t *testing.T) {
	ks := New()
	groupKey(t, ks, 0, "s")
	p := dumpOf(t, ks, 0, "s")
	if err := VerifyDump(p); err != nil {
		t.Fatal(err)
	}
	mustApply(t, ks, wire.Restore{Base: base("r"), Payload: p}, 3000)
	if !bytes.Equal(dumpOf(t, ks, 0, "r"), p) {
		t.Fatal("restored key dumps differently")
	}
	if ttl := mustQuery(t, ks, wire.TTL{Base: base("r")}, 3000); ttl != int64(-1) {
		t.Fatalf("restored without TTL: TTL %v", ttl)
	}
	if _, err := ks.Apply(wire.Restore{Base: base("r"), Payload: p}, 3000); !errors.Is(err, ErrBusyKey) {
		t.Fatalf("RESTORE onto an existing key: %v", err)
	}
	mustApply(t, ks, wire.Restore{Base: base("r"), Payload: p, Replace: true, TTLMs: 5000}, 3000)
	if ttl := mustQuery(t, ks, wire.TTL{Base: base("r"), Millis: true}, 3000); ttl != int64(5000) {
		t.Fatalf("RESTORE ttl 5000: PTTL %v", ttl)
	}
	mustApply(t, ks, wire.Restore{Base: base("a"), Payload: p, Abs: true, TTLMs: 9000}, 3000)
	if ttl := mustQuery(t, ks, wire.TTL{Base: base("a"), Millis: true, Abs: true}, 3000); ttl != int64(9000) {
		t.Fatalf("RESTORE ABSTTL 9000: PEXPIRETIME %v", ttl)
	}
	// A deadline already past: OK, the old value gone, nothing created.
	mustApply(t, ks, wire.Restore{Base: base("a"), Payload: p, Abs: true, TTLMs: 10, Replace: true}, 3000)
	if n := mustQuery(t, ks, wire.Exists{Names: []string{"a"}}, 3000); n != int64(0) {
		t.Fatalf("restored with a past deadline: EXISTS %v", n)
	}
	// Refused payloads.
	bad := append([]byte(nil), p...)
	bad[len(bad)/2] ^= 1
	wrongVersion := append([]byte(nil), p...)
	wrongVersion[len(p)-10] = 11 // Redis 7.2's RDB version
	garbage := binary.LittleEndian.AppendUint16([]byte("not a stream"), DumpVersion)
	garbage = binary.LittleEndian.AppendUint64(garbage, crc64.Checksum(garbage, crc64Table))
	for _, c := range []struct {
		name    string
		payload []byte
		want    error
	}{
		{"flipped bit", bad, ErrDumpPayload},
		{"other version", wrongVersion, ErrDumpPayload},
		{"short", []byte("x"), ErrDumpPayload},
		{"empty", nil, ErrDumpPayload},
		{"checksummed garbage", garbage, ErrBadDumpData},
	} {
		if _, err := ks.Apply(wire.Restore{Base: base("z"), Payload: c.payload}, 3000); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if n := mustQuery(t, ks, wire.Exists{Names: []string{"z"}}, 3000); n != int64(0) {
		t.Fatalf("a refused RESTORE created the key")
	}
	if res := mustQuery(t, ks, wire.Dump{Base: base("nokey")}, 3000); res != nil {
		t.Fatalf("DUMP nokey = %v", res)
	}
	snapshotRoundTrip(t, ks)
}

// TestDumpPayloadGolden pins a payload byte for byte: payloads leave the
// server (a client may keep one and RESTORE it later), so a change of the
// format must come with a new DumpVersion.
func TestDumpPayloadGolden(t *testing.T) {
	ks := New()
	mustApply(t, ks, wire.XAdd{Base: base("s"), ID: streams.IDSpec{ID: id(5, 1)}, Fields: fv("f", "v"), Trim: wire.Trim{Limit: -1}}, 0)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "g", EntriesRead: -1}, 0)
	mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "c", Streams: []wire.ReadStream{{Key: "s", New: true}}}, 7)
	const want = "0000002c8266859b03000005010200000501010101040501010802000102016601760501670501020101630e0e010501000e0200000000000000000000000003000000000000002c8266859b01539787f2328d587630"
	got := hex.EncodeToString(dumpOf(t, ks, 0, "s"))
	if got != want {
		t.Errorf("DUMP payload changed (bump DumpVersion if the format changed):\n got %s\nwant %s", got, want)
	}
}

func TestSwapDB(t *testing.T) {
	ks := New()
	groupKey(t, ks, 0, "s")
	mustApply(t, ks, wire.XAdd{Base: wire.Base{DB: 3, Key: "t"}, ID: streams.IDSpec{Auto: true}, Fields: fv("a", "b"), Trim: wire.Trim{Limit: -1}}, 3000)
	p := dumpOf(t, ks, 0, "s")
	mustApply(t, ks, wire.SwapDB{A: 0, B: 3}, 3000)
	if !bytes.Equal(dumpOf(t, ks, 3, "s"), p) {
		t.Fatal("s did not move to db 3")
	}
	if n := mustQuery(t, ks, wire.DBSize{DB: 0}, 3000); n != int64(1) {
		t.Fatalf("db 0 holds %v keys", n)
	}
	if ttl := mustQuery(t, ks, wire.TTL{Base: wire.Base{DB: 3, Key: "s"}, Millis: true, Abs: true}, 3000); ttl != int64(1_002_000) {
		t.Fatalf("the deadline did not move: %v", ttl)
	}
	if _, err := ks.Apply(wire.SwapDB{A: 0, B: 16}, 3000); !errors.Is(err, ErrDBIndexRange) {
		t.Fatalf("SWAPDB 0 16: %v", err)
	}
	snapshotRoundTrip(t, ks)
}

func TestRandomKey(t *testing.T) {
	ks := New()
	if res := mustQuery(t, ks, wire.RandomKey{Seed: 42}, 0); res != nil {
		t.Fatalf("RANDOMKEY on an empty db = %v", res)
	}
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, n := range names {
		mustApply(t, ks, xadd(n, "1-1"), 0)
	}
	seen := map[any]bool{}
	for seed := uint64(0); seed < 64; seed++ {
		q := wire.RandomKey{Seed: seed * 0x9e3779b97f4a7c15}
		a, b := mustQuery(t, ks, q, 0), mustQuery(t, ks, q, 0)
		if a != b {
			t.Fatalf("seed %d: %v then %v", q.Seed, a, b)
		}
		seen[a] = true
	}
	if len(seen) != len(names) {
		t.Fatalf("RANDOMKEY reached %d of %d keys: %v", len(seen), len(names), seen)
	}
	// Expired keys are skipped; all expired is none.
	for _, n := range names[1:] {
		mustApply(t, ks, wire.Expire{Base: base(n), Ms: 10}, 5)
	}
	for seed := uint64(0); seed < 64; seed++ {
		if res := mustQuery(t, ks, wire.RandomKey{Seed: seed << 58}, 20); res != "a" {
			t.Fatalf("seed %d: %v, want the only live key a", seed, res)
		}
	}
	mustApply(t, ks, wire.Expire{Base: base("a"), Ms: 10}, 5)
	if res := mustQuery(t, ks, wire.RandomKey{Seed: 1}, 20); res != nil {
		t.Fatalf("RANDOMKEY with every key expired = %v", res)
	}
}

func TestMemoryUsage(t *testing.T) {
	ks := New()
	usage := func(key string, samples int64) int64 {
		t.Helper()
		n, ok := mustQuery(t, ks, wire.MemoryUsage{Base: base(key), Samples: samples}, 0).(int64)
		if !ok {
			t.Fatalf("MEMORY USAGE %s: no answer", key)
		}
		return n
	}
	if res := mustQuery(t, ks, wire.MemoryUsage{Base: base("nokey")}, 0); res != nil {
		t.Fatalf("MEMORY USAGE nokey = %v", res)
	}
	mustApply(t, ks, xadd("s", "1-1"), 0)
	one := usage("s", 0)
	big := make([]byte, 1000)
	for i := 2; i <= 1000; i++ {
		mustApply(t, ks, wire.XAdd{Base: base("s"), ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), big}, Trim: wire.Trim{Limit: -1}}, int64(i))
	}
	all := usage("s", 0)
	if all < one+999*1000 {
		t.Fatalf("1000 entries of 1 KB: %d bytes (one entry: %d)", all, one)
	}
	// Sampled: the first 5 nodes' average times the node count, close
	// to the whole here (the first node holds the one small entry).
	sampled := usage("s", 5)
	if sampled < all*9/10 || sampled > all*11/10 {
		t.Fatalf("sampled %d, all %d", sampled, all)
	}
	withGroup := func() int64 {
		mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "g", EntriesRead: -1}, 2000)
		mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "c", Streams: []wire.ReadStream{{Key: "s", New: true}}}, 2000)
		return usage("s", 0)
	}()
	if withGroup < all+1000*48 {
		t.Fatalf("with 1000 pending entries: %d bytes, without the group %d", withGroup, all)
	}
}
