package wire

import (
	"reflect"
	"testing"

	"streamd/streams"
)

// groupConfigSampleOps are samples of the XGROUP CONFIG encodings (issue
// #15).
func groupConfigSampleOps() []Op {
	b := Base{DB: 2, Key: "{q}jobs"}
	return []Op{
		XGroupConfig{Base: b, Group: "g", SetMaxDeliveries: true, MaxDeliveries: 3, SetDeadLetter: true, DeadLetter: "{q}dlq"},
		XGroupConfig{Base: b, Group: "g", SetVisibility: true, VisibilityMs: 30000},
		XGroupConfig{Base: b, Group: "g", SetMaxDeliveries: true, SetDeadLetter: true, SetVisibility: true},
		XGroupConfigGet{Base: b, Group: "g"},
		XVisibilityWake{DB: 2, Group: "g", Names: []string{"a", "b"}},
	}
}

// TestGroupConfigGolden pins the XGROUP CONFIG encodings byte for byte.
func TestGroupConfigGolden(t *testing.T) {
	checkGoldenEntry(t, "xgroupconfig_ops", "XGROUP CONFIG (set, NONE), then an Exec of its read form and XVisibilityWake",
		sampleEntry(1700000006000, 2, groupConfigSampleOps()))
}

// TestGroupConfigMalformed: no option, and negative values, are refused.
func TestGroupConfigMalformed(t *testing.T) {
	checkMalformed(t, []malformedOp{
		{name: "no option", op: []byte{byte(opXGroupConfig), 0, 0, 1, 'k', 1, 'g'}},
		{name: "MaxDeliveries -1", op: []byte{byte(opXGroupConfig), 1, 0, 1, 'k', 1, 'g', 1}},
		{name: "VisibilityMs -2", op: []byte{byte(opXGroupConfig), 4, 0, 1, 'k', 1, 'g', 3}},
		{name: "unknown bit", op: []byte{byte(opXGroupConfig), 8, 0, 1, 'k', 1, 'g', 2, 2}},
	})
}

// TestDeliveredEffects: the dead-letter streams of a wrapped answer are
// signalled, and Unwrap gives the plain answer back (also in an EXEC).
func TestDeliveredEffects(t *testing.T) {
	res := Delivered{Result: []streams.Entry{}, DeadLetterKeys: []string{"dlq"}, DeadLettered: 1}
	e := EffectsOf(XClaim{Base: Base{Key: "s"}}, res, nil)
	if !reflect.DeepEqual(e.Modified, []string{"dlq"}) || !reflect.DeepEqual(e.Ready, []string{"dlq"}) {
		t.Fatalf("effects %+v", e)
	}
	if e := EffectsOf(XClaim{Base: Base{Key: "s"}}, []streams.Entry{}, nil); len(e.Modified)+len(e.Ready) != 0 {
		t.Fatalf("plain answer signalled %+v", e)
	}
	if _, ok := Unwrap(res).([]streams.Entry); !ok {
		t.Fatalf("Unwrap gave %T", Unwrap(res))
	}
	outs := []Outcome{{Result: res}}
	Unwrap(outs)
	if _, ok := outs[0].Result.([]streams.Entry); !ok {
		t.Fatalf("Unwrap in EXEC left %T", outs[0].Result)
	}
	c := XGroupConfig{Base: Base{Key: "{a}s"}, Group: "g", SetDeadLetter: true, DeadLetter: "{a}d"}
	if !reflect.DeepEqual(c.Keys(), []string{"{a}s", "{a}d"}) {
		t.Fatalf("keys %v", c.Keys())
	}
}
