package state

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func readClaim(min int64, count int64) wire.XReadGroup {
	return wire.XReadGroup{Group: "g", Consumer: "c2", Count: count, Claim: true, MinIdleMs: min,
		Streams: []wire.ReadStream{{Key: "s", New: true}}}
}

func claimIDs(t *testing.T, res any) ([]streams.ID, []ClaimInfo) {
	t.Helper()
	kes, _ := res.([]KeyEntries)
	if len(kes) == 0 {
		return nil, nil
	}
	return entryIDs(kes[0].Entries), kes[0].Claim
}

// TestXReadGroupClaimPhases: idle pending entries first (oldest delivery
// first, with their idle time and previous count), then new entries (0, 0),
// COUNT shared; NOACK does not apply to claimed entries.
func TestXReadGroupClaimPhases(t *testing.T) {
	ks := groupKeyspace(t, 4)
	read := func(c string, count int64, now int64) {
		mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: c, Count: count, Streams: []wire.ReadStream{{Key: "s", New: true}}}, now)
	}
	read("c1", 1, 100) // 1-0 at 100
	read("c1", 1, 50)  // 2-0 at 100 (the clock never goes back)
	mustApply(t, ks, wire.XClaim{Base: gbase("s"), Group: "g", Consumer: "c1", IDs: []streams.ID{gid(1)},
		IdleMs: -1, TimeMs: -1, RetryCount: -1}, 150) // 1-0 delivered again at 150, count 2
	// At 200 with min idle 60: 2-0 (idle 100, count 1) is claimable, 1-0
	// (idle 50) is not and stops the walk; then the new 3-0 (COUNT 2).
	ids, info := claimIDs(t, mustApply(t, ks, readClaim(60, 2), 200))
	if !reflect.DeepEqual(ids, []streams.ID{gid(2), gid(3)}) || !reflect.DeepEqual(info, []ClaimInfo{{100, 1}, {0, 0}}) {
		t.Fatalf("claimed %v %v", ids, info)
	}
	// NOACK: a claimed entry stays pending; the new one does not.
	c := readClaim(61, 0)
	c.NoAck = true
	ids, info = claimIDs(t, mustApply(t, ks, c, 260))
	if !reflect.DeepEqual(ids, []streams.ID{gid(1), gid(4)}) || !reflect.DeepEqual(info, []ClaimInfo{{110, 2}, {0, 0}}) {
		t.Fatalf("claimed %v %v", ids, info)
	}
	p := mustQuery(t, ks, wire.XPending{Base: gbase("s"), Group: "g", Start: streams.MinID, End: streams.MaxID, Count: 10, IdleMs: -1}, 260).([]PendingEntry)
	want := []PendingEntry{{gid(1), "c2", 0, 3}, {gid(2), "c2", 60, 2}, {gid(3), "c2", 60, 1}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("pending %v", p)
	}
	// Nothing idle enough and nothing new: nil (the client blocks).
	if res := mustApply(t, ks, readClaim(math.MaxInt64, 0), 300); res != nil {
		t.Fatalf("got %v", res)
	}
	checkGroups(t, ks)
}

// TestXNackModes follows §4.2: counts per mode, FORCE, duplicates, XPENDING
// idle -1 and owner "", the NACK zone served first in FIFO order, XCLAIM
// skipping min-idle for NACKed entries, nacked-count, and a snapshot that
// keeps the zone order.
func TestXNackModes(t *testing.T) {
	ks := groupKeyspace(t, 5)
	mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "c1", Count: 3, Streams: []wire.ReadStream{{Key: "s", New: true}}}, 100)
	nack := func(mode wire.NackMode, retry int64, force bool, ids ...streams.ID) int64 {
		return mustApply(t, ks, wire.XNack{Base: gbase("s"), Group: "g", Mode: mode, RetryCount: retry, Force: force, IDs: ids}, 200).(int64)
	}
	pending := func() []PendingEntry {
		return mustQuery(t, ks, wire.XPending{Base: gbase("s"), Group: "g", Start: streams.MinID, End: streams.MaxID, Count: 10, IdleMs: 5000}, 300).([]PendingEntry)
	}
	if n := nack(wire.NackSilent, -1, false, gid(1)); n != 1 {
		t.Fatalf("nacked %d", n)
	}
	if p := pending(); !reflect.DeepEqual(p[0], PendingEntry{gid(1), "", -1, 0}) || len(p) != 1 {
		t.Fatalf("pending %v (IDLE 5000 keeps only the NACKed one)", p)
	}
	nack(wire.NackFatal, -1, false, gid(1))
	if p := pending(); p[0].Deliveries != math.MaxInt64 {
		t.Fatalf("FATAL count %d", p[0].Deliveries)
	}
	if n := nack(wire.NackFail, -1, false, gid(1), gid(9), gid(2), gid(8), gid(3)); n != 3 {
		t.Fatalf("nacked %d of 1,9,2,8,3", n)
	}
	if n := nack(wire.NackFail, -1, false, gid(1), gid(1)); n != 2 {
		t.Fatalf("duplicates nacked %d", n)
	}
	if n := nack(wire.NackFail, -1, false, gid(4)); n != 0 {
		t.Fatalf("not pending, no FORCE: %d", n)
	}
	if n := nack(wire.NackFail, 7, true, gid(4)); n != 1 {
		t.Fatalf("FORCE: %d", n)
	}
	// Zone order now: 2, 3, 1, 4.
	full := mustQuery(t, ks, wire.XInfoStream{Base: gbase("s"), Full: true, Count: 10}, 300).(StreamFullInfo)
	if full.Groups[0].NackedCount != 4 || full.Groups[0].Consumers[0].PelCount != 0 {
		t.Fatalf("nacked-count %d, c1 pel-count %d", full.Groups[0].NackedCount, full.Groups[0].Consumers[0].PelCount)
	}
	restored := restoreSnap(t, snap(t, ks))
	if !bytes.Equal(snap(t, restored), snap(t, ks)) {
		t.Fatal("snapshot of the restored state differs")
	}
	checkInvariants(t, restored)
	for _, k := range []*Keyspace{ks, restored} {
		ids, info := claimIDs(t, mustApply(t, k, readClaim(5, 2), 400))
		if !reflect.DeepEqual(ids, []streams.ID{gid(2), gid(3)}) || info[0].IdleMs != 400 || info[0].DeliveryCount != 1 {
			t.Fatalf("claimed %v %v", ids, info)
		}
		// XCLAIM takes a NACKed entry whatever its idle time.
		res := mustApply(t, k, wire.XClaim{Base: gbase("s"), Group: "g", Consumer: "c3", MinIdleMs: 99999,
			IDs: []streams.ID{gid(1)}, IdleMs: -1, TimeMs: -1, RetryCount: -1}, 400).([]streams.Entry)
		if len(res) != 1 {
			t.Fatalf("XCLAIM of a NACKed entry: %v", res)
		}
	}
	if !bytes.Equal(snap(t, restored), snap(t, ks)) {
		t.Fatal("the restored state diverged")
	}
	checkGroups(t, ks)
	if _, err := ks.Apply(wire.XNack{Base: gbase("nokey"), Group: "g", IDs: []streams.ID{gid(1)}, RetryCount: -1}, 500); err == nil ||
		err.Error() != "NOGROUP No such key 'nokey' or consumer group 'g'" {
		t.Fatalf("missing key: %v", err)
	}
}

// TestReadBudget: MAXCOUNT fills streams in order and skips the rest;
// MAXSIZE never stops before the first entry; a MAXSIZE-skipped entry is
// not delivered (last-delivered-id stays before it).
func TestReadBudget(t *testing.T) {
	ks := New()
	for _, k := range []string{"s1", "s2", "s3"} {
		for i := uint64(1); i <= 3; i++ {
			mustApply(t, ks, wire.XAdd{Base: gbase(k), ID: streams.IDSpec{ID: gid(i)}, Fields: fv("f", "v"), Trim: wire.Trim{Limit: -1}}, 1)
		}
	}
	rs := []wire.ReadStream{{Key: "s1"}, {Key: "s2"}, {Key: "s3"}}
	res := mustQuery(t, ks, wire.XRead{Count: 2, MaxCount: 3, Streams: rs}, 1).([]KeyEntries)
	if len(res) != 2 || len(res[0].Entries) != 2 || len(res[1].Entries) != 1 {
		t.Fatalf("COUNT 2 MAXCOUNT 3: %+v", res)
	}
	res = mustQuery(t, ks, wire.XRead{MaxSize: 1, Streams: rs}, 1).([]KeyEntries)
	if len(res) != 1 || len(res[0].Entries) != 1 {
		t.Fatalf("MAXSIZE 1: %+v", res)
	}
	mustApply(t, ks, wire.XGroupCreate{Base: gbase("s1"), Group: "g", EntriesRead: -1}, 1)
	r := mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "c", MaxSize: 1, Streams: []wire.ReadStream{{Key: "s1", New: true}}}, 2).([]KeyEntries)
	if len(r[0].Entries) != 1 {
		t.Fatalf("XREADGROUP MAXSIZE 1: %+v", r)
	}
	gi := mustQuery(t, ks, wire.XInfoGroups{Base: gbase("s1")}, 2).([]GroupInfo)
	if gi[0].LastDeliveredID != gid(1) || gi[0].Pending != 1 {
		t.Fatalf("group after MAXSIZE read: %+v", gi[0])
	}
	w := mustQuery(t, ks, wire.XClaimWake{Group: "g", MinIdleMs: 50, Names: []string{"s1", "s2"}}, 10).(int64)
	if w != 52 {
		t.Fatalf("wake at %d, want 52", w)
	}
}

// TestNackZoneDumpRestore: DUMP carries the NACK zone (its record follows
// the group's in the payload) and RESTORE brings it back in order.
func TestNackZoneDumpRestore(t *testing.T) {
	ks := groupKeyspace(t, 3)
	mustApply(t, ks, wire.XReadGroup{Group: "g", Consumer: "c1", Streams: []wire.ReadStream{{Key: "s", New: true}}}, 100)
	mustApply(t, ks, wire.XNack{Base: gbase("s"), Group: "g", Mode: wire.NackFail, IDs: []streams.ID{gid(3), gid(1)}, RetryCount: -1}, 200)
	p := mustQuery(t, ks, wire.Dump{Base: gbase("s")}, 300).([]byte)
	mustApply(t, ks, wire.Restore{Base: gbase("r"), Payload: p}, 300)
	c := readClaim(0, 0)
	c.Streams = []wire.ReadStream{{Key: "r", New: true}}
	ids, _ := claimIDs(t, mustApply(t, ks, c, 400))
	if !reflect.DeepEqual(ids, []streams.ID{gid(3), gid(1), gid(2)}) {
		t.Fatalf("restored zone order: %v", ids)
	}
}
