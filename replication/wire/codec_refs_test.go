package wire

import (
	"errors"
	"reflect"
	"testing"

	"streamd/streams"
)

// refSampleOps are samples of Redis 8.2's reference-aware deletes (XDELEX,
// XACKDEL, and XADD/XTRIM with KEEPREF|DELREF|ACKED). They are kept out of
// sampleOps, whose commands the every_op golden entry pins; the ref_ops
// golden entry pins these.
func refSampleOps() []Op {
	b := Base{DB: 3, Key: "stream:1"}
	ids := []streams.ID{{Ms: 1, Seq: 2}, streams.MaxID, {}}
	return []Op{
		XDelEx{Base: b, IDs: ids},
		XDelEx{Base: b, Mode: RefDelete, IDs: ids[:1]},
		XDelEx{Base: b, Mode: RefAcked, IDs: ids[1:]},
		XAckDel{Base: b, Group: "g", IDs: ids},
		XAckDel{Base: b, Group: "", Mode: RefDelete, IDs: ids[:1]},
		XAckDel{Base: b, Group: "grp", Mode: RefAcked, IDs: ids[2:]},
		XTrim{Base: b, Trim: Trim{Strategy: TrimMaxLen, MaxLen: 5, Limit: -1, Ref: RefDelete}},
		XTrim{Base: b, Trim: Trim{Strategy: TrimMinID, Approx: true, MinID: streams.ID{Ms: 6}, Limit: 10, Ref: RefAcked}},
		XAdd{Base: b, Trim: Trim{Strategy: TrimMaxLen, Approx: true, MaxLen: 1, Limit: -1, Ref: RefAcked},
			ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), []byte("v")}},
	}
}

// refSampleCommands are the commands of refSampleOps.
func refSampleCommands() []Command { return commandsOf(refSampleOps()) }

// An entry written before the Ref bits existed (Ref bits 0) decodes as
// KEEPREF; Ref 3 is refused in the trim byte and in XDELEX/XACKDEL flags.
func TestRefModeDecoding(t *testing.T) {
	old := AppendOp(nil, XTrim{Base: Base{Key: "k"}, Trim: Trim{Strategy: TrimMaxLen, MaxLen: 5, Limit: -1}})
	// op, db, key len, key, trim byte
	if old[4] != byte(TrimMaxLen)|trimHasMaxLen {
		t.Fatalf("trim byte %#x", old[4])
	}
	op, _, err := DecodeOp(old)
	if err != nil || op.(XTrim).Trim.Ref != RefKeep {
		t.Fatalf("%#v %v", op, err)
	}
	bad := append([]byte(nil), old...)
	bad[4] |= 3 << trimRefShift
	if _, _, err := DecodeOp(bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("trim ref 3: %v", err)
	}
	for _, o := range []Op{XDelEx{Base: Base{Key: "k"}}, XAckDel{Base: Base{Key: "k"}, Group: "g"}} {
		enc := AppendOp(nil, o)
		enc[1] = 3
		if _, _, err := DecodeOp(enc); !errors.Is(err, ErrMalformed) {
			t.Errorf("%T mode 3: %v", o, err)
		}
		enc[1] = 4
		if _, _, err := DecodeOp(enc); !errors.Is(err, ErrMalformed) {
			t.Errorf("%T flag 4: %v", o, err)
		}
	}
}

func TestRefEffects(t *testing.T) {
	b := Base{DB: 3, Key: "k"}
	cases := []struct {
		name string
		cmd  Command
		res  any
		want Effects
	}{
		{"xdelex deleted", XDelEx{Base: b}, RefResult{Codes: []int64{1, -1}, Deleted: 1}, Effects{DB: 3, Modified: []string{"k"}}},
		{"xdelex nothing", XDelEx{Base: b}, RefResult{Codes: []int64{2, -1}}, Effects{DB: 3}},
		{"xackdel deleted", XAckDel{Base: b}, RefResult{Codes: []int64{1}, Deleted: 1}, Effects{DB: 3, Modified: []string{"k"}}},
		{"xackdel acked only", XAckDel{Base: b}, RefResult{Codes: []int64{2, 1}}, Effects{DB: 3}},
	}
	for _, c := range cases {
		if got := EffectsOf(c.cmd, c.res, nil); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
