package state

import (
	"bytes"
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func cfgRet(key string, s wire.RetentionSet) wire.XCfgSet {
	return wire.XCfgSet{Base: base(key), Ret: s}
}

func retInfo(t *testing.T, ks *Keyspace, key string, now int64) *RetentionInfo {
	t.Helper()
	return mustQuery(t, ks, wire.XInfoStream{Base: base(key)}, now).(StreamInfo).Ret
}

func rangeIDs(t *testing.T, ks *Keyspace, key string, now int64) []streams.ID {
	t.Helper()
	return entryIDs(mustQuery(t, ks, wire.XRange{Base: base(key), Start: streams.MinID, End: streams.MaxID, Count: -1}, now).([]streams.Entry))
}

// addMs appends entries ms-1 … for the given ms values.
func addMs(t *testing.T, ks *Keyspace, key string, now int64, ms ...uint64) {
	t.Helper()
	for _, m := range ms {
		c := xadd(key, "*")
		c.ID = streams.IDSpec{ID: streams.ID{Ms: m, Seq: 1}}
		mustApply(t, ks, c, now)
	}
}

func readNew(key, group, consumer string, count int64) wire.XReadGroup {
	return wire.XReadGroup{Group: group, Consumer: consumer, Count: count, Streams: []wire.ReadStream{{Key: key, New: true}}}
}

func TestRetentionKeepRefMaxLen(t *testing.T) {
	ks := New()
	addMs(t, ks, "s", 100, 1, 2, 3, 4, 5, 6)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "g", EntriesRead: -1}, 100)
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetMaxLen: true, MaxLen: 3, SetPolicy: true, Policy: wire.PolicyKeepRef}), 100)
	// XCFGSET itself does not trim (the next XADD or the sweep does).
	if n := xlen(t, ks, "s", 100); n != 6 {
		t.Fatalf("XLEN after XCFGSET %d", n)
	}
	addMs(t, ks, "s", 101, 7)
	if got, want := rangeIDs(t, ks, "s", 101), []streams.ID{id(5, 1), id(6, 1), id(7, 1)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	want := &RetentionInfo{MaxLen: 3, MaxAgeMs: -1, Policy: "keepref", GroupIdleExpire: -1}
	if got := retInfo(t, ks, "s", 101); !reflect.DeepEqual(got, want) {
		t.Fatalf("info %+v, want %+v", got, want)
	}
}

// TestRetentionAckedHolds: ACKED never removes an entry a group has not
// been delivered or has pending; retention-held counts what it keeps
// beyond KEEPREF's result.
func TestRetentionAckedHolds(t *testing.T) {
	ks := New()
	addMs(t, ks, "s", 100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "g", ID: streams.MinID, EntriesRead: -1}, 100)
	mustApply(t, ks, readNew("s", "g", "c", 3), 100) // 1, 2, 3 pending
	mustApply(t, ks, wire.XAck{Base: base("s"), Group: "g", IDs: []streams.ID{id(1, 1)}}, 100)
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetMaxLen: true, MaxLen: 2}), 100)
	addMs(t, ks, "s", 101, 11)
	// 1 acked: gone. 2, 3 pending and 4-11 undelivered: kept.
	if n := xlen(t, ks, "s", 101); n != 10 {
		t.Fatalf("XLEN %d, want 10", n)
	}
	if got := retInfo(t, ks, "s", 101); got.Held != 8 || got.Policy != "acked" {
		t.Fatalf("info %+v, want held 8", got)
	}
	// Reading and acknowledging everything frees all but the last two.
	mustApply(t, ks, readNew("s", "g", "c", 0), 102)
	pend := []streams.ID{}
	for ms := uint64(2); ms <= 11; ms++ {
		pend = append(pend, id(ms, 1))
	}
	mustApply(t, ks, wire.XAck{Base: base("s"), Group: "g", IDs: pend[:5]}, 102) // 2-6 acked, 7-11 pending
	// ACKED would leave 7-11, KEEPREF 10-11: 3 held.
	if got := retInfo(t, ks, "s", 102); got.Held != 3 {
		t.Fatalf("held %d, want 3 (7-11 pending, MAXLEN 2)", got.Held)
	}
	sc := ks.RetentionDue(0, 0, 100, 102, true)
	if !reflect.DeepEqual(sc.Trim, []string{"s"}) || sc.Held != 3 {
		t.Fatalf("scan %+v", sc)
	}
	if n := mustApply(t, ks, wire.RetentionSweep{Names: []string{"s", "missing"}, Full: true}, 102).(int64); n != 5 {
		t.Fatalf("sweep removed %d, want 5", n)
	}
	if got, want := rangeIDs(t, ks, "s", 102), pend[5:]; !reflect.DeepEqual(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	mustApply(t, ks, wire.XAck{Base: base("s"), Group: "g", IDs: pend[5:]}, 103)
	mustApply(t, ks, wire.RetentionSweep{Names: []string{"s"}}, 103)
	if got, want := rangeIDs(t, ks, "s", 103), []streams.ID{id(10, 1), id(11, 1)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	if sc := ks.RetentionDue(0, 0, 100, 103, true); len(sc.Trim) != 0 || sc.Held != 0 {
		t.Fatalf("nothing left to do, scan %+v", sc)
	}
}

func TestRetentionMaxAge(t *testing.T) {
	ks := New()
	addMs(t, ks, "s", 1000, 100, 200, 300, 400)
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetMaxAge: true, MaxAgeMs: 1000}), 1000)
	// At 1250 the entries below 250 are older than a second.
	if sc := ks.RetentionDue(0, 0, 10, 1250, true); !reflect.DeepEqual(sc.Trim, []string{"s"}) {
		t.Fatalf("scan %+v", sc)
	}
	if n := mustApply(t, ks, wire.RetentionSweep{Names: []string{"s"}}, 1250).(int64); n != 2 {
		t.Fatalf("sweep removed %d", n)
	}
	// With a group that has read nothing, MAXAGE holds everything.
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "g", ID: streams.MinID, EntriesRead: -1}, 1250)
	addMs(t, ks, "s", 1450, 500)
	if n := xlen(t, ks, "s", 1450); n != 3 {
		t.Fatalf("XLEN %d", n)
	}
	if got := retInfo(t, ks, "s", 1450); got.Held != 2 || got.MaxAgeMs != 1000 || got.MaxLen != -1 {
		t.Fatalf("info %+v, want held 2 (300, 400)", got)
	}
	// MAXAGE and MAXLEN together, then NONE.
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetMaxLen: true, MaxLen: 1, SetPolicy: true, Policy: wire.PolicyKeepRef}), 1450)
	addMs(t, ks, "s", 1450, 600)
	if got := rangeIDs(t, ks, "s", 1450); !reflect.DeepEqual(got, []streams.ID{id(600, 1)}) {
		t.Fatalf("entries %v", got)
	}
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetMaxLen: true, MaxLen: -1, SetMaxAge: true}), 1450)
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetPolicy: true, Policy: wire.PolicyAcked}), 1450)
	if o := ks.db(0).keys["s"]; o.Ret != nil {
		t.Fatalf("defaults kept a state: %+v", o.Ret)
	}
	if got := retInfo(t, ks, "s", 1450); got != nil {
		t.Fatalf("XINFO shows retention for the defaults: %+v", got)
	}
}

func TestGroupIdleExpire(t *testing.T) {
	ks := New()
	addMs(t, ks, "s", 1000, 1, 2, 3)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "old", ID: streams.MinID, EntriesRead: -1}, 1000)
	mustApply(t, ks, readNew("s", "old", "c", 2), 1000)
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetIdleExpire: true, IdleExpireMs: 5000}), 2000)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "new", ID: streams.MinID, EntriesRead: -1}, 3000)
	// A failed CREATE is no activity.
	if _, err := ks.Apply(wire.XGroupCreate{Base: base("s"), Group: "old", EntriesRead: -1}, 6000); err == nil {
		t.Fatal("BUSYGROUP expected")
	}
	mustApply(t, ks, wire.XAck{Base: base("s"), Group: "new", IDs: []streams.ID{id(9, 9)}}, 4000)
	if sc := ks.RetentionDue(0, 0, 10, 6999, true); len(sc.ExpireGroups) != 0 {
		t.Fatalf("early candidates %+v", sc)
	}
	sc := ks.RetentionDue(0, 0, 10, 7000, true)
	if !reflect.DeepEqual(sc.ExpireGroups, []string{"old"}) || !reflect.DeepEqual(sc.ExpireKeys, []string{"s"}) {
		t.Fatalf("scan %+v", sc)
	}
	// The Apply checks again: activity between the scan and the entry
	// keeps the group.
	mustApply(t, ks, wire.XClaim{Base: base("s"), Group: "old", Consumer: "c", IDs: []streams.ID{id(1, 1)},
		IdleMs: -1, TimeMs: -1, RetryCount: -1}, 7000)
	res := mustApply(t, ks, wire.GroupsExpired{Names: sc.ExpireKeys, Groups: sc.ExpireGroups}, 7001).(wire.ExpiredGroups)
	if len(res.Groups) != 0 {
		t.Fatalf("expired %+v after a claim", res)
	}
	res = mustApply(t, ks, wire.GroupsExpired{Names: []string{"s", "s", "nokey"}, Groups: []string{"old", "new", "old"}}, 12000).(wire.ExpiredGroups)
	if !reflect.DeepEqual(res, wire.ExpiredGroups{Keys: []string{"s", "s"}, Groups: []string{"old", "new"}}) {
		t.Fatalf("expired %+v", res)
	}
	if got := retInfo(t, ks, "s", 12000); got.GroupsExpired != 2 || got.GroupIdleExpire != 5000 {
		t.Fatalf("info %+v", got)
	}
	if gs := mustQuery(t, ks, wire.XInfoGroups{Base: base("s")}, 12000).([]GroupInfo); len(gs) != 0 {
		t.Fatalf("groups left %+v", gs)
	}
	// NONE stops the expiry; groups-expired stays.
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "g", EntriesRead: -1}, 12000)
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetIdleExpire: true}), 12000)
	res = mustApply(t, ks, wire.GroupsExpired{Names: []string{"s"}, Groups: []string{"g"}}, 99000).(wire.ExpiredGroups)
	if len(res.Groups) != 0 {
		t.Fatalf("expired with NONE: %+v", res)
	}
	if got := retInfo(t, ks, "s", 99000); got.GroupsExpired != 2 || got.GroupIdleExpire != -1 {
		t.Fatalf("info %+v", got)
	}
}

// TestRetentionSnapshot: the settings, counters and activity times survive
// a snapshot, COPY and DUMP/RESTORE's record; a stream without retention
// writes no record.
func TestRetentionSnapshot(t *testing.T) {
	ks, plain := New(), New()
	addMs(t, ks, "plain", 10, 1)
	addMs(t, plain, "plain", 10, 1)
	mustApply(t, plain, wire.Del{Names: []string{"s"}}, 30)
	before := snap(t, plain)
	addMs(t, ks, "s", 10, 1, 2, 3)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "a", ID: streams.MinID, EntriesRead: -1}, 10)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "b", ID: streams.MinID, EntriesRead: -1}, 10)
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetMaxLen: true, MaxLen: 1, SetMaxAge: true, MaxAgeMs: 77,
		SetIdleExpire: true, IdleExpireMs: 500}), 20)
	mustApply(t, ks, readNew("s", "b", "c", 1), 30)
	mustApply(t, ks, wire.Del{Names: []string{"s"}}, 30)
	if !bytes.Equal(snap(t, ks), before) {
		t.Fatal("a deleted stream's retention reached the snapshot")
	}
	addMs(t, ks, "s", 40, 1, 2, 3)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "a", ID: streams.MinID, EntriesRead: -1}, 40)
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetMaxLen: true, MaxLen: 1, SetMaxAge: true, MaxAgeMs: 77,
		SetIdleExpire: true, IdleExpireMs: 500}), 50)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "b", ID: streams.MinID, EntriesRead: -1}, 60)
	mustApply(t, ks, readNew("s", "b", "c", 1), 70)
	mustApply(t, ks, wire.Copy{Src: "s", Dst: "s2"}, 70)
	b := snap(t, ks)
	rs := restoreSnap(t, b)
	if !bytes.Equal(snap(t, rs), b) {
		t.Fatal("snapshot not stable across a restore")
	}
	sameView(t, ks, rs, 70)
	for _, k := range []string{"s", "s2"} {
		r := rs.db(0).keys[k].Ret
		want := &Retention{maxLen: 1, maxAgeMs: 77, idleMs: 500, activityMs: map[string]int64{"a": 50, "b": 70}}
		if !reflect.DeepEqual(r, want) {
			t.Fatalf("%s restored %+v, want %+v", k, r, want)
		}
	}
	// The group expiry decides the same on both.
	for _, x := range []*Keyspace{ks, rs} {
		res := mustApply(t, x, wire.GroupsExpired{Names: []string{"s", "s"}, Groups: []string{"a", "b"}}, 560)
		if !reflect.DeepEqual(res, wire.ExpiredGroups{Keys: []string{"s"}, Groups: []string{"a"}}) {
			t.Fatalf("expired %+v", res)
		}
	}
	if !bytes.Equal(snap(t, ks), snap(t, rs)) {
		t.Fatal("snapshots differ after the expiry")
	}
}

// TestRetentionNeededBelow: an XADD's ACKED trim starts where the last one
// found entries still needed; XACK moves that back; a change that frees
// an entry without moving it (simulated here) is found by the full sweep.
func TestRetentionNeededBelow(t *testing.T) {
	ks := New()
	addMs(t, ks, "s", 100, 1, 2, 3, 4, 5)
	mustApply(t, ks, wire.XGroupCreate{Base: base("s"), Group: "g", ID: streams.MinID, EntriesRead: -1}, 100)
	mustApply(t, ks, readNew("s", "g", "c", 4), 100) // 1-4 pending
	mustApply(t, ks, cfgRet("s", wire.RetentionSet{SetMaxLen: true, MaxLen: 0}), 100)
	addMs(t, ks, "s", 100, 6)
	r := ks.db(0).keys["s"].Ret
	if r.neededBelow != id(4, 2) {
		t.Fatalf("neededBelow %s, want 4-2 (1-4 pending)", r.neededBelow)
	}
	mustApply(t, ks, wire.XAck{Base: base("s"), Group: "g", IDs: []streams.ID{id(3, 1)}}, 100)
	if r.neededBelow != id(3, 1) {
		t.Fatalf("after XACK 3-1: neededBelow %s", r.neededBelow)
	}
	addMs(t, ks, "s", 100, 7)
	if got, want := rangeIDs(t, ks, "s", 100), []streams.ID{id(1, 1), id(2, 1), id(4, 1), id(5, 1), id(6, 1), id(7, 1)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	// Free 1-1 behind neededBelow's back: only a full walk sees it.
	ks.db(0).keys["s"].Groups.Get("g").PEL.Remove(id(1, 1))
	if sc := ks.RetentionDue(0, 0, 10, 100, false); len(sc.Trim) != 0 || sc.Held != 6 {
		t.Fatalf("scan from neededBelow %+v", sc)
	}
	if sc := ks.RetentionDue(0, 0, 10, 100, true); !reflect.DeepEqual(sc.Trim, []string{"s"}) || sc.Held != 5 {
		t.Fatalf("full scan %+v", sc)
	}
	if n := mustApply(t, ks, wire.RetentionSweep{Names: []string{"s"}}, 100).(int64); n != 0 {
		t.Fatalf("sweep from neededBelow removed %d", n)
	}
	if n := mustApply(t, ks, wire.RetentionSweep{Names: []string{"s"}, Full: true}, 100).(int64); n != 1 {
		t.Fatalf("full sweep removed %d, want 1", n)
	}
	if got := xlen(t, ks, "s", 100); got != 5 {
		t.Fatalf("XLEN %d", got)
	}
}
