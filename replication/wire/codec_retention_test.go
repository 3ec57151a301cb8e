package wire

import (
	"reflect"
	"testing"
)

// retentionSampleOps are samples of the retention ops: XCFGSET with each
// retention option (and with IDMP ones), the retention sweep and the group
// expiry. The retention_ops golden entry pins them.
func retentionSampleOps() []Op {
	b := Base{DB: 3, Key: "orders"}
	return []Op{
		XCfgSet{Base: b, Ret: RetentionSet{SetMaxLen: true, MaxLen: 1000}},
		XCfgSet{Base: b, Ret: RetentionSet{SetMaxLen: true, MaxLen: 0}},
		XCfgSet{Base: b, Ret: RetentionSet{SetMaxAge: true, MaxAgeMs: 86400000}},
		XCfgSet{Base: b, Ret: RetentionSet{SetMaxLen: true, MaxLen: -1, SetMaxAge: true}}, // NONE
		XCfgSet{Base: b, Ret: RetentionSet{SetPolicy: true, Policy: PolicyKeepRef}},
		XCfgSet{Base: b, Ret: RetentionSet{SetPolicy: true, Policy: PolicyAcked}},
		XCfgSet{Base: b, Ret: RetentionSet{SetIdleExpire: true, IdleExpireMs: 3600000}},
		XCfgSet{Base: b, Ret: RetentionSet{SetIdleExpire: true}},
		XCfgSet{Base: b, Duration: 60, MaxSize: 5, Ret: RetentionSet{SetMaxLen: true, MaxLen: 7, SetMaxAge: true,
			MaxAgeMs: 9, SetPolicy: true, Policy: PolicyKeepRef, SetIdleExpire: true, IdleExpireMs: 11}},
		RetentionSweep{DB: 4, Names: []string{"a", "orders"}},
		RetentionSweep{DB: 1, Names: []string{"s"}, Full: true},
		GroupsExpired{DB: 5, Names: []string{"a", "a", "orders"}, Groups: []string{"g1", "g2", "workers"}},
	}
}

// retentionCommandSamples are the commands of retentionSampleOps.
func retentionCommandSamples() []Command { return commandsOf(retentionSampleOps()) }

func TestRetentionRoundTrip(t *testing.T) {
	for i, op := range retentionSampleOps() {
		got, rest, err := DecodeOp(AppendOp(nil, op))
		if err != nil || len(rest) != 0 {
			t.Fatalf("sample %d: %v (rest %x)", i, err, rest)
		}
		if !reflect.DeepEqual(got, op) {
			t.Errorf("sample %d: decoded %#v, want %#v", i, got, op)
		}
	}
}

// An XCFGSET with only IDMP options encodes exactly as before the
// retention options existed (the idmp_ops golden entry pins those bytes).
func TestRetentionKeepsIDMPEncoding(t *testing.T) {
	enc := AppendOp(nil, XCfgSet{Base: Base{Key: "k"}, Duration: 5})
	want := []byte{byte(opXCfgSet), 1, 0, 1, 'k', 10}
	if !reflect.DeepEqual(enc, want) {
		t.Errorf("encoded %x, want %x", enc, want)
	}
}

func TestRetentionDecodeErrors(t *testing.T) {
	checkMalformed(t, []malformedOp{
		// XCfgSet flags, db 0, key "", then the fields.
		{"maxlen below -1", []byte{byte(opXCfgSet), cfgMaxLen, 0, 0, 3}, "MaxLen -2"},
		{"negative maxage", []byte{byte(opXCfgSet), cfgMaxAge, 0, 0, 1}, "MaxAge -1"},
		{"bad policy", []byte{byte(opXCfgSet), cfgPolicy, 0, 0, 2}, "retention policy 2"},
		{"negative idle", []byte{byte(opXCfgSet), cfgIdleExpire, 0, 0, 1}, "GroupIdleExpire -1"},
		{"unknown flag", []byte{byte(opXCfgSet), 0x80, 0, 0}, "unknown flag bits 0x80"},
		{"sweep unknown flag", []byte{byte(opRetentionSweep), 2, 0, 0}, "unknown flag bits 0x02"},
		{"groups mismatch", []byte{byte(opGroupsExpired), 0, 1, 1, 'k', 0}, "0 groups for 1 keys"},
	})
}

func TestRetentionEffects(t *testing.T) {
	sw := RetentionSweep{DB: 2, Names: []string{"a", "b"}}
	if e := EffectsOf(sw, int64(0), nil); len(e.Modified)+len(e.Ready) != 0 {
		t.Errorf("sweep removing nothing signalled %+v", e)
	}
	if e := EffectsOf(sw, int64(3), nil); !reflect.DeepEqual(e.Modified, []string{"a", "b"}) || e.DB != 2 {
		t.Errorf("sweep: %+v", e)
	}
	ge := GroupsExpired{DB: 1, Names: []string{"a", "a", "b"}, Groups: []string{"x", "y", "z"}}
	if e := EffectsOf(ge, ExpiredGroups{}, nil); len(e.Modified)+len(e.Ready) != 0 {
		t.Errorf("no group expired but signalled %+v", e)
	}
	e := EffectsOf(ge, ExpiredGroups{Keys: []string{"a", "a", "b"}, Groups: []string{"x", "y", "z"}}, nil)
	if !reflect.DeepEqual(e.Ready, []string{"a", "b"}) || len(e.Modified) != 0 {
		t.Errorf("expired: %+v", e)
	}
	if e := EffectsOf(XCfgSet{Base: Base{Key: "k"}, Ret: RetentionSet{SetMaxLen: true}}, nil, nil); len(e.Modified)+len(e.Ready) != 0 {
		t.Errorf("XCFGSET signalled %+v", e)
	}
}
