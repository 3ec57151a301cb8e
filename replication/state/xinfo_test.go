package state

import (
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func TestXInfoStream(t *testing.T) {
	ks := groupKeyspace(t, 3)
	ks.Apply(wire.XReadGroup{Group: "g", Consumer: "a", Count: 2, Streams: []wire.ReadStream{{Key: "s", New: true}}}, 100)
	ks.Apply(wire.XDel{Base: gbase("s"), IDs: []streams.ID{gid(3)}}, 100)

	res, err := ks.Query(wire.XInfoStream{Base: gbase("s")}, 150)
	if err != nil {
		t.Fatal(err)
	}
	si := res.(StreamInfo)
	if si.Length != 2 || si.RadixTreeKeys != 1 || si.LastGeneratedID != gid(3) || si.MaxDeletedEntryID != gid(3) ||
		si.EntriesAdded != 3 || si.RecordedFirstEntryID != gid(1) || si.Groups != 1 ||
		si.FirstEntry == nil || si.FirstEntry.ID != gid(1) || si.LastEntry == nil || si.LastEntry.ID != gid(2) {
		t.Fatalf("XINFO STREAM %+v", si)
	}

	res, _ = ks.Query(wire.XInfoStream{Base: gbase("s"), Full: true, Count: 1}, 150)
	fi := res.(StreamFullInfo)
	two := int64(2)
	wantGroup := GroupFull{
		Name: "g", LastDeliveredID: gid(2), EntriesRead: &two, Lag: nil, PelCount: 2,
		Pending: []PendingFull{{ID: gid(1), Consumer: "a", DeliveryTimeMs: 100, DeliveryCount: 1}},
		Consumers: []ConsumerFull{{Name: "a", SeenTimeMs: 100, ActiveTimeMs: 100, PelCount: 2,
			Pending: []ConsumerPendingFull{{ID: gid(1), DeliveryTimeMs: 100, DeliveryCount: 1}}}},
	}
	if len(fi.Entries) != 1 || fi.Entries[0].ID != gid(1) || !reflect.DeepEqual(fi.Groups, []GroupFull{wantGroup}) {
		t.Fatalf("XINFO STREAM FULL COUNT 1 %+v", fi)
	}
	res, _ = ks.Query(wire.XInfoStream{Base: gbase("s"), Full: true, Count: 0}, 150)
	if fi := res.(StreamFullInfo); len(fi.Entries) != 2 || len(fi.Groups[0].Pending) != 2 {
		t.Fatalf("XINFO STREAM FULL COUNT 0 %+v", fi)
	}

	ks.Apply(wire.XGroupCreate{Base: gbase("empty"), Group: "g", MkStream: true, EntriesRead: -1}, 1)
	res, _ = ks.Query(wire.XInfoStream{Base: gbase("empty")}, 150)
	if si := res.(StreamInfo); si.FirstEntry != nil || si.LastEntry != nil || si.Length != 0 || si.Groups != 1 {
		t.Fatalf("XINFO STREAM on an empty stream %+v", si)
	}
}
