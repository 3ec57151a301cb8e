package wire

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"streamd/streams"
)

func idp(ms, seq uint64) *streams.ID { return &streams.ID{Ms: ms, Seq: seq} }

// sampleOps returns values of every op type in ops.go, several per type where
// optional fields, sentinels or flags change the encoding.
func sampleOps() []Op {
	b := Base{DB: 3, Key: "stream:1"}
	rs := []ReadStream{
		{Key: "a", ID: streams.ID{Ms: 5, Seq: 1}},
		{Key: "b", New: true},
		{Key: "c", Last: true, ID: streams.MaxID},
	}
	return []Op{
		// Commands.
		XAdd{Base: b, Trim: Trim{Limit: -1}, ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), []byte("v")}},
		XAdd{Base: Base{DB: 15, Key: ""}, NoMkStream: true,
			Trim:   Trim{Strategy: TrimMaxLen, Approx: true, MaxLen: 1000, Limit: 100},
			ID:     streams.IDSpec{ID: streams.ID{Ms: 1700000000000, Seq: 7}},
			Fields: [][]byte{[]byte("field"), {}, {0, 0xff, '\n'}, []byte("x")}},
		XAdd{Base: b, Trim: Trim{Strategy: TrimMinID, MinID: streams.ID{Ms: 9, Seq: 9}, Limit: 0},
			ID: streams.IDSpec{AutoSeq: true, ID: streams.ID{Ms: 12}}, Fields: [][]byte{[]byte("a"), []byte("b")}},
		XDel{Base: b, IDs: []streams.ID{{Ms: 1, Seq: 2}, streams.MaxID, {}}},
		XDel{Base: b},
		XTrim{Base: b, Trim: Trim{Strategy: TrimMaxLen, MaxLen: -5, Limit: -1}},
		XTrim{Base: b, Trim: Trim{Strategy: TrimMinID, Approx: true, MinID: streams.ID{Seq: 1}, Limit: math.MaxInt64}},
		XSetID{Base: b, LastID: streams.ID{Ms: 10, Seq: 3}, EntriesAdded: -1},
		XSetID{Base: b, LastID: streams.ID{Ms: 10, Seq: 3}, EntriesAdded: 42, MaxDeletedID: idp(0, 0)},
		XGroupCreate{Base: b, Group: "g", ID: streams.ID{Ms: 1}, EntriesRead: -1},
		XGroupCreate{Base: b, Group: "g2", Dollar: true, MkStream: true, EntriesRead: 17},
		XGroupSetID{Base: b, Group: "g", ID: streams.ID{Ms: 4, Seq: 4}, EntriesRead: -1},
		XGroupSetID{Base: b, Group: "g", Dollar: true, EntriesRead: 0},
		XGroupDestroy{Base: b, Group: "g"},
		XGroupCreateConsumer{Base: b, Group: "g", Consumer: "alice"},
		XGroupDelConsumer{Base: b, Group: "g", Consumer: "bob"},
		XReadGroup{DB: 1, Group: "g", Consumer: "c", Count: 10, NoAck: true, Streams: rs},
		XReadGroup{DB: 0, Group: "g", Consumer: "c", Streams: rs[1:2]},
		XAck{Base: b, Group: "g", IDs: []streams.ID{{Ms: 1, Seq: 1}, {Ms: 2}}},
		XClaim{Base: b, Group: "g", Consumer: "c", MinIdleMs: 3600000, IDs: []streams.ID{{Ms: 1}},
			IdleMs: -1, TimeMs: -1, RetryCount: -1},
		XClaim{Base: b, Group: "g", Consumer: "c", MinIdleMs: 0, IDs: []streams.ID{{Ms: 1}, {Ms: 2}},
			IdleMs: 5, TimeMs: 1700000000123, RetryCount: 3, Force: true, JustID: true, LastID: idp(7, 8)},
		XAutoClaim{Base: b, Group: "g", Consumer: "c", MinIdleMs: 100, Start: streams.ID{Ms: 3}, Count: 100},
		XAutoClaim{Base: b, Group: "g", Consumer: "c", JustID: true, Count: 1},
		Del{DB: 2, Names: []string{"a", "b", ""}},
		Del{DB: 0},
		Rename{DB: 4, Src: "a", Dst: "b"},
		Rename{DB: 4, Src: "a", Dst: "b", NX: true},
		FlushDB{DB: 9},
		FlushAll{},
		Expire{Base: b, Ms: 1500, Relative: true, Cond: ExpireXX | ExpireGT},
		Expire{Base: b, Ms: -1700000000000, Cond: ExpireCond(0xff)},
		Persist{Base: b},
		Expired{DB: 5, Names: []string{"k1", "k2"}},
		ConfigSet{Name: "stream-node-max-entries", Value: "100"},
		ACLSetUser{Name: "alice", Rules: []string{"on", "#" + strings.Repeat("ab", 32), "~orders*", "+@stream"}},
		ACLSetUser{Name: "bob", Replace: true},
		ACLDelUser{Names: []string{"alice", "bob"}},
		ACLLoad{Users: []ACLUser{{Name: "default", Rules: []string{"on", "nopass"}}, {Name: "x"}}},
		ACLLoad{},
		Exec{DB: 2, Ops: []Op{
			XAdd{Base: b, Trim: Trim{Limit: -1}, ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("f"), []byte("v")}},
			XLen{Base: b},
			Exec{DB: 1, Ops: []Op{FlushAll{}}},
			XRange{Base: b, Start: streams.MinID, End: streams.MaxID, Count: -1},
		}},
		Exec{DB: 0},

		// Queries.
		XRange{Base: b, Start: streams.ID{Ms: 1}, End: streams.ID{Ms: 2, Seq: math.MaxUint64}, Count: 5, Rev: true},
		XLen{Base: b},
		XRead{DB: 7, Count: 0, Streams: rs},
		LastIDs{DB: 1, Names: []string{"x"}},
		XPending{Base: b, Group: "g", Summary: true, IdleMs: -1},
		XPending{Base: b, Group: "g", IdleMs: 1000, Start: streams.MinID, End: streams.MaxID, Count: 10, Consumer: "c"},
		XInfoStream{Base: b, Full: true, Count: 10},
		XInfoStream{Base: b},
		XInfoGroups{Base: b},
		XInfoConsumers{Base: b, Group: "g"},
		Exists{DB: 3, Names: []string{"a", "a"}},
		Type{Base: b},
		KeysMatch{DB: 1, Pattern: "user:*"},
		Scan{DB: 2, Cursor: math.MaxUint64, Match: "*", Count: 10, Type: "stream"},
		Scan{},
		DBSize{DB: 15},
		TTL{Base: b, Millis: true},
		TTL{Base: b},
		KeyspaceInfo{},
		ExpiredKeys{DB: 6, Limit: 20},
	}
}

func typeName(op Op) string { return strings.TrimPrefix(fmt.Sprintf("%T", op), "wire.") }

// opTypesInPackage lists, from the package's non-test sources, every type
// with a command() or query() method.
func opTypesInPackage(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			if fn.Name.Name != "command" && fn.Name.Name != "query" {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				seen[id.Name] = true
			}
		}
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestEveryOpTypeHasACodecCase fails when a type gains command() or query()
// without a sample here (and so without a tested codec case), and when an op
// code has no sample.
func TestEveryOpTypeHasACodecCase(t *testing.T) {
	types := opTypesInPackage(t)
	if len(types) < 38 {
		t.Fatalf("found only %d op types in the package sources: %v", len(types), types)
	}
	sampled := map[string]bool{}
	codes := map[opCode]string{}
	for _, op := range allSampleOps() {
		name := typeName(op)
		sampled[name] = true
		enc := AppendOp(nil, op)
		code := opCode(enc[0])
		if prev, ok := codes[code]; ok && prev != name {
			t.Errorf("op code %d used by %s and %s", code, prev, name)
		}
		codes[code] = name
		if code.String() != name {
			t.Errorf("%s encodes with code %d named %q", name, code, code.String())
		}
	}
	for _, name := range types {
		if !sampled[name] {
			t.Errorf("op type %s has no sample in sampleOps (add one, and a codec case if AppendOp panics)", name)
		}
	}
	for c := range opNames {
		if opNames[c] != "" && codes[opCode(c)] == "" {
			t.Errorf("op code %d (%s) has no sample", c, opNames[c])
		}
	}
}

func TestOpRoundTrip(t *testing.T) {
	for i, op := range allSampleOps() {
		enc := AppendOp(nil, op)
		trailer := []byte{0xde, 0xad}
		got, rest, err := DecodeOp(append(enc[:len(enc):len(enc)], trailer...))
		if err != nil {
			t.Errorf("sample %d %s: DecodeOp: %v", i, typeName(op), err)
			continue
		}
		if !reflect.DeepEqual(got, op) {
			t.Errorf("sample %d %s: decoded\n%#v\nwant\n%#v", i, typeName(op), got, op)
		}
		if !bytes.Equal(rest, trailer) {
			t.Errorf("sample %d %s: rest %x, want %x", i, typeName(op), rest, trailer)
		}
		if re := AppendOp(nil, got); !bytes.Equal(re, enc) {
			t.Errorf("sample %d %s: re-encoded %x, want %x", i, typeName(op), re, enc)
		}
		// Every strict prefix is refused as truncated, never decoded.
		for n := 0; n < len(enc); n++ {
			if _, _, err := DecodeOp(enc[:n]); !errors.Is(err, ErrTruncated) {
				t.Errorf("sample %d %s: prefix of %d/%d bytes: err %v, want truncated", i, typeName(op), n, len(enc), err)
			}
		}
	}
}

func commandSamples() []Command {
	var cmds []Command
	for _, op := range sampleOps() {
		if c, ok := op.(Command); ok {
			cmds = append(cmds, c)
		}
	}
	return cmds
}

func TestEntryRoundTrip(t *testing.T) {
	entries := []Entry{
		{},
		{NowMs: 1700000000000, Cmds: commandSamples()},
		{NowMs: -1, Cmds: []Command{FlushAll{}}},
		{NowMs: math.MaxInt64, Cmds: []Command{Exec{Ops: []Op{XLen{}, Type{}}}}},
	}
	for i, e := range entries {
		enc := e.Append([]byte("prefix"))[len("prefix"):]
		got, err := DecodeEntry(enc)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("entry %d: decoded\n%#v\nwant\n%#v", i, got, e)
		}
		if re := got.Append(nil); !bytes.Equal(re, enc) {
			t.Errorf("entry %d: re-encoded differs", i)
		}
		for n := 0; n < len(enc); n++ {
			if _, err := DecodeEntry(enc[:n]); !errors.Is(err, ErrTruncated) {
				t.Fatalf("entry %d: prefix of %d/%d bytes: err %v, want truncated", i, n, len(enc), err)
			}
		}
	}
}

func TestDecodeEntryErrors(t *testing.T) {
	xadd := AppendOp(nil, sampleOps()[0])
	entry := func(ops ...[]byte) []byte {
		b := []byte{EntryVersion, 0x01, byte(len(ops))}
		for _, op := range ops {
			b = append(b, op...)
		}
		return b
	}
	cases := []struct {
		name string
		in   []byte
		is   error
		text string // substring of the message
	}{
		{"empty", nil, ErrTruncated, "wire: entry: truncated: empty"},
		{"version 0", []byte{0, 0, 0}, ErrVersion, "unsupported entry version 0 (this build reads version 1)"},
		{"version 2", []byte{2, 0, 0}, ErrVersion, "version 2"},
		{"no count", []byte{EntryVersion, 5}, ErrTruncated, "entry header: truncated"},
		{"count beyond input", []byte{EntryVersion, 0, 100, 1}, ErrTruncated, "count 100 with 1 bytes left"},
		{"unknown op", entry([]byte{200}), ErrUnknownOp, "wire: entry command 1 of 1: unknown op code 200"},
		{"op zero", entry([]byte{0}), ErrUnknownOp, "unknown op code 0"},
		{"query as command", entry([]byte{byte(opKeyspaceInfo)}), ErrMalformed, "command 1 of 1: malformed: KeyspaceInfo is a query, not a command"},
		{"second op bad", entry(xadd, []byte{byte(opFlushDB)}), ErrTruncated, "command 2 of 2: FlushDB: truncated"},
		{"trailing", append(entry(xadd), 0), ErrMalformed, "1 trailing bytes after 1 commands"},
		{"bad flags", entry([]byte{byte(opRename), 2, 0, 0, 0}), ErrMalformed, "Rename: malformed: unknown flag bits 0x02"},
		{"non-minimal uvarint", []byte{EntryVersion, 0x80, 0x00, 0}, ErrMalformed, "non-minimal uvarint"},
		{"uvarint overflow", []byte{EntryVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0}, ErrMalformed, "overflows"},
		{"trim strategy 3", entry([]byte{byte(opXTrim), 0, 0, 3}), ErrMalformed, "XTrim: malformed: trim strategy 3"},
		{"trim maxlen 0 present", entry([]byte{byte(opXTrim), 0, 0, trimHasMaxLen | 1, 0}), ErrMalformed, "MaxLen 0 marked present"},
		{"trim limit -1 present", entry([]byte{byte(opXTrim), 0, 0, trimHasLimit | 1, 1}), ErrMalformed, "Limit -1 marked present"},
		{"trim minid 0 present", entry([]byte{byte(opXTrim), 0, 0, trimHasMinID | 2, 0, 0}), ErrMalformed, "MinID 0-0 marked present"},
		{"xadd id 0 present", entry([]byte{byte(opXAdd), 8, 0, 0, 0, 0, 0, 0}), ErrMalformed, "XAdd: malformed: ID 0-0 marked present"},
		{"field beyond input", entry([]byte{byte(opXAdd), 2, 0, 0, 0, 2, 1, 'a', 9}), ErrTruncated, "value 2 of 9 bytes with 0 left"},
		{"error inside exec", entry([]byte{byte(opExec), 0, 2, byte(opFlushAll), 99}), ErrUnknownOp, "command 1 of 1: Exec: op 2 of 2: unknown op code 99"},
	}
	deep := []byte{}
	for i := 0; i < maxExecDepth+1; i++ {
		deep = append(deep, byte(opExec), 0, 1)
	}
	deep = append(deep, byte(opFlushAll))
	cases = append(cases, struct {
		name string
		in   []byte
		is   error
		text string
	}{"exec too deep", entry(deep), ErrMalformed, "Exec: malformed: nested deeper than 8"})

	for _, c := range cases {
		_, err := DecodeEntry(c.in)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !errors.Is(err, c.is) {
			t.Errorf("%s: err %q is not %v", c.name, err, c.is)
		}
		if !strings.HasPrefix(err.Error(), "wire: ") || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: err %q, want it to contain %q", c.name, err, c.text)
		}
	}

	// Nesting up to the limit is accepted.
	ok := []byte{}
	for i := 0; i < maxExecDepth; i++ {
		ok = append(ok, byte(opExec), 0, 1)
	}
	ok = append(ok, byte(opFlushAll))
	if _, err := DecodeEntry(entry(ok)); err != nil {
		t.Errorf("Exec nested %d deep: %v", maxExecDepth, err)
	}
}

// TestDecodedValuesDoNotAliasInput: Raft may reuse its buffers.
func TestDecodedValuesDoNotAliasInput(t *testing.T) {
	e := Entry{NowMs: 1, Cmds: commandSamples()}
	enc := e.Append(nil)
	got, err := DecodeEntry(enc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range enc {
		enc[i] = 0xAA
	}
	if !reflect.DeepEqual(got, e) {
		t.Fatal("decoded entry changed when the input buffer was overwritten")
	}
	// Appending to one decoded field must not overwrite the next.
	x := got.Cmds[1].(XAdd)
	_ = append(x.Fields[0], "overwrite"...)
	if string(x.Fields[1]) != "" || !bytes.Equal(x.Fields[2], []byte{0, 0xff, '\n'}) {
		t.Fatalf("append to a decoded field overwrote its neighbour: %q", x.Fields)
	}
}

func TestAppendDoesNotAllocate(t *testing.T) {
	e := xaddBatch(128)
	buf := e.Append(nil)
	allocs := testing.AllocsPerRun(20, func() { buf = e.Append(buf[:0]) })
	if allocs != 0 {
		t.Fatalf("Entry.Append into a large enough buffer: %v allocations, want 0", allocs)
	}
}

func TestAppendOpPanicsOnUnknownType(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "no encoding for wire.fakeOp") {
			t.Fatalf("recovered %v", r)
		}
	}()
	AppendOp(nil, fakeOp{})
}

type fakeOp struct{ Base }

func xaddBatch(n int) Entry {
	e := Entry{NowMs: 1700000000000, Cmds: make([]Command, n)}
	for i := range e.Cmds {
		e.Cmds[i] = XAdd{
			Base:   Base{Key: "s"},
			Trim:   Trim{Limit: -1},
			ID:     streams.IDSpec{Auto: true},
			Fields: [][]byte{[]byte("field"), []byte(fmt.Sprintf("value-%04d", i))},
		}
	}
	return e
}

func BenchmarkEntryAppendXAdd128(b *testing.B) {
	e := xaddBatch(128)
	buf := e.Append(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = e.Append(buf[:0])
	}
}

func BenchmarkDecodeEntryXAdd128(b *testing.B) {
	buf := xaddBatch(128).Append(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeEntry(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodedValuesDoNotOverlap: the XADDs of a decoded entry share chunks
// of values and headers, yet each value and each field list is capped at
// its own length, so appending to one never overwrites another, and
// nothing aliases the encoded bytes.
func TestDecodedValuesDoNotOverlap(t *testing.T) {
	want := xaddBatch(300) // more values than one chunk of headers holds
	buf := want.Append(nil)
	got, err := DecodeEntry(buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got.Cmds {
		f := c.(XAdd).Fields
		if cap(f) != len(f) {
			t.Fatalf("command %d: field list cap %d, len %d", i, cap(f), len(f))
		}
		for j, v := range f {
			if cap(v) != len(v) {
				t.Fatalf("command %d value %d: cap %d, len %d", i, j, cap(v), len(v))
			}
		}
		_ = append(f, []byte("extra"))
		_ = append(f[1], 'x')
	}
	clear(buf)
	for i, c := range got.Cmds {
		f, w := c.(XAdd).Fields, want.Cmds[i].(XAdd).Fields
		if len(f) != len(w) || string(f[0]) != string(w[0]) || string(f[1]) != string(w[1]) {
			t.Fatalf("command %d: fields %q, want %q", i, f, w)
		}
	}
}
