package wire

import (
	"math"
	"reflect"
	"testing"
)

// adminSampleOps are samples of the keyspace administration ops (COPY,
// RESTORE, SWAPDB, DUMP, RANDOMKEY, MEMORY USAGE, EXPIRETIME's TTL). They
// are kept out of sampleOps, whose commands are pinned in the every_op
// golden entry; the admin_ops golden entry pins these.
func adminSampleOps() []Op {
	b := Base{DB: 3, Key: "stream:1"}
	return []Op{
		Copy{DB: 0, Src: "a", DstDB: 0, Dst: "b"},
		Copy{DB: 2, Src: "a", DstDB: 15, Dst: "", Replace: true},
		Restore{Base: b, Payload: []byte{0, 1, 2, 0xff}},
		Restore{Base: b, TTLMs: 1700000000000, Abs: true, Replace: true, Payload: []byte("x")},
		Restore{Base: b, TTLMs: 5000, Payload: []byte("payload")},
		SwapDB{A: 0, B: 15},
		Dump{Base: b},
		RandomKey{DB: 4, Seed: math.MaxUint64},
		RandomKey{},
		MemoryUsage{Base: b, Samples: 5},
		MemoryUsage{Base: b},
		TTL{Base: b, Abs: true},
		TTL{Base: b, Millis: true, Abs: true},
	}
}

// allSampleOps is every sample: sampleOps, adminSampleOps, levelSampleOps,
// refSampleOps, idmpSampleOps, r8claimSampleOps and groupConfigSampleOps.
func allSampleOps() []Op {
	ops := append(append(sampleOps(), adminSampleOps()...), levelSampleOps()...)
	ops = append(append(ops, refSampleOps()...), idmpSampleOps()...)
	ops = append(ops, retentionSampleOps()...)
	ops = append(ops, groupConfigSampleOps()...)
	return append(ops, r8claimSampleOps()...)
}

func TestAdminEffects(t *testing.T) {
	cases := []struct {
		name string
		cmd  Command
		res  any
		want Effects
	}{
		{"copy", Copy{DB: 1, Src: "a", DstDB: 1, Dst: "b"}, int64(1), Effects{DB: 1, Modified: []string{"b"}, Ready: []string{"b"}}},
		{"copy not", Copy{DB: 1, Src: "a", DstDB: 1, Dst: "b"}, int64(0), Effects{DB: 1}},
		{"copy to db", Copy{DB: 1, Src: "a", DstDB: 2, Dst: "b"}, int64(1),
			Effects{DB: 1, Extra: []Effects{{DB: 2, Modified: []string{"b"}, Ready: []string{"b"}}}}},
		{"restore", Restore{Base: Base{DB: 4, Key: "k"}}, nil, Effects{DB: 4, Modified: []string{"k"}, Ready: []string{"k"}}},
		{"swapdb", SwapDB{A: 1, B: 2}, nil, Effects{DB: 1, SwapDBs: []int{1, 2}}},
		{"exec swapdb", Exec{Ops: []Op{SwapDB{A: 3, B: 4}}}, []Outcome{{}}, Effects{Extra: []Effects{{DB: 3, SwapDBs: []int{3, 4}}}}},
	}
	for _, c := range cases {
		if got := EffectsOf(c.cmd, c.res, nil); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
