package wire

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamd/streams"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.hex from the current encoder")

// goldenEntries are pinned byte for byte in testdata/golden/<name>.hex: a
// change to the encoding of anything here fails the test, because entries
// already in someone's Raft log must keep decoding the same.
func goldenEntries() []struct {
	name, about string
	entry       Entry
} {
	key := Base{Key: "orders"}
	var queries []Op
	for _, op := range sampleOps() {
		if _, ok := op.(Query); ok {
			queries = append(queries, op)
		}
	}
	var adminCommands []Command
	var adminQueries []Op
	for _, op := range adminSampleOps() {
		if c, ok := op.(Command); ok {
			adminCommands = append(adminCommands, c)
		} else {
			adminQueries = append(adminQueries, op)
		}
	}
	// every_op was pinned before the ACL ops existed: it keeps the
	// commands of that time; acl_ops pins the ACL ones.
	var frozen, aclOps []Command
	for _, c := range commandSamples() {
		if IsACL(c) {
			aclOps = append(aclOps, c)
		} else {
			frozen = append(frozen, c)
		}
	}
	return []struct {
		name, about string
		entry       Entry
	}{
		{"xadd_batch", "three XADDs: '*'; explicit ID with MAXLEN ~ 1000 LIMIT 100 and NOMKSTREAM; 'ms-*' with MINID in db 1",
			Entry{NowMs: 1700000000000, Cmds: []Command{
				XAdd{Base: key, Trim: Trim{Limit: -1}, ID: streams.IDSpec{Auto: true},
					Fields: [][]byte{[]byte("item"), []byte("book"), []byte("qty"), []byte("2")}},
				XAdd{Base: key, NoMkStream: true, Trim: Trim{Strategy: TrimMaxLen, Approx: true, MaxLen: 1000, Limit: 100},
					ID: streams.IDSpec{ID: streams.ID{Ms: 1700000000001, Seq: 5}}, Fields: [][]byte{[]byte("f"), {}}},
				XAdd{Base: Base{DB: 1, Key: "s"}, Trim: Trim{Strategy: TrimMinID, MinID: streams.ID{Ms: 42}, Limit: -1},
					ID: streams.IDSpec{AutoSeq: true, ID: streams.ID{Ms: 99}}, Fields: [][]byte{[]byte("a"), []byte("b")}},
			}}},
		{"group_ops", "XGROUP CREATE $ MKSTREAM, XREADGROUP >, XACK, XCLAIM with options, XAUTOCLAIM",
			Entry{NowMs: 1700000001000, Cmds: []Command{
				XGroupCreate{Base: key, Group: "workers", Dollar: true, MkStream: true, EntriesRead: -1},
				XReadGroup{Group: "workers", Consumer: "w1", Count: 10, Streams: []ReadStream{{Key: "orders", New: true}}},
				XAck{Base: key, Group: "workers", IDs: []streams.ID{{Ms: 1700000000000}, {Ms: 1700000000001, Seq: 5}}},
				XClaim{Base: key, Group: "workers", Consumer: "w2", MinIdleMs: 60000, IDs: []streams.ID{{Ms: 1700000000000}},
					IdleMs: -1, TimeMs: -1, RetryCount: 2, Force: true, LastID: &streams.ID{Ms: 1700000000001, Seq: 5}},
				XAutoClaim{Base: key, Group: "workers", Consumer: "w3", MinIdleMs: 60000, Count: 100, JustID: true},
			}}},
		{"exec", "MULTI XADD XLEN EXPIRE XRANGE EXEC, then an expiry sweep",
			Entry{NowMs: 1700000002000, Cmds: []Command{
				Exec{DB: 0, Ops: []Op{
					XAdd{Base: key, Trim: Trim{Limit: -1}, ID: streams.IDSpec{Auto: true}, Fields: [][]byte{[]byte("k"), []byte("v")}},
					XLen{Base: key},
					Expire{Base: key, Ms: 30000, Relative: true},
					XRange{Base: key, Start: streams.MinID, End: streams.MaxID, Count: -1},
				}},
				Expired{DB: 0, Names: []string{"old:1", "old:2"}},
			}}},
		{"every_op", "every command sample of codec_test.go, then an Exec of every query sample",
			Entry{NowMs: 1700000003000, Cmds: append(frozen, Exec{DB: 0, Ops: queries})}},
		{"admin_ops", "COPY, RESTORE, SWAPDB samples of codec_admin_test.go, then an Exec of DUMP, RANDOMKEY, MEMORY USAGE, EXPIRETIME",
			Entry{NowMs: 1700000004000, Cmds: append(adminCommands, Exec{DB: 3, Ops: adminQueries})}},
		{"acl_ops", "ACL SETUSER (appended, replaced), DELUSER, LOAD (users, none)",
			Entry{NowMs: 1700000004000, Cmds: aclOps}},
		{"engine_level", "the engine level switch to level 1 (op 48)",
			Entry{NowMs: 1700000005000, Cmds: []Command{EngineLevel{Level: 1}}}},
		{"ref_ops", "Redis 8.2: XDELEX, XACKDEL in each mode; XADD/XTRIM with DELREF and ACKED",
			Entry{NowMs: 1700000005000, Cmds: refSampleCommands()}},
		{"idmp_ops", "XADD IDMP (with '*', with an explicit ID and MAXLEN), XCFGSET (both, each), XIDMPRECORD, an iid expiry sweep",
			Entry{NowMs: 1700000005000, Cmds: idmpCommandSamples()}},
		{"retention_ops", "XCFGSET MAXLEN, MAXAGE, NONE, RETENTION-POLICY, GROUP-IDLE-EXPIRE (each, all with IDMP); a retention sweep; a group expiry",
			Entry{NowMs: 1700000006000, Cmds: retentionCommandSamples()}},
		{"acklevel_ops", "XCFGSET ACKLEVEL LEADER alone, QUORUM with both IDMP options",
			Entry{NowMs: 1700000006000, Cmds: []Command{
				XCfgSet{Base: Base{DB: 3, Key: "orders"}, AckLevel: AckLeader},
				XCfgSet{Base: key, Duration: 60, MaxSize: 3, AckLevel: AckQuorum},
			}}},
	}
}

// formatGolden writes a comment line and the bytes as hex, 32 per line.
func formatGolden(about string, b []byte) []byte {
	var out bytes.Buffer
	out.WriteString("# " + about + "\n")
	h := hex.EncodeToString(b)
	for len(h) > 64 {
		out.WriteString(h[:64] + "\n")
		h = h[64:]
	}
	out.WriteString(h + "\n")
	return out.Bytes()
}

// parseGolden reads hex, ignoring '#' comment lines and white space.
func parseGolden(data []byte) ([]byte, error) {
	var h strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		h.WriteString(line)
	}
	return hex.DecodeString(h.String())
}

func TestGoldenEntries(t *testing.T) {
	for _, g := range goldenEntries() {
		path := filepath.Join("testdata", "golden", g.name+".hex")
		enc := g.entry.Append(nil)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, formatGolden(g.about, enc), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./replication/wire -run TestGoldenEntries -update to create it)", err)
		}
		want, err := parseGolden(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !bytes.Equal(enc, want) {
			t.Errorf("%s: the encoding changed: the log format is frozen; add a new op code or bump EntryVersion\n got %x\nwant %x", path, enc, want)
		}
		// The pinned bytes decode to the entry and back.
		got, err := DecodeEntry(want)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if re := got.Append(nil); !bytes.Equal(re, want) {
			t.Errorf("%s: decode+encode of the golden bytes differs", path)
		}
	}
}
