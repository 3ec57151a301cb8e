package wire

import (
	"testing"

	"streamd/streams"
)

// idmpSampleOps are samples of the idempotent-production ops: XADD with
// IDMP, XCFGSET, XIDMPRECORD. The idmp_ops golden entry pins them.
func idmpSampleOps() []Op {
	b := Base{DB: 2, Key: "orders"}
	return []Op{
		XAdd{Base: b, Trim: Trim{Limit: -1}, ID: streams.IDSpec{Auto: true},
			Fields: [][]byte{[]byte("amount"), []byte("100")}, IDMP: IDMP{PID: "p1", IID: "payment-abc"}},
		XAdd{Base: b, NoMkStream: true, Trim: Trim{Strategy: TrimMaxLen, MaxLen: 5, Limit: -1},
			ID: streams.IDSpec{ID: streams.ID{Ms: 7, Seq: 1}}, Fields: [][]byte{[]byte("f"), {}},
			IDMP: IDMP{PID: "\x00bin", IID: "\xff\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e"}},
		XCfgSet{Base: b, Duration: 60, MaxSize: 3},
		XCfgSet{Base: b, Duration: 86400},
		XCfgSet{Base: b, MaxSize: 10000},
		XIDMPRecord{Base: b, PID: "p1", IID: "i1", ID: streams.ID{Ms: 1700000000000, Seq: 3}},
		IDMPExpired{DB: 4, Names: []string{"a", "orders"}},
	}
}

// idmpCommandSamples are the commands of idmpSampleOps.
func idmpCommandSamples() []Command { return commandsOf(idmpSampleOps()) }

func TestIDMPDecodeErrors(t *testing.T) {
	checkMalformed(t, []malformedOp{
		// XAdd flags 0x12 (Auto, IDMP), db 0, key "", trim 0, 0 fields, pid "", iid "i".
		{"empty pid", []byte{byte(opXAdd), 0x12, 0, 0, 0, 0, 0, 1, 'i'}, "empty IDMP producer or idempotent ID"},
		{"empty iid", []byte{byte(opXAdd), 0x12, 0, 0, 0, 0, 1, 'p', 0}, "empty IDMP producer or idempotent ID"},
		{"xadd unknown flag", []byte{byte(opXAdd), 0x22, 0, 0, 0, 0}, "unknown flag bits 0x20"},
		{"xcfgset duration 0", []byte{byte(opXCfgSet), 1, 0, 0, 0}, "Duration 0 marked present"},
		{"xcfgset maxsize 0", []byte{byte(opXCfgSet), 2, 0, 0, 0}, "MaxSize 0 marked present"},
		{"xcfgset unknown flag", []byte{byte(opXCfgSet), 0x80, 0, 0}, "unknown flag bits 0x80"},
		{"xcfgset ack level 0", []byte{byte(opXCfgSet), 4, 0, 0, 0}, "ack level 0"},
		{"xcfgset ack level 3", []byte{byte(opXCfgSet), 4, 0, 0, 3}, "ack level 3"},
	})
}

func TestIDMPEffects(t *testing.T) {
	b := Base{DB: 1, Key: "k"}
	add := XAdd{Base: b, IDMP: IDMP{PID: "p", IID: "i"}}
	if e := EffectsOf(add, IDMPDuplicate{ID: streams.ID{Ms: 1}}, nil); len(e.Modified)+len(e.Ready) != 0 {
		t.Errorf("duplicate signalled %+v", e)
	}
	if e := EffectsOf(add, streams.ID{Ms: 1}, nil); len(e.Modified) != 1 || len(e.Ready) != 1 {
		t.Errorf("new entry: %+v", e)
	}
	for _, c := range []Command{XCfgSet{Base: b, Duration: 1}, XIDMPRecord{Base: b, PID: "p", IID: "i"},
		IDMPExpired{DB: 1, Names: []string{"k"}}} {
		if e := EffectsOf(c, nil, nil); len(e.Modified)+len(e.Ready) != 0 {
			t.Errorf("%T signalled %+v", c, e)
		}
	}
}
