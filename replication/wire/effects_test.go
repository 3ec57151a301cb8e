package wire

import (
	"errors"
	"reflect"
	"testing"
)

// TestEffects pins what each write signals (Redis 7's signalModifiedKey /
// signalKeyAsReady calls), given its answer.
func TestEffects(t *testing.T) {
	b := Base{DB: 3, Key: "k"}
	fail := errors.New("NOGROUP")
	cases := []struct {
		name string
		cmd  Command
		res  any
		err  error
		want Effects
	}{
		{"xadd", XAdd{Base: b}, "1-1", nil, Effects{DB: 3, Modified: []string{"k"}, Ready: []string{"k"}}},
		{"xadd nomkstream missing", XAdd{Base: b, NoMkStream: true}, nil, nil, Effects{DB: 3}},
		{"xadd refused", XAdd{Base: b}, nil, fail, Effects{DB: 3}},
		{"xdel removed", XDel{Base: b}, int64(2), nil, Effects{DB: 3, Modified: []string{"k"}}},
		{"xdel nothing", XDel{Base: b}, int64(0), nil, Effects{DB: 3}},
		{"xtrim removed", XTrim{Base: b}, int64(1), nil, Effects{DB: 3, Modified: []string{"k"}}},
		{"xgroup create mkstream", XGroupCreate{Base: b, MkStream: true}, nil, nil, Effects{DB: 3, Modified: []string{"k"}, Ready: []string{"k"}}},
		{"xgroup create", XGroupCreate{Base: b}, nil, nil, Effects{DB: 3, Ready: []string{"k"}}},
		{"xgroup create busygroup", XGroupCreate{Base: b}, nil, fail, Effects{DB: 3}},
		{"xgroup setid", XGroupSetID{Base: b}, nil, nil, Effects{DB: 3, Ready: []string{"k"}}},
		{"xgroup destroy", XGroupDestroy{Base: b}, int64(1), nil, Effects{DB: 3, Ready: []string{"k"}}},
		{"xgroup destroy none", XGroupDestroy{Base: b}, int64(0), nil, Effects{DB: 3}},
		{"xreadgroup", XReadGroup{DB: 3}, nil, nil, Effects{DB: 3}},
		{"xack", XAck{Base: b}, int64(1), nil, Effects{DB: 3}},
		{"del", Del{DB: 1, Names: []string{"a", "b"}}, int64(1), nil, Effects{DB: 1, Modified: []string{"a", "b"}, Ready: []string{"a", "b"}}},
		{"del none", Del{DB: 1, Names: []string{"a"}}, int64(0), nil, Effects{DB: 1}},
		{"expired", Expired{Names: []string{"a"}}, int64(1), nil, Effects{Modified: []string{"a"}, Ready: []string{"a"}}},
		{"rename", Rename{Src: "a", Dst: "b"}, nil, nil, Effects{Modified: []string{"a", "b"}, Ready: []string{"a", "b"}}},
		{"rename same", Rename{Src: "a", Dst: "a"}, nil, nil, Effects{}},
		{"renamenx refused", Rename{Src: "a", Dst: "b", NX: true}, int64(0), nil, Effects{}},
		{"expire", Expire{Base: b}, int64(1), nil, Effects{DB: 3, Modified: []string{"k"}, Ready: []string{"k"}}},
		{"persist", Persist{Base: b}, int64(1), nil, Effects{DB: 3, Modified: []string{"k"}}},
		{"persist none", Persist{Base: b}, int64(0), nil, Effects{DB: 3}},
		{"flushdb", FlushDB{DB: 2}, nil, nil, Effects{DB: 2, FlushDBs: []int{2}}},
		{"flushall", FlushAll{}, nil, nil, Effects{FlushAll: true}},
		{"exec", Exec{DB: 0, Ops: []Op{XAdd{Base: Base{DB: 1, Key: "x"}}, XLen{Base: b}, XAck{Base: b}, Del{DB: 2, Names: []string{"y"}}}},
			[]Outcome{{Result: "1-1"}, {Result: int64(0)}, {Result: int64(1)}, {Err: fail}}, nil,
			Effects{Extra: []Effects{{DB: 1, Modified: []string{"x"}, Ready: []string{"x"}}}}},
	}
	for _, tc := range cases {
		if got := EffectsOf(tc.cmd, tc.res, tc.err); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestXAddEffectsAsEffectsOf: the pipelined XADD path's XAddKey and
// XAddEffects give what EffectsOf gives, and allocate nothing.
func TestXAddEffectsAsEffectsOf(t *testing.T) {
	b := Base{DB: 3, Key: "k"}
	cmds := []Command{XAdd{Base: b}, XAdd{Base: b, NoMkStream: true}}
	answers := []struct {
		res any
		err error
	}{{"1-1", nil}, {nil, nil}, {nil, errors.New("ERR x")}, {IDMPDuplicate{}, nil}}
	for _, cmd := range cmds {
		db, key, ok := XAddKey(cmd)
		if !ok || db != 3 || key != "k" {
			t.Fatalf("XAddKey(%+v) = %d %q %v", cmd, db, key, ok)
		}
		for _, a := range answers {
			got := XAddEffects(db, []string{key}, a.res, a.err)
			if want := EffectsOf(cmd, a.res, a.err); !reflect.DeepEqual(got, want) {
				t.Errorf("%+v answered %v %v: %+v, want %+v", cmd, a.res, a.err, got, want)
			}
		}
	}
	if _, _, ok := XAddKey(XDel{Base: b}); ok {
		t.Error("XAddKey took an XDEL for an XADD")
	}
	var cmd Command = XAdd{Base: b}
	keys := []string{"k"}
	if n := testing.AllocsPerRun(100, func() {
		db, _, _ := XAddKey(cmd)
		_ = XAddEffects(db, keys, "1-1", nil)
	}); n != 0 {
		t.Errorf("%v allocations per XADD's effects, want 0", n)
	}
}

// TestEveryCommandHasEffects runs EffectsOf on every sample write: each
// op type decides its effects (the Command interface requires it) and
// keeps its database.
func TestEveryCommandHasEffects(t *testing.T) {
	for _, op := range allSampleOps() {
		cmd, ok := op.(Command)
		if !ok {
			continue
		}
		if e := EffectsOf(cmd, nil, nil); e.DB != cmd.Database() {
			t.Errorf("%s: effects in db %d, op in %d", typeName(op), e.DB, cmd.Database())
		}
	}
}
