package state

import (
	"bytes"
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func groupConfig(maxDel int64, dlq string, visMs int64) wire.XGroupConfig {
	return wire.XGroupConfig{Base: gbase("s"), Group: "g", SetMaxDeliveries: true, MaxDeliveries: maxDel,
		SetDeadLetter: true, DeadLetter: dlq, SetVisibility: true, VisibilityMs: visMs}
}

func readNewG(consumer string, count int64) wire.XReadGroup {
	return wire.XReadGroup{Group: "g", Consumer: consumer, Count: count, Streams: []wire.ReadStream{{Key: "s", New: true}}}
}

// unwrapped returns res without its wire.Delivered wrapper and the wrapper.
func unwrapped(res any) (any, wire.Delivered) {
	d, _ := res.(wire.Delivered)
	return wire.Unwrap(res), d
}

// dlqEntries returns the dead-letter stream's entries.
func dlqEntries(t *testing.T, ks *Keyspace, key string, now int64) []streams.Entry {
	t.Helper()
	res, err := ks.Query(wire.XRange{Base: gbase(key), Start: streams.MinID, End: streams.MaxID, Count: -1}, now)
	if err != nil {
		t.Fatal(err)
	}
	es, _ := res.([]streams.Entry)
	return es
}

// TestXGroupConfigSetGet: options set independently, NONE resets, the read
// form, errors for a missing key or group and DEADLETTER on itself.
func TestXGroupConfigSetGet(t *testing.T) {
	ks := groupKeyspace(t, 1)
	mustApply(t, ks, groupConfig(3, "dlq", 1000), 10)
	mustApply(t, ks, wire.XGroupConfig{Base: gbase("s"), Group: "g", SetVisibility: true}, 10)
	got := mustQuery(t, ks, wire.XGroupConfigGet{Base: gbase("s"), Group: "g"}, 10)
	if want := (GroupConfigInfo{MaxDeliveries: 3, DeadLetterKey: "dlq"}); got != want {
		t.Fatalf("config %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		cmd  wire.XGroupConfig
		want string
	}{
		{wire.XGroupConfig{Base: gbase("nokey"), Group: "g", SetVisibility: true, VisibilityMs: 1}, ErrXGroupKeyRequired.Error()},
		{wire.XGroupConfig{Base: gbase("s"), Group: "nog", SetVisibility: true, VisibilityMs: 1}, "NOGROUP No such consumer group 'nog' for key name 's'"},
		{wire.XGroupConfig{Base: gbase("s"), Group: "g", SetDeadLetter: true, DeadLetter: "s"}, ErrDeadLetterSelf.Error()},
	} {
		if _, err := ks.Apply(c.cmd, 10); err == nil || err.Error() != c.want {
			t.Errorf("%+v: err %v, want %q", c.cmd, err, c.want)
		}
	}
	gi := mustQuery(t, ks, wire.XInfoGroups{Base: gbase("s")}, 10).([]GroupInfo)
	if gi[0].Config.MaxDeliveries != 3 || gi[0].Config.DeadLetterKey != "dlq" || gi[0].DeadLettered != 0 {
		t.Fatalf("xinfo %+v", gi[0])
	}
}

// TestDeadLetterByClaims: XCLAIM, XAUTOCLAIM and XREADGROUP CLAIM
// dead-letter an entry whose count reached MAXDELIVERIES, in the same
// apply: it is acknowledged, appended with the documented fields, left out
// of XCLAIM's answer and listed with XAUTOCLAIM's deleted IDs.
func TestDeadLetterByClaims(t *testing.T) {
	ks := groupKeyspace(t, 3)
	mustApply(t, ks, groupConfig(2, "dlq", 0), 1)
	mustApply(t, ks, readNewG("c1", 0), 10) // 1-0..3-0, count 1
	// XCLAIM 1-0: count 1 < 2, claimed (count 2).
	claim := wire.XClaim{Base: gbase("s"), Group: "g", Consumer: "c2", IDs: []streams.ID{gid(1)}, IdleMs: -1, TimeMs: -1, RetryCount: -1}
	res, d := unwrapped(mustApply(t, ks, claim, 20))
	if es := res.([]streams.Entry); len(es) != 1 || d.DeadLettered != 0 {
		t.Fatalf("first claim %v %+v", res, d)
	}
	// Again: count 2 reached, dead-lettered instead.
	res, d = unwrapped(mustApply(t, ks, claim, 30))
	if es := res.([]streams.Entry); len(es) != 0 || d.DeadLettered != 1 || !reflect.DeepEqual(d.DeadLetterKeys, []string{"dlq"}) {
		t.Fatalf("second claim %v %+v", res, d)
	}
	if e := wire.EffectsOf(mustApplyRaw(ks, claim, 31)); len(e.Ready) != 0 {
		t.Fatalf("nothing dead-lettered, yet signalled %v", e.Ready)
	}
	es := dlqEntries(t, ks, "dlq", 30)
	want := fv("stream", "s", "id", "1-0", "group", "g", "consumer", "c2", "deliveries", "2", "f", "v")
	if len(es) != 1 || !reflect.DeepEqual(es[0].Fields, want) {
		t.Fatalf("dlq %v", es)
	}
	// XAUTOCLAIM: 2-0 claimed (count 2), then dead-lettered and listed as
	// deleted.
	ac := wire.XAutoClaim{Base: gbase("s"), Group: "g", Consumer: "c3", Start: gid(2), Count: 1}
	res, _ = unwrapped(mustApply(t, ks, ac, 40))
	if r := res.(AutoClaimResult); len(r.Entries) != 1 {
		t.Fatalf("autoclaim %+v", r)
	}
	res, d = unwrapped(mustApply(t, ks, ac, 50))
	if r := res.(AutoClaimResult); len(r.Entries) != 0 || !reflect.DeepEqual(r.Deleted, []streams.ID{gid(2)}) || d.DeadLettered != 1 {
		t.Fatalf("autoclaim %+v %+v", r, d)
	}
	// XREADGROUP CLAIM: 3-0 claimed once, then dead-lettered.
	rc := readClaim(0, 0)
	mustApply(t, ks, rc, 60)
	res, d = unwrapped(mustApply(t, ks, rc, 70))
	if res != nil || d.DeadLettered != 1 {
		t.Fatalf("read claim %v %+v", res, d)
	}
	if n := len(dlqEntries(t, ks, "dlq", 70)); n != 3 {
		t.Fatalf("dlq has %d entries", n)
	}
	gi := mustQuery(t, ks, wire.XInfoGroups{Base: gbase("s")}, 70).([]GroupInfo)
	if gi[0].Pending != 0 || gi[0].DeadLettered != 3 {
		t.Fatalf("group %+v", gi[0])
	}
}

// mustApplyRaw applies and returns the answer with its error, for EffectsOf.
func mustApplyRaw(ks *Keyspace, cmd wire.Command, now int64) (wire.Command, any, error) {
	res, err := ks.Apply(cmd, now)
	return cmd, res, err
}

// TestVisibilityRedelivery: a plain XREADGROUP > redelivers entries idle
// for VISIBILITY first, in the ordinary shape, counting against COUNT, then
// new entries; past MAXDELIVERIES they are dead-lettered; without a
// dead-letter stream they are only acknowledged. XNACK FATAL dead-letters
// on the next delivery even without MAXDELIVERIES.
func TestVisibilityRedelivery(t *testing.T) {
	ks := groupKeyspace(t, 3)
	mustApply(t, ks, groupConfig(0, "", 100), 1)
	mustApply(t, ks, readNewG("c1", 1), 10) // 1-0 at 10
	if res := mustApply(t, ks, readNewG("c2", 0), 50); len(res.([]KeyEntries)[0].Entries) != 2 {
		t.Fatalf("new entries %v", res)
	}
	// At 110, 1-0 is due (idle 100), the others (idle 60) are not.
	res, d := unwrapped(mustApply(t, ks, readNewG("c3", 5), 110))
	kes := res.([]KeyEntries)
	if ids := entryIDs(kes[0].Entries); !reflect.DeepEqual(ids, []streams.ID{gid(1)}) || kes[0].Claim != nil || d.Redelivered != 1 {
		t.Fatalf("redelivered %v claim %v %+v", ids, kes[0].Claim, d)
	}
	if w := mustQuery(t, ks, wire.XVisibilityWake{Group: "g", Names: []string{"s"}}, 110); w != int64(150) {
		t.Fatalf("wake %v, want 150", w)
	}
	// MAXDELIVERIES 2, no dead-letter stream: at 300 every entry is due;
	// 1-0 (count 2) is dropped, 2-0 and 3-0 redelivered.
	mustApply(t, ks, wire.XGroupConfig{Base: gbase("s"), Group: "g", SetMaxDeliveries: true, MaxDeliveries: 2}, 200)
	res, d = unwrapped(mustApply(t, ks, readNewG("c3", 0), 300))
	if ids := entryIDs(res.([]KeyEntries)[0].Entries); !reflect.DeepEqual(ids, []streams.ID{gid(2), gid(3)}) || d.DeadLettered != 1 || d.DeadLetterKeys != nil {
		t.Fatalf("got %v %+v", ids, d)
	}
	// XNACK FATAL with a dead-letter stream and no limit: next delivery
	// dead-letters it.
	mustApply(t, ks, groupConfig(0, "dlq", 100), 300)
	mustApply(t, ks, wire.XNack{Base: gbase("s"), Group: "g", Mode: wire.NackFatal, IDs: []streams.ID{gid(2)}, RetryCount: -1}, 310)
	res, d = unwrapped(mustApply(t, ks, readNewG("c3", 0), 320))
	if res != nil || d.DeadLettered != 1 {
		t.Fatalf("fatal: %v %+v", res, d)
	}
	if es := dlqEntries(t, ks, "dlq", 320); len(es) != 1 || !bytes.Equal(es[0].Fields[9], []byte("9223372036854775807")) {
		t.Fatalf("dlq %v", es)
	}
	if w := mustQuery(t, ks, wire.XVisibilityWake{Group: "g", Names: []string{"s", "dlq"}}, 320); w != int64(400) {
		t.Fatalf("wake %v, want 400 (3-0 delivered at 300)", w)
	}
}

// TestGroupConfigSnapshot: the record round-trips, and a group without
// settings snapshots as before (no record).
func TestGroupConfigSnapshot(t *testing.T) {
	ks := groupKeyspace(t, 2)
	var plain bytes.Buffer
	if err := ks.WriteSnapshot(&plain); err != nil {
		t.Fatal(err)
	}
	mustApply(t, ks, groupConfig(1, "dlq", 0), 1)
	mustApply(t, ks, wire.XGroupConfig{Base: gbase("s"), Group: "g", SetMaxDeliveries: true, SetDeadLetter: true}, 1)
	var reset bytes.Buffer
	if err := ks.WriteSnapshot(&reset); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain.Bytes(), reset.Bytes()) {
		t.Fatal("a group back to the defaults snapshots differently")
	}
	mustApply(t, ks, groupConfig(1, "dlq", 500), 1)
	mustApply(t, ks, readNewG("c", 1), 2)
	mustApply(t, ks, readNewG("c", 1), 600) // 1-0 due, count 1: dead-lettered
	var b bytes.Buffer
	if err := ks.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	ks2, err := ReadSnapshot(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	gi := mustQuery(t, ks2, wire.XInfoGroups{Base: gbase("s")}, 600).([]GroupInfo)
	if gi[0].Config.VisibilityMs != 500 || gi[0].Config.DeadLetterKey != "dlq" || gi[0].DeadLettered != 1 {
		t.Fatalf("restored %+v", gi[0])
	}
	var b2 bytes.Buffer
	if err := ks2.WriteSnapshot(&b2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Fatal("snapshot after restore differs")
	}
}
