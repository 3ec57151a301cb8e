package wire

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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
	var cmds []Command
	var queries []Op
	for _, op := range groupConfigSampleOps() {
		if c, ok := op.(Command); ok {
			cmds = append(cmds, c)
		} else {
			queries = append(queries, op)
		}
	}
	e := Entry{NowMs: 1700000006000, Cmds: append(cmds, Exec{DB: 2, Ops: queries})}
	path := filepath.Join("testdata", "golden", "xgroupconfig_ops.hex")
	enc := e.Append(nil)
	if *update {
		if err := os.WriteFile(path, formatGolden("XGROUP CONFIG (set, NONE), then an Exec of its read form and XVisibilityWake", enc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	want, err := parseGolden(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, want) {
		t.Fatalf("the encoding changed: the log format is frozen\n got %x\nwant %x", enc, want)
	}
	got, err := DecodeEntry(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Fatalf("decoded %+v\nwant %+v", got, e)
	}
}

// TestGroupConfigMalformed: no option, and negative values, are refused.
func TestGroupConfigMalformed(t *testing.T) {
	for _, b := range [][]byte{
		{byte(opXGroupConfig), 0, 0, 1, 'k', 1, 'g'},
		{byte(opXGroupConfig), 1, 0, 1, 'k', 1, 'g', 1},    // MaxDeliveries -1
		{byte(opXGroupConfig), 4, 0, 1, 'k', 1, 'g', 3},    // VisibilityMs -2
		{byte(opXGroupConfig), 8, 0, 1, 'k', 1, 'g', 2, 2}, // unknown bit
	} {
		if _, _, err := DecodeOp(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: err %v, want malformed", b, err)
		}
	}
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
