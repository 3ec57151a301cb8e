package state

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func idmpAdd(key, pid, iid string, fields ...string) wire.XAdd {
	c := xadd(key, "*")
	c.Fields = fv(fields...)
	c.IDMP = wire.IDMP{PID: pid, IID: iid}
	return c
}

func idmpInfo(t *testing.T, ks *Keyspace, key string, now int64) IDMPInfo {
	t.Helper()
	return mustQuery(t, ks, wire.XInfoStream{Base: base(key)}, now).(StreamInfo).IDMP
}

func xlen(t *testing.T, ks *Keyspace, key string, now int64) int64 {
	t.Helper()
	return mustQuery(t, ks, wire.XLen{Base: base(key)}, now).(int64)
}

// TestIDMPDuplicate is the spec's first [test]: the same (pid, iid) answers
// the original ID, keeps the original fields, adds nothing.
func TestIDMPDuplicate(t *testing.T) {
	ks := New()
	id1 := mustApply(t, ks, idmpAdd("s", "p1", "payment-abc", "amount", "100", "currency", "USD"), 1000).(streams.ID)
	res := mustApply(t, ks, idmpAdd("s", "p1", "payment-abc", "amount", "200", "currency", "EUR"), 1001)
	if res != (wire.IDMPDuplicate{ID: id1}) {
		t.Fatalf("duplicate answered %#v, want the original %s", res, id1)
	}
	if n := xlen(t, ks, "s", 1001); n != 1 {
		t.Fatalf("XLEN %d", n)
	}
	es := mustQuery(t, ks, wire.XRange{Base: base("s"), Start: streams.MinID, End: streams.MaxID, Count: -1}, 1001).([]streams.Entry)
	if string(es[0].Fields[1]) != "100" {
		t.Fatalf("fields replaced: %q", es[0].Fields)
	}
	// Another producer, or another iid, appends.
	id2 := mustApply(t, ks, idmpAdd("s", "p2", "payment-abc", "f", "v"), 1002).(streams.ID)
	id3 := mustApply(t, ks, idmpAdd("s", "p1", "payment-abd", "f", "v"), 1003).(streams.ID)
	if id2 == id1 || id3 == id2 {
		t.Fatal("distinct pairs got the same ID")
	}
	info := mustQuery(t, ks, wire.XInfoStream{Base: base("s")}, 1003).(StreamInfo)
	want := IDMPInfo{Duration: 100, MaxSize: 100, PidsTracked: 2, IidsTracked: 3, IidsAdded: 3, IidsDuplicates: 1}
	if info.IDMP != want || info.EntriesAdded != 3 || info.LastGeneratedID != id3 {
		t.Fatalf("XINFO %+v", info)
	}
	// The original ID is answered even after the entry is deleted.
	mustApply(t, ks, wire.XDel{Base: base("s"), IDs: []streams.ID{id1}}, 1004)
	if res := mustApply(t, ks, idmpAdd("s", "p1", "payment-abc", "f", "v"), 1005); res != (wire.IDMPDuplicate{ID: id1}) {
		t.Fatalf("after XDEL: %#v", res)
	}
}

// TestIDMPNoDuplicateEffects: a duplicate neither trims nor changes the
// stream's counters.
func TestIDMPNoDuplicateEffects(t *testing.T) {
	ks := New()
	for i := range 3 {
		mustApply(t, ks, xadd("s", "*"), int64(1000+i))
	}
	mustApply(t, ks, idmpAdd("s", "p", "i", "f", "v"), 1010)
	c := idmpAdd("s", "p", "i", "f", "v")
	c.Trim = wire.Trim{Strategy: wire.TrimMaxLen, MaxLen: 1, Limit: -1}
	mustApply(t, ks, c, 1011)
	if n := xlen(t, ks, "s", 1011); n != 4 {
		t.Fatalf("duplicate trimmed: XLEN %d", n)
	}
	info := idmpInfo(t, ks, "s", 1011)
	if info.IidsDuplicates != 1 {
		t.Fatalf("%+v", info)
	}
	// NOMKSTREAM on a missing key answers nil, creating nothing.
	nm := idmpAdd("none", "p", "i", "f", "v")
	nm.NoMkStream = true
	if res := mustApply(t, ks, nm, 1012); res != nil {
		t.Fatalf("NOMKSTREAM: %#v", res)
	}
}

// TestIDMPMaxSize is the spec's eviction [test]: with IDMP-MAXSIZE 3 the
// 4th iid evicts the oldest, which then appends again.
func TestIDMPMaxSize(t *testing.T) {
	ks := New()
	id1 := mustApply(t, ks, idmpAdd("s", "p1", "i1", "f", "v"), 1000).(streams.ID)
	mustApply(t, ks, wire.XCfgSet{Base: base("s"), MaxSize: 3, Duration: 60}, 1000)
	// The change cleared the producers: i1 appends again.
	id1 = mustApply(t, ks, idmpAdd("s", "p1", "i1", "f", "v"), 1001).(streams.ID)
	for i, iid := range []string{"i2", "i3", "i4"} {
		mustApply(t, ks, idmpAdd("s", "p1", iid, "f", "v"), int64(1002+i))
	}
	if info := idmpInfo(t, ks, "s", 1010); info.IidsTracked != 3 || info.PidsTracked != 1 || info.IidsAdded != 5 {
		t.Fatalf("%+v", info)
	}
	res := mustApply(t, ks, idmpAdd("s", "p1", "i1", "f", "v"), 1010)
	if _, dup := res.(wire.IDMPDuplicate); dup || res == id1 {
		t.Fatalf("evicted iid answered %#v", res)
	}
	// i3 is still there (i2 was evicted by i1's return).
	if _, dup := mustApply(t, ks, idmpAdd("s", "p1", "i3", "f", "v"), 1011).(wire.IDMPDuplicate); !dup {
		t.Fatal("i3 not kept")
	}
}

// TestIDMPExpiry: iids expire by the write's time minus the duration,
// whatever the stream IDs say (Redis's #15836: a stream whose last ID is
// ahead of the clock).
func TestIDMPExpiry(t *testing.T) {
	ks := New()
	future := xadd("s", "9999999999999-0")
	mustApply(t, ks, future, 1000)
	mustApply(t, ks, wire.XCfgSet{Base: base("s"), Duration: 1}, 1000)
	id1 := mustApply(t, ks, idmpAdd("s", "p1", "i1", "f", "v"), 1000).(streams.ID)
	if id1.Ms != 9999999999999 {
		t.Fatalf("id %s", id1)
	}
	if res := mustApply(t, ks, idmpAdd("s", "p1", "i1", "f", "v"), 1999); res != (wire.IDMPDuplicate{ID: id1}) {
		t.Fatalf("within the duration: %#v", res)
	}
	// At 2000 (recorded at 1000 + 1 s) it is gone: the XADD appends.
	res := mustApply(t, ks, idmpAdd("s", "p1", "i1", "f", "v"), 2000)
	if _, dup := res.(wire.IDMPDuplicate); dup {
		t.Fatalf("expired iid still answered %#v", res)
	}
	if info := idmpInfo(t, ks, "s", 2000); info.IidsTracked != 1 || info.PidsTracked != 1 || info.IidsAdded != 2 {
		t.Fatalf("%+v", info)
	}
	// Reads count only the live iids; a plain XADD drops the others, and
	// the emptied producer.
	if info := idmpInfo(t, ks, "s", 3000); info.IidsTracked != 0 || info.PidsTracked != 0 || info.IidsAdded != 2 {
		t.Fatalf("read after the duration: %+v", info)
	}
	mustApply(t, ks, xadd("s", "*"), 5000)
	if info := idmpInfo(t, ks, "s", 5000); info.IidsTracked != 0 || info.PidsTracked != 0 {
		t.Fatalf("%+v", info)
	}
}

// TestIDMPFailedXAddLeavesNoProducer is Redis's #15840 avoided.
func TestIDMPFailedXAddLeavesNoProducer(t *testing.T) {
	ks := New()
	mustApply(t, ks, xadd("s", "18446744073709551615-18446744073709551615"), 1000)
	if _, err := ks.Apply(idmpAdd("s", "p1", "i1", "f", "v"), 1001); !errors.Is(err, streams.ErrStreamExhausted) {
		t.Fatalf("XADD on an exhausted stream: %v", err)
	}
	if info := idmpInfo(t, ks, "s", 1001); info.PidsTracked != 0 || info.IidsAdded != 0 {
		t.Fatalf("%+v", info)
	}
}

// TestXCfgSet: a changed setting clears producers (counters stay), the same
// value is a no-op that keeps them, a missing key is an error.
func TestXCfgSet(t *testing.T) {
	ks := New()
	if _, err := ks.Apply(wire.XCfgSet{Base: base("s"), Duration: 5}, 1000); err == nil || err.Error() != "ERR no such key" {
		t.Fatalf("missing key: %v", err)
	}
	for _, p := range []string{"p1", "p2", "p3"} {
		mustApply(t, ks, idmpAdd("s", p, "i", "f", "v"), 1000)
	}
	mustApply(t, ks, wire.XCfgSet{Base: base("s"), Duration: 100, MaxSize: 100}, 1001)
	if info := idmpInfo(t, ks, "s", 1001); info.PidsTracked != 3 {
		t.Fatalf("same values cleared: %+v", info)
	}
	mustApply(t, ks, wire.XCfgSet{Base: base("s"), Duration: 60}, 1002)
	want := IDMPInfo{Duration: 60, MaxSize: 100, IidsAdded: 3}
	if info := idmpInfo(t, ks, "s", 1002); info != want {
		t.Fatalf("%+v, want %+v", info, want)
	}
	// Back to the defaults with zero counters would be a nil state; with
	// counters it stays and snapshots.
	mustApply(t, ks, wire.XCfgSet{Base: base("s"), Duration: 100}, 1003)
	snapshotRoundTrip(t, ks)
	if info := idmpInfo(t, restoreSnap(t, snap(t, ks)), "s", 1003); info != (IDMPInfo{Duration: 100, MaxSize: 100, IidsAdded: 3}) {
		t.Fatalf("restored %+v", info)
	}
}

// TestXIDMPRecord follows xidmprecordCommand's order of checks.
func TestXIDMPRecord(t *testing.T) {
	ks := New()
	rec := func(pid, iid string, id streams.ID) error {
		_, err := ks.Apply(wire.XIDMPRecord{Base: base("s"), PID: pid, IID: iid, ID: id}, 1000)
		return err
	}
	if err := rec("p", "i", id(1, 0)); err == nil || err.Error() != "ERR no such key" {
		t.Fatalf("missing key: %v", err)
	}
	a := mustApply(t, ks, xadd("s", "1-0"), 1000).(streams.ID)
	b := mustApply(t, ks, xadd("s", "2-0"), 1000).(streams.ID)
	if err := rec("p", "i", id(3, 0)); err != ErrNoSuchMessage {
		t.Fatalf("no entry: %v", err)
	}
	if err := rec("p", "i", a); err != nil {
		t.Fatal(err)
	}
	if err := rec("p", "i", a); err != nil {
		t.Fatalf("same pair again: %v", err)
	}
	if err := rec("p", "i", b); err != ErrIIDOtherID {
		t.Fatalf("other ID: %v", err)
	}
	if res := mustApply(t, ks, idmpAdd("s", "p", "i", "f", "v"), 1001); res != (wire.IDMPDuplicate{ID: a}) {
		t.Fatalf("XADD after XIDMPRECORD: %#v", res)
	}
	if info := idmpInfo(t, ks, "s", 1001); info.IidsAdded != 1 || info.IidsDuplicates != 1 {
		t.Fatalf("%+v", info)
	}
}

// TestIDMPConfigDefaults: streams take the settings in force when they are
// created; later changes leave them alone; the settings snapshot.
func TestIDMPConfigDefaults(t *testing.T) {
	ks := New()
	mustApply(t, ks, xadd("old", "*"), 1000)
	plain := snap(t, ks)
	mustApply(t, ks, wire.ConfigSet{Name: "stream-idmp-duration", Value: "7"}, 1000)
	mustApply(t, ks, wire.ConfigSet{Name: "STREAM-IDMP-MAXSIZE", Value: "9"}, 1000)
	for _, bad := range []wire.ConfigSet{{Name: "stream-idmp-duration", Value: "0"},
		{Name: "stream-idmp-duration", Value: "86401"}, {Name: "stream-idmp-maxsize", Value: "10001"}} {
		if _, err := ks.Apply(bad, 1000); err == nil || !bytes.Contains([]byte(err.Error()), []byte("must be between")) {
			t.Fatalf("%v: %v", bad, err)
		}
	}
	if _, err := ks.Apply(wire.ConfigSet{Name: "stream-idmp-maxsize", Value: "x"}, 1000); err == nil {
		t.Fatal("non-integer accepted")
	}
	mustApply(t, ks, xadd("new", "*"), 1000)
	if i := idmpInfo(t, ks, "old", 1000); i.Duration != 100 || i.MaxSize != 100 {
		t.Fatalf("old stream %+v", i)
	}
	if i := idmpInfo(t, ks, "new", 1000); i.Duration != 7 || i.MaxSize != 9 {
		t.Fatalf("new stream %+v", i)
	}
	// The settings record: tag 15, zigzag 7 and 9 (layout frozen).
	if !bytes.Contains(snap(t, ks), []byte{tagIDMPDefaults, 14, 18}) {
		t.Fatal("no IDMP settings record 0f 0e 12 in the snapshot")
	}
	back := restoreSnap(t, snap(t, ks))
	if d, s := back.IDMPDefaults(); d != 7 || s != 9 {
		t.Fatalf("restored defaults %d %d", d, s)
	}
	sameView(t, ks, back, 1000)
	mustApply(t, ks, wire.ConfigSet{Name: "stream-idmp-duration", Value: "100"}, 1000)
	mustApply(t, ks, wire.ConfigSet{Name: "stream-idmp-maxsize", Value: "100"}, 1000)
	mustApply(t, ks, wire.Del{Names: []string{"new"}}, 1000)
	// Nothing left of IDMP: the snapshot is what it was before.
	if !bytes.Equal(snap(t, ks), plain) {
		t.Fatal("a state without IDMP snapshots differently")
	}
}

// TestIDMPSnapshotCopyDump: the state survives a snapshot, COPY and
// DUMP/RESTORE exactly, and keeps expiring by the recorded times.
func TestIDMPSnapshotCopyDump(t *testing.T) {
	ks := New()
	mustApply(t, ks, xadd("s", "*"), 900)
	mustApply(t, ks, wire.XCfgSet{Base: base("s"), Duration: 2, MaxSize: 2}, 900)
	for i, p := range []string{"b", "a", "b", "c", "b"} {
		mustApply(t, ks, idmpAdd("s", p, string(rune('x'+i)), "f", "v"), int64(1000+100*i))
	}
	mustApply(t, ks, idmpAdd("s", "a", "y", "f", "v"), 1500) // duplicate
	mustApply(t, ks, wire.Copy{Src: "s", Dst: "s2"}, 1500)
	mustApply(t, ks, wire.Restore{Base: base("s3"), Payload: dumpOf(t, ks, 0, "s")}, 1500)
	snapshotRoundTrip(t, ks)
	back := restoreSnap(t, snap(t, ks))
	checkInvariants(t, back)
	for _, k := range []string{"s", "s2", "s3"} {
		if a, b := idmpInfo(t, ks, "s", 1500), idmpInfo(t, back, k, 1500); a != b {
			t.Fatalf("%s: %+v, want %+v", k, b, a)
		}
	}
	// Same answers from here on, on both.
	for i, c := range []wire.XAdd{idmpAdd("s", "b", "z", "f", "v"), idmpAdd("s3", "a", "y", "f", "v"),
		idmpAdd("s2", "c", "{", "f", "v"), idmpAdd("s", "b", "|", "f", "v")} {
		now := int64(2900 + 50*i)
		ra, ea := ks.Apply(c, now)
		rb, eb := back.Apply(c, now)
		if !reflect.DeepEqual(ra, rb) || !reflect.DeepEqual(ea, eb) {
			t.Fatalf("%d: %#v %v vs %#v %v", i, ra, ea, rb, eb)
		}
	}
	if !bytes.Equal(snap(t, ks), snap(t, back)) {
		t.Fatal("snapshots differ")
	}
	checkInvariants(t, ks)
}

// TestIDMPInfoLive: XINFO counts what is live at the read's time, producer
// by producer, without changing anything.
func TestIDMPInfoLive(t *testing.T) {
	ks := New()
	mustApply(t, ks, xadd("s", "*"), 1000)
	mustApply(t, ks, wire.XCfgSet{Base: base("s"), Duration: 1}, 1000)
	mustApply(t, ks, idmpAdd("s", "a", "1", "f", "v"), 1000)
	mustApply(t, ks, idmpAdd("s", "b", "1", "f", "v"), 1100)
	mustApply(t, ks, idmpAdd("s", "a", "2", "f", "v"), 1200)
	for _, c := range []struct {
		now        int64
		pids, iids int64
	}{{1999, 2, 3}, {2000, 2, 2}, {2100, 1, 1}, {2200, 0, 0}} {
		if i := idmpInfo(t, ks, "s", c.now); i.PidsTracked != c.pids || i.IidsTracked != c.iids || i.IidsAdded != 3 {
			t.Errorf("at %d: %+v, want %d pids %d iids", c.now, i, c.pids, c.iids)
		}
	}
	if err := checkIDMP(ks.dbs[0].keys["s"].IDMP); err != nil || ks.dbs[0].keys["s"].IDMP.iids != 3 {
		t.Fatalf("a read changed the state: %v", err)
	}
}

// TestIDMPRestoredFromAhead: a stream RESTOREd from a server whose clock
// was ahead keeps its iids in time order (new ones are stamped no earlier
// than the newest), so it snapshots and restores exactly.
func TestIDMPRestoredFromAhead(t *testing.T) {
	ahead := New()
	mustApply(t, ahead, idmpAdd("s", "a", "1", "f", "v"), 900_000)
	ks := New()
	mustApply(t, ks, wire.Restore{Base: base("s"), Payload: dumpOf(t, ahead, 0, "s")}, 1000)
	mustApply(t, ks, idmpAdd("s", "b", "1", "f", "v"), 1000)
	mustApply(t, ks, idmpAdd("s", "a", "2", "f", "v"), 1001)
	checkInvariants(t, ks)
	back := restoreSnap(t, snap(t, ks))
	checkInvariants(t, back)
	if !bytes.Equal(snap(t, back), snap(t, ks)) {
		t.Fatal("snapshot differs after a round trip")
	}
	if _, dup := mustApply(t, back, idmpAdd("s", "a", "1", "f", "v"), 2000).(wire.IDMPDuplicate); !dup {
		t.Fatal("restored iid lost")
	}
}

// TestIDMPSweep: IDMPExpiring finds, a slice of the keyspace at a time,
// the streams holding expired iids; IDMPExpired drops them, so that a
// stream no write touches frees its iids too.
func TestIDMPSweep(t *testing.T) {
	ks := New()
	var keys []string
	for i := range 50 {
		k := fmt.Sprintf("k%02d", i)
		keys = append(keys, k)
		if i%2 == 0 {
			mustApply(t, ks, idmpAdd(k, "p", "i", "f", "v"), 1000)
		} else {
			mustApply(t, ks, xadd(k, "*"), 1000)
		}
	}
	if got, _ := ks.IDMPExpiring(0, 0, 100, 100_999); len(got) != 0 {
		t.Fatalf("before the duration: %v", got)
	}
	var found []string
	var cursor uint64
	for rounds := 0; ; rounds++ {
		got, next := ks.IDMPExpiring(0, cursor, 7, 101_000)
		found = append(found, got...)
		if next == 0 {
			break
		}
		if next <= cursor || rounds > 50 {
			t.Fatalf("cursor %d after %d", next, cursor)
		}
		cursor = next
	}
	sort.Strings(found)
	if len(found) != 25 || found[0] != "k00" || found[24] != "k48" {
		t.Fatalf("found %v", found)
	}
	n := mustApply(t, ks, wire.IDMPExpired{Names: append(found, "missing", "k01")}, 101_000)
	if n != int64(25) {
		t.Fatalf("dropped %v", n)
	}
	if got, _ := ks.IDMPExpiring(0, 0, 100, 200_000); len(got) != 0 {
		t.Fatalf("after the sweep: %v", got)
	}
	if i := idmpInfo(t, ks, "k00", 101_000); i != (IDMPInfo{Duration: 100, MaxSize: 100, IidsAdded: 1}) {
		t.Fatalf("%+v", i)
	}
	checkInvariants(t, ks)
	snapshotRoundTrip(t, ks)
}

// TestIDMPDumpPayloadGolden pins the IDMP record (tag 14) in a DUMP payload
// byte for byte, as TestDumpPayloadGolden pins the others: payloads and
// snapshots leave the server, so the record's layout is frozen.
func TestIDMPDumpPayloadGolden(t *testing.T) {
	ks := New()
	mustApply(t, ks, xadd("s", "5-1"), 0)
	mustApply(t, ks, wire.XCfgSet{Base: base("s"), Duration: 60, MaxSize: 3}, 0)
	mustApply(t, ks, wire.XIDMPRecord{Base: base("s"), PID: "p", IID: "i", ID: id(5, 1)}, 1000)
	c := xadd("s", "*")
	c.IDMP = wire.IDMP{PID: "p", IID: "j"}
	mustApply(t, ks, c, 2000)
	mustApply(t, ks, c, 2001)
	// The record: 0e (tag 14) 78 (duration 60) 06 (maxsize 3) 04 (added
	// 2) 02 (duplicates 1) 01 (one producer) 0170 ("p") 02 (two iids)
	// 0169 ("i") 0501 (5-1) d00f (at 1000) 016a ("j") d00f00 (2000-0)
	// a01f (at 2000).
	const want = "0000003b086a6e58030000d00f0004000005010101000405010211020001020166017602cb0f0002016601760e780604020101700201690501d00f016ad00f00a01f00000000000000000000000003000000000000003b086a6e580153b61027c8658efdd1"
	if got := hex.EncodeToString(dumpOf(t, ks, 0, "s")); got != want {
		t.Errorf("DUMP payload with IDMP changed (the record layout is frozen):\n got %s\nwant %s", got, want)
	}
}

// TestXCfgSetAckLevel: ACKLEVEL is stored per stream (alone it leaves the
// IDMP state as it is), shown by XINFO STREAM, kept by COPY, and its
// snapshot record (tag 16) round-trips; a stream without it snapshots
// without the record.
func TestXCfgSetAckLevel(t *testing.T) {
	ks := New()
	if _, err := ks.Apply(wire.XCfgSet{Base: base("s"), AckLevel: wire.AckLeader}, 1000); err == nil || err.Error() != "ERR no such key" {
		t.Fatalf("missing key: %v", err)
	}
	mustApply(t, ks, wire.XAdd{Base: base("s"), ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), []byte("v")},
		Trim: wire.Trim{Limit: -1}, IDMP: wire.IDMP{PID: "p", IID: "i"}}, 1000)
	before := snap(t, ks)
	mustApply(t, ks, wire.XCfgSet{Base: base("s"), AckLevel: wire.AckLeader}, 1001)
	info, err := ks.Query(wire.XInfoStream{Base: base("s")}, 1001)
	if err != nil {
		t.Fatal(err)
	}
	si := info.(StreamInfo)
	if si.AckLevel != wire.AckLeader || si.IDMP.IidsTracked != 1 {
		t.Fatalf("acklevel %v, iids tracked %d (ACKLEVEL alone must keep them)", si.AckLevel, si.IDMP.IidsTracked)
	}
	if at := ks.AckTarget(0, "s", 1001); !at.Exists || at.Level != wire.AckLeader || at.LastID != (streams.ID{Ms: 1000}) || at.Volatile {
		t.Fatalf("AckTarget %+v", at)
	}
	after := snap(t, ks)
	if bytes.Equal(after, before) {
		t.Fatal("the ack level is not in the snapshot")
	}
	ks2 := restoreSnap(t, after)
	if at := ks2.AckTarget(0, "s", 1001); at.Level != wire.AckLeader {
		t.Fatalf("restored level %v", at.Level)
	}
	mustApply(t, ks, wire.XCfgSet{Base: base("s"), AckLevel: wire.AckQuorum, Duration: 5}, 1002)
	if at := ks.AckTarget(0, "s", 1002); at.Level != wire.AckQuorum {
		t.Fatalf("level %v after QUORUM", at.Level)
	}
}
