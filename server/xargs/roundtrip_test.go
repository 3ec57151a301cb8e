package xargs

import (
	"reflect"
	"strings"
	"testing"

	"streamd/replication/wire"
)

// The leader applies its own XADDs without decoding their log entry
// (replication/proposed.go), so an XADD as XADD's parser builds it must
// decode from its encoding to exactly the same value: followers and a
// replay apply the decoded one.
func TestXAddEncodingRoundTrips(t *testing.T) {
	for _, line := range []string{
		"XADD s * f v",
		"XADD s * f v g w h x",
		"XADD s 5-1 f v",
		"XADD s 5-* f v",
		"XADD s 0-1 f v",
		"XADD s NOMKSTREAM * f v",
		"XADD s MAXLEN 10 * f v",
		"XADD s MAXLEN ~ 10 * f v",
		"XADD s MAXLEN = 10 * f v",
		"XADD s MAXLEN ~ 10 LIMIT 5 * f v",
		"XADD s MINID 5-0 * f v",
		"XADD s MINID ~ 5 LIMIT 0 * f v",
		"XADD s KEEPREF MAXLEN 3 * f v",
		"XADD s DELREF MAXLEN ~ 3 * f v",
		"XADD s ACKED MINID 7 * f v",
		"XADD s IDMP p1 i1 * f v",
		"XADD s IDMPAUTO p1 * f v",
		"XADD s NOMKSTREAM IDMP p i MAXLEN ~ 100 LIMIT 10 * f v",
		"XADD {tag}s * f ''",
	} {
		var args [][]byte
		for _, a := range strings.Fields(line) {
			if a == "''" {
				a = ""
			}
			args = append(args, []byte(a))
		}
		op, r := XAdd(args)
		if r != nil {
			t.Errorf("%s: %v", line, r)
			continue
		}
		for _, db := range []int{0, 7} {
			op.DB = db
			e := wire.Entry{NowMs: 42, Cmds: []wire.Command{op}}
			got, err := wire.DecodeEntry(e.Append(nil))
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if !reflect.DeepEqual(got.Cmds[0], wire.Command(op)) {
				t.Errorf("%s (db %d): decoded\n%#v\nwant\n%#v", line, db, got.Cmds[0], op)
			}
		}
	}
}
