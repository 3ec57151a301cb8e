package state

import (
	"encoding/hex"
	"reflect"
	"testing"

	"streamd/groups"
	"streamd/replication/wire"
	"streamd/streams"
)

// brokerKeyspace builds stream s (entries 1-0..4-0) with every issue #15
// setting away from its default: ACKLEVEL LEADER, MAXLEN, MAXAGE,
// RETENTION-POLICY KEEPREF, GROUP-IDLE-EXPIRE with one group expired, and
// group g with MAXDELIVERIES, DEADLETTER and VISIBILITY and one entry
// dead-lettered; group h keeps the defaults. Its last write is at 100.
func brokerKeyspace(t *testing.T) *Keyspace {
	t.Helper()
	ks := groupKeyspace(t, 4)
	mustApply(t, ks, wire.XGroupCreate{Base: gbase("s"), Group: "h", EntriesRead: -1}, 1)
	mustApply(t, ks, wire.XGroupCreate{Base: gbase("s"), Group: "old", EntriesRead: -1}, 1)
	mustApply(t, ks, wire.XCfgSet{Base: gbase("s"), AckLevel: wire.AckLeader, Ret: wire.RetentionSet{
		SetMaxLen: true, MaxLen: 100, SetMaxAge: true, MaxAgeMs: 1 << 40, SetPolicy: true, Policy: wire.PolicyKeepRef,
		SetIdleExpire: true, IdleExpireMs: 50}}, 2)
	mustApply(t, ks, groupConfig(1, "dlq", 30_000), 3)
	mustApply(t, ks, readNewG("c1", 1), 10) // 1-0 to c1, count 1
	claim := wire.XClaim{Base: gbase("s"), Group: "g", Consumer: "c2", IDs: []streams.ID{gid(1)}, IdleMs: -1, TimeMs: -1, RetryCount: -1}
	if _, d := unwrapped(mustApply(t, ks, claim, 20)); d.DeadLettered != 1 {
		t.Fatalf("the claim dead-lettered %d entries", d.DeadLettered)
	}
	mustApply(t, ks, readNewG("c1", 1), 60) // g and h active at 60 and 1
	mustApply(t, ks, wire.XReadGroup{Group: "h", Consumer: "c", Count: 1, Streams: []wire.ReadStream{{Key: "s", New: true}}}, 60)
	res := mustApply(t, ks, wire.GroupsExpired{Names: []string{"s"}, Groups: []string{"old"}}, 100).(wire.ExpiredGroups)
	if len(res.Groups) != 1 {
		t.Fatalf("group old not expired: %+v", res)
	}
	return ks
}

// brokerView is what XINFO STREAM and XINFO GROUPS show of a stream's
// issue #15 settings and counters, and the group config read form.
type brokerView struct {
	AckLevel wire.AckLevel
	Ret      RetentionInfo
	Groups   []GroupInfo
	Config   GroupConfigInfo
}

func brokerViewOf(t *testing.T, ks *Keyspace, key string, now int64) brokerView {
	t.Helper()
	si := mustQuery(t, ks, wire.XInfoStream{Base: gbase(key)}, now).(StreamInfo)
	if si.Ret == nil {
		t.Fatalf("%s: XINFO STREAM shows no retention", key)
	}
	return brokerView{
		AckLevel: si.AckLevel,
		Ret:      *si.Ret,
		Groups:   mustQuery(t, ks, wire.XInfoGroups{Base: gbase(key)}, now).([]GroupInfo),
		Config:   mustQuery(t, ks, wire.XGroupConfigGet{Base: gbase(key), Group: "g"}, now).(GroupConfigInfo),
	}
}

// TestDumpRestoreBrokerSettings: DUMP carries every per-stream and
// per-group setting of issue #15 and their counters (ACKLEVEL, MAXLEN,
// MAXAGE, RETENTION-POLICY, GROUP-IDLE-EXPIRE, groups-expired;
// MAXDELIVERIES, DEADLETTER, VISIBILITY, dead-lettered): RESTORE under
// another key and into a fresh keyspace shows them all in XINFO, a dump
// of the restored key restores again, and the snapshot round-trips.
func TestDumpRestoreBrokerSettings(t *testing.T) {
	ks := brokerKeyspace(t)
	want := brokerView{
		AckLevel: wire.AckLeader,
		Ret:      RetentionInfo{MaxLen: 100, MaxAgeMs: 1 << 40, Policy: "keepref", GroupIdleExpire: 50, GroupsExpired: 1},
		Config:   GroupConfigInfo{MaxDeliveries: 1, DeadLetterKey: "dlq", VisibilityMs: 30_000},
	}
	want.Groups = brokerViewOf(t, ks, "s", 100).Groups
	if g := want.Groups[0]; len(want.Groups) != 2 || g.Name != "g" || g.Config != (groups.Config{MaxDeliveries: 1, DeadLetterKey: "dlq", VisibilityMs: 30_000}) || g.DeadLettered != 1 {
		t.Fatalf("source groups %+v", want.Groups)
	}
	if got := brokerViewOf(t, ks, "s", 100); !reflect.DeepEqual(got, want) {
		t.Fatalf("source %+v\nwant %+v", got, want)
	}
	p := dumpOf(t, ks, 0, "s")
	if ks.TakeRestoredAckLeader() {
		t.Fatal("no RESTORE yet, but a LEADER stream restored")
	}
	mustApply(t, ks, wire.Restore{Base: gbase("r"), Payload: p}, 100)
	if !ks.TakeRestoredAckLeader() || ks.TakeRestoredAckLeader() {
		t.Fatal("RESTORE of a LEADER stream is not reported exactly once")
	}
	fresh := New()
	mustApply(t, fresh, wire.Restore{Base: gbase("s"), Payload: p}, 100)
	if !fresh.TakeRestoredAckLeader() {
		t.Fatal("RESTORE of a LEADER stream into a fresh keyspace not reported")
	}
	for _, c := range []struct {
		name string
		ks   *Keyspace
		key  string
	}{{"other key", ks, "r"}, {"fresh keyspace", fresh, "s"}} {
		if got := brokerViewOf(t, c.ks, c.key, 100); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v\nwant %+v", c.name, got, want)
		}
		again := dumpOf(t, c.ks, 0, c.key)
		mustApply(t, c.ks, wire.Restore{Base: gbase("again"), Payload: again}, 100)
		if got := brokerViewOf(t, c.ks, "again", 100); !reflect.DeepEqual(got, want) {
			t.Errorf("%s, dumped again: %+v\nwant %+v", c.name, got, want)
		}
		checkInvariants(t, c.ks)
		snapshotRoundTrip(t, c.ks)
	}
	// The restored LEADER stream is what the proposer sees.
	if at := fresh.AckTarget(0, "s", 100); at.Level != wire.AckLeader {
		t.Fatalf("restored ack level %v", at.Level)
	}
	// A default stream restores without the report.
	fresh.TakeRestoredAckLeader() // the loop's RESTORE "again"
	mustApply(t, fresh, xadd("plain", "1-1"), 100)
	mustApply(t, fresh, wire.Restore{Base: gbase("plain2"), Payload: dumpOf(t, fresh, 0, "plain")}, 100)
	if fresh.TakeRestoredAckLeader() {
		t.Fatal("a default stream's RESTORE reported LEADER")
	}
}

// TestRestoreRestartsGroupActivity: a RESTOREd stream's groups are idle
// from the RESTORE, whatever the payload's activity times (the source
// would expire them at 110 and 160; restored at 5000 they expire at
// 5050), and the source keeps its own times.
func TestRestoreRestartsGroupActivity(t *testing.T) {
	ks := brokerKeyspace(t)
	p := dumpOf(t, ks, 0, "s")
	if got := idleGroups(ks.dbs[0].keys["s"], 160); !reflect.DeepEqual(got, []string{"g", "h"}) {
		t.Fatalf("source idle at 160: %v", got)
	}
	mustApply(t, ks, wire.Restore{Base: gbase("r"), Payload: p}, 5000)
	r := ks.dbs[0].keys["r"]
	if got := idleGroups(r, 5049); len(got) != 0 {
		t.Fatalf("restored groups idle at 5049: %v", got)
	}
	if got := idleGroups(r, 5050); !reflect.DeepEqual(got, []string{"g", "h"}) {
		t.Fatalf("restored groups idle at 5050: %v", got)
	}
	if got := idleGroups(ks.dbs[0].keys["s"], 5000); !reflect.DeepEqual(got, []string{"g", "h"}) {
		t.Fatalf("source idle at 5000: %v", got)
	}
	// Through the sweep's op, at the restored times.
	res := mustApply(t, ks, wire.GroupsExpired{Names: []string{"r", "r"}, Groups: []string{"g", "h"}}, 5049).(wire.ExpiredGroups)
	if len(res.Groups) != 0 {
		t.Fatalf("expired at 5049: %+v", res)
	}
	res = mustApply(t, ks, wire.GroupsExpired{Names: []string{"r", "r"}, Groups: []string{"g", "h"}}, 5050).(wire.ExpiredGroups)
	if len(res.Groups) != 2 {
		t.Fatalf("not expired at 5050: %+v", res)
	}
	checkInvariants(t, ks)
	snapshotRoundTrip(t, ks)
}

// TestDumpPayloadGoldenBrokerSettings pins the records a stream's issue
// #15 settings add to a DUMP payload (ACKLEVEL tag 16, retention tag 17,
// group config tag 19), as TestDumpPayloadGolden pins a default stream's:
// payloads leave the server, so the layout is frozen.
func TestDumpPayloadGoldenBrokerSettings(t *testing.T) {
	ks := New()
	mustApply(t, ks, xadd("s", "5-1"), 0)
	mustApply(t, ks, wire.XGroupCreate{Base: gbase("s"), Group: "g", EntriesRead: -1}, 0)
	mustApply(t, ks, wire.XCfgSet{Base: gbase("s"), AckLevel: wire.AckLeader, Ret: wire.RetentionSet{
		SetMaxLen: true, MaxLen: 7, SetIdleExpire: true, IdleExpireMs: 60}}, 1000)
	mustApply(t, ks, wire.XGroupConfig{Base: gbase("s"), Group: "g", SetMaxDeliveries: true, MaxDeliveries: 3,
		SetDeadLetter: true, DeadLetter: "d", SetVisibility: true, VisibilityMs: 9}, 1000)
	// After the group record: 13 (tag 19) 06 (max-deliveries 3) 0164
	// ("d") 12 (visibility 9) 00 (dead-lettered 0). After the key's
	// records: 10 (tag 16) 02 (leader); 11 (tag 17) 0e (maxlen 7) 00
	// (no maxage) 00 (acked) 78 (idle 60) 00 (none expired) 0000
	// (needed-below 0-0) 01 (one activity) 0167 ("g") d00f (at 1000).
	const want = "00000038c8a37083030000050102000005010101010405010108020001020166017605016700000100001306016412001002110e000078000000010167d00f000000000000000000000000060000000000000038c8a370830153cad5bb65922d07da"
	got := dumpOf(t, ks, 0, "s")
	if hex.EncodeToString(got) != want {
		t.Errorf("DUMP payload with the broker settings changed (the record layout is frozen):\n got %x\nwant %s", got, want)
	}
}
