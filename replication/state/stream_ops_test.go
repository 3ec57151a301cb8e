package state

import (
	"fmt"
	"reflect"
	"testing"

	"streamd/replication/wire"
	"streamd/streams"
)

func TestXAdd(t *testing.T) {
	tests := []struct {
		name    string
		cmds    []wire.Command
		now     int64
		want    any
		wantErr string
		exists  bool
	}{
		{"auto id uses now", []wire.Command{xadd("s", "*")}, 1000, id(1000, 0), "", true},
		{"auto id after future id", []wire.Command{xadd("s", "5000-3"), xadd("s", "*")}, 1000, id(5000, 4), "", true},
		{"zero id before nomkstream", []wire.Command{func() wire.Command {
			c := xadd("s", "0-0")
			c.NoMkStream = true
			return c
		}()}, 1, nil, "ERR The ID specified in XADD must be greater than 0-0", false},
		{"nomkstream on missing key", []wire.Command{func() wire.Command {
			c := xadd("s", "*")
			c.NoMkStream = true
			return c
		}()}, 1, nil, "", false},
		{"too small leaves no key", []wire.Command{xadd("s", "5-1"), wire.Del{Names: []string{"s"}}, xadd("s", "0-1")}, 1, id(0, 1), "", true},
		{"too small", []wire.Command{xadd("s", "5-1"), xadd("s", "5-1")}, 1, nil, "ERR The ID specified in XADD is equal or smaller than the target stream top item", true},
		{"ms-star", []wire.Command{xadd("s", "5-1"), xadd("s", "5-*")}, 1, id(5, 2), "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ks := New()
			var res any
			var err error
			for _, c := range tc.cmds {
				res, err = ks.Apply(c, tc.now)
			}
			if fmt.Sprint(err) != fmt.Sprint(tc.wantErr) && !(err == nil && tc.wantErr == "") {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if !reflect.DeepEqual(res, tc.want) {
				t.Fatalf("res %#v, want %#v", res, tc.want)
			}
			if n := mustQuery(t, ks, wire.Exists{Names: []string{"s"}}, tc.now); (n == int64(1)) != tc.exists {
				t.Fatalf("exists %v, want %v", n, tc.exists)
			}
		})
	}
}

func TestXAddTrimAndNodeConfig(t *testing.T) {
	ks := New()
	mustApply(t, ks, wire.ConfigSet{Name: "stream-node-max-entries", Value: "10"}, 0)
	for i := 1; i <= 35; i++ {
		mustApply(t, ks, xadd("s", fmt.Sprintf("%d-0", i)), 0)
	}
	c := xadd("s", "36-0")
	c.Trim = wire.Trim{Strategy: wire.TrimMaxLen, Approx: true, MaxLen: 12, Limit: -1}
	mustApply(t, ks, c, 0)
	// Nodes of 10: 36 entries, "~ 12" drops two whole nodes (36-10-10 >= 12).
	if n := mustQuery(t, ks, wire.XLen{Base: wire.Base{Key: "s"}}, 0); n != int64(16) {
		t.Fatalf("len %v, want 16", n)
	}
	n := mustApply(t, ks, wire.XTrim{Base: wire.Base{Key: "s"}, Trim: wire.Trim{Strategy: wire.TrimMinID, MinID: id(30, 0), Limit: -1}}, 0)
	if n != int64(9) {
		t.Fatalf("xtrim minid removed %v, want 9", n)
	}
	if n := mustApply(t, ks, wire.XTrim{Base: wire.Base{Key: "nokey"}, Trim: wire.Trim{Strategy: wire.TrimMaxLen, Limit: -1}}, 0); n != int64(0) {
		t.Fatalf("xtrim on missing key %v", n)
	}
	if ks.nodeMaxEntries() != 10 {
		t.Fatalf("node max %d", ks.nodeMaxEntries())
	}
}

func TestXDelXSetID(t *testing.T) {
	ks := New()
	for _, s := range []string{"1-1", "2-2", "3-3"} {
		mustApply(t, ks, xadd("s", s), 0)
	}
	n := mustApply(t, ks, wire.XDel{Base: wire.Base{Key: "s"}, IDs: []streams.ID{id(3, 3), id(3, 3), id(9, 9)}}, 0)
	if n != int64(1) {
		t.Fatalf("xdel %v", n)
	}
	if n := mustApply(t, ks, wire.XDel{Base: wire.Base{Key: "none"}, IDs: []streams.ID{id(1, 1)}}, 0); n != int64(0) {
		t.Fatalf("xdel on missing key %v", n)
	}
	md := id(10, 0)
	tests := []struct {
		name string
		cmd  wire.XSetID
		err  string
	}{
		{"missing key", wire.XSetID{Base: wire.Base{Key: "none"}, LastID: id(1, 1), EntriesAdded: -1}, "ERR no such key"},
		{"provided max deleted checked first", wire.XSetID{Base: wire.Base{Key: "none"}, LastID: id(1, 1), EntriesAdded: -1, MaxDeletedID: &md}, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"},
		{"below top", wire.XSetID{Base: wire.Base{Key: "s"}, LastID: id(2, 1), EntriesAdded: -1}, "ERR The ID specified in XSETID is smaller than the target stream top item"},
		{"entries added", wire.XSetID{Base: wire.Base{Key: "s"}, LastID: id(3, 4), EntriesAdded: 1}, "ERR The entries_added specified in XSETID is smaller than the target stream length"},
		{"ok", wire.XSetID{Base: wire.Base{Key: "s"}, LastID: id(3, 4), EntriesAdded: 2}, "<nil>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ks.Apply(tc.cmd, 0)
			if fmt.Sprint(err) != tc.err || res != nil {
				t.Fatalf("got %v, %v; want %s", res, err, tc.err)
			}
		})
	}
	ids := mustQuery(t, ks, wire.LastIDs{Names: []string{"s", "none"}}, 0)
	if !reflect.DeepEqual(ids, []streams.ID{id(3, 4), {}}) {
		t.Fatalf("last ids %v", ids)
	}
}

func TestXRangeXRead(t *testing.T) {
	ks := New()
	for i := 1; i <= 5; i++ {
		mustApply(t, ks, xadd("a", fmt.Sprintf("%d-0", i)), 0)
	}
	mustApply(t, ks, xadd("b", "7-0"), 0)
	rng := func(start, end streams.ID, count int64, rev bool) wire.XRange {
		return wire.XRange{Base: wire.Base{Key: "a"}, Start: start, End: end, Count: count, Rev: rev}
	}
	rangeTests := []struct {
		name string
		q    wire.XRange
		want []streams.ID
	}{
		{"all", rng(streams.MinID, streams.MaxID, -1, false), []streams.ID{id(1, 0), id(2, 0), id(3, 0), id(4, 0), id(5, 0)}},
		{"count", rng(streams.MinID, streams.MaxID, 2, false), []streams.ID{id(1, 0), id(2, 0)}},
		{"count 0", rng(streams.MinID, streams.MaxID, 0, false), []streams.ID{}},
		{"bounds", rng(id(2, 0), id(4, 0), -1, false), []streams.ID{id(2, 0), id(3, 0), id(4, 0)}},
		{"start after end", rng(id(4, 0), id(2, 0), -1, false), []streams.ID{}},
		{"rev", rng(id(2, 0), id(4, 0), -1, true), []streams.ID{id(4, 0), id(3, 0), id(2, 0)}},
		{"rev count", rng(streams.MinID, streams.MaxID, 2, true), []streams.ID{id(5, 0), id(4, 0)}},
		{"missing key", wire.XRange{Base: wire.Base{Key: "x"}, End: streams.MaxID, Count: -1}, []streams.ID{}},
	}
	for _, tc := range rangeTests {
		t.Run(tc.name, func(t *testing.T) {
			got := entryIDs(mustQuery(t, ks, tc.q, 0).([]streams.Entry))
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	readTests := []struct {
		name string
		q    wire.XRead
		want string
	}{
		{"after ids", wire.XRead{Count: 2, Streams: []wire.ReadStream{{Key: "a", ID: id(2, 0)}, {Key: "b", ID: id(0, 0)}}}, "a:[3-0 4-0] b:[7-0] "},
		{"no count", wire.XRead{Streams: []wire.ReadStream{{Key: "a", ID: id(3, 0)}}}, "a:[4-0 5-0] "},
		{"omit empty", wire.XRead{Streams: []wire.ReadStream{{Key: "a", ID: id(5, 0)}, {Key: "b", ID: id(1, 0)}}}, "b:[7-0] "},
		{"plus is last entry", wire.XRead{Streams: []wire.ReadStream{{Key: "a", Last: true}, {Key: "zz", Last: true}}}, "a:[5-0] "},
		{"max id", wire.XRead{Streams: []wire.ReadStream{{Key: "a", ID: streams.MaxID}}}, "nil"},
		{"all empty", wire.XRead{Streams: []wire.ReadStream{{Key: "zz"}}}, "nil"},
	}
	for _, tc := range readTests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustQuery(t, ks, tc.q, 0)
			got := "nil"
			if res != nil {
				got = ""
				for _, ke := range res.([]KeyEntries) {
					got += fmt.Sprintf("%s:%v ", ke.Key, entryIDs(ke.Entries))
				}
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	if n := mustQuery(t, ks, wire.XLen{Base: wire.Base{Key: "a"}}, 0); n != int64(5) {
		t.Fatalf("xlen %v", n)
	}
	if n := mustQuery(t, ks, wire.XLen{Base: wire.Base{Key: "x"}}, 0); n != int64(0) {
		t.Fatalf("xlen missing %v", n)
	}
}
