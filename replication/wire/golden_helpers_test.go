package wire

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// commandsOf converts ops, which must all be Commands, to []Command.
func commandsOf(ops []Op) []Command {
	var cmds []Command
	for _, op := range ops {
		cmds = append(cmds, op.(Command))
	}
	return cmds
}

// sampleEntry puts the Commands of ops into an entry in order, followed by
// one Exec (in db) of the remaining read-only ops.
func sampleEntry(nowMs int64, db int, ops []Op) Entry {
	var cmds []Command
	var queries []Op
	for _, op := range ops {
		if c, ok := op.(Command); ok {
			cmds = append(cmds, c)
		} else {
			queries = append(queries, op)
		}
	}
	return Entry{NowMs: nowMs, Cmds: append(cmds, Exec{DB: db, Ops: queries})}
}

// checkGoldenEntry pins e byte for byte in testdata/golden/<name>.hex
// (rewritten with -update, about being its comment line) and checks that
// the pinned bytes decode back to e.
func checkGoldenEntry(t *testing.T, name, about string, e Entry) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".hex")
	enc := e.Append(nil)
	if *update {
		if err := os.WriteFile(path, formatGolden(about, enc), 0o644); err != nil {
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

// malformedOp is an encoded op that must not decode; want, if not empty,
// is a part of the expected error text.
type malformedOp struct {
	name string
	op   []byte
	want string
}

// checkMalformed checks that each case fails to decode with ErrMalformed
// (and the expected text).
func checkMalformed(t *testing.T, cases []malformedOp) {
	t.Helper()
	for _, c := range cases {
		_, _, err := DecodeOp(c.op)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %x decodes with %v, want malformed", c.name, c.op, err)
			continue
		}
		if got := err.Error(); !strings.Contains(got, c.want) {
			t.Errorf("%s: err %q, want it to contain %q", c.name, got, c.want)
		}
	}
}
