package xargs

import (
	"reflect"
	"strings"
	"testing"

	"streamd/replication/wire"
)

func TestXCfgSetRetention(t *testing.T) {
	cases := []struct {
		args string
		want wire.RetentionSet
	}{
		{"MAXLEN 0", wire.RetentionSet{SetMaxLen: true}},
		{"maxlen 10 MAXAGE 5", wire.RetentionSet{SetMaxLen: true, MaxLen: 10, SetMaxAge: true, MaxAgeMs: 5}},
		{"NONE", wire.RetentionSet{SetMaxLen: true, MaxLen: -1, SetMaxAge: true}},
		{"none RETENTION-POLICY keepref", wire.RetentionSet{SetMaxLen: true, MaxLen: -1, SetMaxAge: true,
			SetPolicy: true, Policy: wire.PolicyKeepRef}},
		{"RETENTION-POLICY ACKED", wire.RetentionSet{SetPolicy: true, Policy: wire.PolicyAcked}},
		{"GROUP-IDLE-EXPIRE 1000", wire.RetentionSet{SetIdleExpire: true, IdleExpireMs: 1000}},
		{"GROUP-IDLE-EXPIRE none", wire.RetentionSet{SetIdleExpire: true}},
	}
	for _, c := range cases {
		var args [][]byte
		for _, a := range strings.Fields("XCFGSET s " + c.args) {
			args = append(args, []byte(a))
		}
		got, r := XCfgSet(args)
		if r != nil {
			t.Fatalf("%s: %v", c.args, r)
		}
		if !reflect.DeepEqual(got.Ret, c.want) || got.Duration != 0 || got.MaxSize != 0 || got.Key != "s" {
			t.Errorf("%s: %+v, want %+v", c.args, got, c.want)
		}
	}
	// Mixed with the IDMP options, in any order.
	args := [][]byte{[]byte("XCFGSET"), []byte("s"), []byte("IDMP-DURATION"), []byte("5"), []byte("NONE"),
		[]byte("IDMP-MAXSIZE"), []byte("7")}
	got, r := XCfgSet(args)
	if r != nil || got.Duration != 5 || got.MaxSize != 7 || got.Ret.MaxLen != -1 {
		t.Fatalf("mixed: %+v %v", got, r)
	}
}
