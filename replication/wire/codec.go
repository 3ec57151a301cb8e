package wire

// The log entry codec (DESIGN §4). An Entry is one Raft log entry: a batch
// of Commands applied with one time. The format is hand-rolled (no
// reflection) and canonical: every byte string DecodeEntry accepts
// re-encodes to exactly the same bytes, which the fuzz test checks.
//
//	entry   = version:byte(=EntryVersion) nowMs:uvarint count:uvarint op*count
//	op      = code:byte fields            (see codec_ops.go for each op's fields)
//	uvarint = encoding/binary's unsigned varint, minimal length only
//	varint  = zig-zag varint (int64 fields, -1 sentinels cost one byte)
//	string  = len:uvarint bytes
//	ID      = ms:uvarint seq:uvarint
//
// Booleans and "optional field present" bits of an op are packed into one
// flags byte; unknown bits, presence bits on a default value, non-minimal
// varints and trailing bytes are refused as malformed.
//
// Decoded values never alias the input: strings are copied by conversion and
// XADD's field/value slices point into one fresh buffer per op, so Raft may
// reuse its buffers after DecodeEntry returns.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"streamd/streams"
)

// EntryVersion is the format version written as an entry's first byte.
// DecodeEntry refuses any other version.
const EntryVersion = 1

// Entry is one Raft log entry: a batch of commands applied in order with one
// time, NowMs (the leader's clock; the FSM clamps it to never go backwards).
type Entry struct {
	NowMs int64
	Cmds  []Command
}

// Errors wrapped by DecodeEntry and DecodeOp; test with errors.Is. The full
// error text says where and what (entry command index, op name, field).
var (
	// ErrVersion: the entry's version byte is not EntryVersion.
	ErrVersion = errors.New("unsupported entry version")
	// ErrTruncated: the input ends before the value being read.
	ErrTruncated = errors.New("truncated")
	// ErrUnknownOp: an op code this build does not know.
	ErrUnknownOp = errors.New("unknown op code")
	// ErrMalformed: a value no encoder writes (bad flags, out-of-range enum,
	// non-minimal varint, trailing bytes, a query where a command must be).
	ErrMalformed = errors.New("malformed")
)

// opCode is the first byte of an encoded op. The numbers are part of the
// on-disk format: NEVER renumber or reuse one; only ever append new codes at
// the end of this block (and to opNames).
type opCode byte

const (
	_ opCode = 0 // reserved: never written, so a zeroed byte is no op

	// Commands.
	opXAdd                 opCode = 1
	opXDel                 opCode = 2
	opXTrim                opCode = 3
	opXSetID               opCode = 4
	opXGroupCreate         opCode = 5
	opXGroupSetID          opCode = 6
	opXGroupDestroy        opCode = 7
	opXGroupCreateConsumer opCode = 8
	opXGroupDelConsumer    opCode = 9
	opXReadGroup           opCode = 10
	opXAck                 opCode = 11
	opXClaim               opCode = 12
	opXAutoClaim           opCode = 13
	opDel                  opCode = 14
	opRename               opCode = 15
	opFlushDB              opCode = 16
	opFlushAll             opCode = 17
	opExpire               opCode = 18
	opPersist              opCode = 19
	opExpired              opCode = 20
	opConfigSet            opCode = 21
	opExec                 opCode = 22

	// Queries (only inside an Exec: reads are never logged on their own).
	opXRange         opCode = 23
	opXLen           opCode = 24
	opXRead          opCode = 25
	opLastIDs        opCode = 26
	opXPending       opCode = 27
	opXInfoStream    opCode = 28
	opXInfoGroups    opCode = 29
	opXInfoConsumers opCode = 30
	opExists         opCode = 31
	opType           opCode = 32
	opKeysMatch      opCode = 33
	opScan           opCode = 34
	opDBSize         opCode = 35
	opTTL            opCode = 36
	opKeyspaceInfo   opCode = 37
	opExpiredKeys    opCode = 38

	// Keyspace administration (COPY, RESTORE, SWAPDB; DUMP, RANDOMKEY,
	// MEMORY USAGE).
	opCopy        opCode = 39
	opRestore     opCode = 40
	opSwapDB      opCode = 41
	opDump        opCode = 42
	opRandomKey   opCode = 43
	opMemoryUsage opCode = 44

	// ACL users (commands).
	opACLSetUser opCode = 45
	opACLDelUser opCode = 46
	opACLLoad    opCode = 47

	// The engine level switch (snapv2).
	opEngineLevel opCode = 48
	// Redis 8.2 reference-aware deletes (XDELEX, XACKDEL).
	opXDelEx  opCode = 49
	opXAckDel opCode = 50
	// Idempotent production (XCFGSET, XIDMPRECORD, the iid expiry sweep).
	opXCfgSet     opCode = 54
	opXIDMPRecord opCode = 55
	opIDMPExpired opCode = 56
	// Redis 8.4-8.10 consumer-group reads (ops_r8claim.go): XNACK, XREAD
	// with MAXCOUNT/MAXSIZE, a blocked CLAIM read's wake-up time.
	opXNack      opCode = 51
	opXReadMax   opCode = 52
	opXClaimWake opCode = 53
	// Retention and orphan-group expiry sweeps (ops_retention.go; 61 is
	// reserved for them).
	opRetentionSweep opCode = 59
	opGroupsExpired  opCode = 60
	// Per-group broker settings (issue #15, ops_xgroupconfig.go): XGROUP
	// CONFIG, its read form, a blocked read's visibility wake-up time.
	opXGroupConfig    opCode = 62
	opXGroupConfigGet opCode = 63
	opXVisibilityWake opCode = 64

	// New codes go here, numbered on from the last one.
)

// opNames names each code in error messages.
var opNames = [...]string{
	opXAdd: "XAdd", opXDel: "XDel", opXTrim: "XTrim", opXSetID: "XSetID",
	opXGroupCreate: "XGroupCreate", opXGroupSetID: "XGroupSetID",
	opXGroupDestroy: "XGroupDestroy", opXGroupCreateConsumer: "XGroupCreateConsumer",
	opXGroupDelConsumer: "XGroupDelConsumer", opXReadGroup: "XReadGroup", opXAck: "XAck",
	opXClaim: "XClaim", opXAutoClaim: "XAutoClaim", opDel: "Del", opRename: "Rename",
	opFlushDB: "FlushDB", opFlushAll: "FlushAll", opExpire: "Expire", opPersist: "Persist",
	opExpired: "Expired", opConfigSet: "ConfigSet", opExec: "Exec",
	opXRange: "XRange", opXLen: "XLen", opXRead: "XRead", opLastIDs: "LastIDs",
	opXPending: "XPending", opXInfoStream: "XInfoStream", opXInfoGroups: "XInfoGroups",
	opXInfoConsumers: "XInfoConsumers", opExists: "Exists", opType: "Type",
	opKeysMatch: "KeysMatch", opScan: "Scan", opDBSize: "DBSize", opTTL: "TTL",
	opKeyspaceInfo: "KeyspaceInfo", opExpiredKeys: "ExpiredKeys",
	opCopy: "Copy", opRestore: "Restore", opSwapDB: "SwapDB", opDump: "Dump",
	opRandomKey: "RandomKey", opMemoryUsage: "MemoryUsage",
	opACLSetUser: "ACLSetUser", opACLDelUser: "ACLDelUser", opACLLoad: "ACLLoad",
	opEngineLevel: "EngineLevel",
	opXDelEx:      "XDelEx", opXAckDel: "XAckDel",
	opXCfgSet: "XCfgSet", opXIDMPRecord: "XIDMPRecord", opIDMPExpired: "IDMPExpired",
	opXNack: "XNack", opXReadMax: "XRead", opXClaimWake: "XClaimWake",
	opRetentionSweep: "RetentionSweep", opGroupsExpired: "GroupsExpired",
	opXGroupConfig: "XGroupConfig", opXGroupConfigGet: "XGroupConfigGet", opXVisibilityWake: "XVisibilityWake",
}

func (c opCode) String() string {
	if int(c) < len(opNames) && opNames[c] != "" {
		return opNames[c]
	}
	return "op " + strconv.Itoa(int(c))
}

// maxExecDepth bounds Exec nesting on decode (the server never nests EXEC;
// the bound keeps hostile input from recursing without limit).
const maxExecDepth = 8

// Append appends the entry's encoding to dst and returns the extended slice.
// It allocates nothing when dst has room. It panics on an op type the codec
// does not know (a programming error the tests catch).
func (e Entry) Append(dst []byte) []byte {
	dst = append(dst, EntryVersion)
	dst = binary.AppendUvarint(dst, uint64(e.NowMs))
	dst = binary.AppendUvarint(dst, uint64(len(e.Cmds)))
	for _, c := range e.Cmds {
		dst = AppendOp(dst, c)
	}
	return dst
}

// DecodeEntry decodes one entry written by Entry.Append. It never panics; on
// bad input it returns an error wrapping ErrVersion, ErrTruncated,
// ErrUnknownOp or ErrMalformed whose text names the command index, the op
// and what is wrong. The result does not alias b.
func DecodeEntry(b []byte) (Entry, error) { return decodeEntry(b, false) }

// CheckEntry reports what DecodeEntry would, without keeping what it
// decodes: an XADD's field values are checked, not copied. A restart
// checks every entry of the log before raft replays (and decodes) them.
func CheckEntry(b []byte) error {
	_, err := decodeEntry(b, true)
	return err
}

// decodeEntry is DecodeEntry; with check set it returns no commands.
func decodeEntry(b []byte, check bool) (Entry, error) {
	if len(b) == 0 {
		return Entry{}, fmt.Errorf("wire: entry: %w: empty", ErrTruncated)
	}
	if b[0] != EntryVersion {
		return Entry{}, fmt.Errorf("wire: entry: %w %d (this build reads version %d)", ErrVersion, b[0], EntryVersion)
	}
	r := reader{b: b[1:], check: check}
	e := Entry{NowMs: int64(r.uvarint())}
	n := r.count(1)
	if r.err != nil {
		return Entry{}, fmt.Errorf("wire: entry header: %w", r.err)
	}
	if n > 0 && !check {
		e.Cmds = make([]Command, 0, n)
	}
	for i := 0; i < n; i++ {
		code := opCode(r.peek())
		op := r.op(0)
		if r.err != nil {
			return Entry{}, fmt.Errorf("wire: entry command %d of %d: %w", i+1, n, r.err)
		}
		cmd, ok := op.(Command)
		if !ok {
			return Entry{}, fmt.Errorf("wire: entry command %d of %d: %w: %v is a query, not a command", i+1, n, ErrMalformed, code)
		}
		if !check {
			e.Cmds = append(e.Cmds, cmd)
		}
	}
	if len(r.b) != 0 {
		return Entry{}, fmt.Errorf("wire: entry: %w: %d trailing bytes after %d commands", ErrMalformed, len(r.b), n)
	}
	return e, nil
}

// DecodeOp decodes one op written by AppendOp from the front of b and returns
// it with the rest of b (all of b on error). It never panics; errors are as
// DecodeEntry's. The op does not alias b. Queries decode too: the caller
// decides whether a Query is acceptable where it reads one.
func DecodeOp(b []byte) (Op, []byte, error) {
	r := reader{b: b}
	op := r.op(0)
	if r.err != nil {
		return nil, b, fmt.Errorf("wire: %w", r.err)
	}
	return op, r.b, nil
}

// ---- encoding primitives ----

func appendVarint(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

func appendInt(dst []byte, v int) []byte { return binary.AppendVarint(dst, int64(v)) }

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = appendString(dst, s)
	}
	return dst
}

func appendID(dst []byte, id streams.ID) []byte {
	dst = binary.AppendUvarint(dst, id.Ms)
	return binary.AppendUvarint(dst, id.Seq)
}

func appendIDs(dst []byte, ids []streams.ID) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ids)))
	for _, id := range ids {
		dst = appendID(dst, id)
	}
	return dst
}

// bit returns mask when b is true, else 0.
func bit(b bool, mask byte) byte {
	if b {
		return mask
	}
	return 0
}

// ---- decoding primitives ----

// reader consumes an encoded op. The first error sticks: after it every read
// returns a zero value, so decoders check r.err once at the end.
type reader struct {
	b   []byte
	err error
	// last is the last string str decoded: a string equal to it is
	// returned as the same string, so a batch of commands on one key (a
	// pipeline of XADDs) allocates the key once per entry, not per command.
	last string
	// check: the values byteStrings reads are checked, not copied (nil is
	// returned; see CheckEntry).
	check bool
	// vals and hdrs are the unused ends of the chunks byteStrings carves
	// values and their slice headers from: an entry of XADDs allocates a
	// few chunks, not two slices per command (a follower decodes every
	// entry it applies).
	vals []byte
	hdrs [][]byte
}

// Chunk sizes of byteStrings (at most what is left to read: the values
// and their count still to come cannot exceed that).
const (
	valsChunk = 4096
	hdrsChunk = 256
)

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *reader) truncated(what string) {
	r.fail(fmt.Errorf("%w: %s", ErrTruncated, what))
}

func (r *reader) malformed(format string, args ...any) {
	r.fail(fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...)))
}

// peek returns the next byte without consuming it, 0 at the end.
func (r *reader) peek() byte {
	if len(r.b) == 0 {
		return 0
	}
	return r.b[0]
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.truncated("missing byte")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// flags reads a flags byte and refuses bits outside mask.
func (r *reader) flags(mask byte) byte {
	f := r.byte()
	if f&^mask != 0 {
		r.malformed("unknown flag bits %#02x", f&^mask)
		return 0
	}
	return f
}

// uvarint reads a minimal-length unsigned varint.
func (r *reader) uvarint() uint64 {
	var x uint64
	var s uint
	for i, c := range r.b {
		if i == binary.MaxVarintLen64-1 && c > 1 {
			r.malformed("uvarint overflows 64 bits")
			return 0
		}
		if c < 0x80 {
			if c == 0 && i > 0 {
				r.malformed("non-minimal uvarint")
				return 0
			}
			r.b = r.b[i+1:]
			return x | uint64(c)<<s
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	if r.err == nil {
		r.truncated("varint")
	}
	return 0
}

// varint reads a zig-zag varint.
func (r *reader) varint() int64 {
	ux := r.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

// int reads a varint that must fit an int.
func (r *reader) int() int {
	v := r.varint()
	if int64(int(v)) != v {
		r.malformed("%d does not fit an int", v)
		return 0
	}
	return int(v)
}

// count reads an element count; every element takes at least minSize bytes,
// so a count the rest of the input cannot hold is refused before anything is
// allocated for it.
func (r *reader) count(minSize int) int {
	n := r.uvarint()
	if r.err != nil {
		return 0
	}
	if n > uint64(len(r.b)/minSize) {
		r.truncated(fmt.Sprintf("count %d with %d bytes left", n, len(r.b)))
		return 0
	}
	return int(n)
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.truncated(fmt.Sprintf("string of %d bytes with %d left", n, len(r.b)))
		return ""
	}
	s := r.last
	if string(r.b[:n]) != s { // the comparison does not allocate
		s = string(r.b[:n])
		r.last = s
	}
	r.b = r.b[n:]
	return s
}

func (r *reader) strs() []string {
	n := r.count(1)
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.str()
	}
	if r.err != nil {
		return nil
	}
	return ss
}

func (r *reader) id() streams.ID {
	ms := r.uvarint()
	return streams.ID{Ms: ms, Seq: r.uvarint()}
}

func (r *reader) ids() []streams.ID {
	n := r.count(2)
	if n == 0 {
		return nil
	}
	ids := make([]streams.ID, n)
	for i := range ids {
		ids[i] = r.id()
	}
	if r.err != nil {
		return nil
	}
	return ids
}

// byteStrings reads a count and that many length-prefixed byte strings, all
// copied into the reader's current chunk of bytes, their slice headers
// taken from its chunk of headers. Each result has its capacity capped at
// its length, so an append to one cannot overwrite the next, nor the list
// grow into the next command's.
func (r *reader) byteStrings() [][]byte {
	n := r.count(1)
	if n == 0 || r.err != nil {
		return nil
	}
	// First pass: validate every length and add them up.
	scan := reader{b: r.b}
	total := 0
	for i := 0; i < n; i++ {
		l := scan.uvarint()
		if scan.err != nil {
			r.fail(scan.err)
			return nil
		}
		if l > uint64(len(scan.b)) {
			r.truncated(fmt.Sprintf("value %d of %d bytes with %d left", i+1, l, len(scan.b)))
			return nil
		}
		scan.b = scan.b[l:]
		total += int(l)
	}
	if r.check {
		r.b = scan.b
		return nil
	}
	// Second pass: copy; the lengths are known to be valid.
	if len(r.vals) < total {
		r.vals = make([]byte, max(total, min(len(r.b), valsChunk)))
	}
	buf := r.vals[:total:total]
	r.vals = r.vals[total:]
	if len(r.hdrs) < n {
		r.hdrs = make([][]byte, max(n, min(len(r.b), hdrsChunk)))
	}
	out := r.hdrs[:n:n]
	r.hdrs = r.hdrs[n:]
	off := 0
	for i := range out {
		l := int(r.uvarint())
		copy(buf[off:], r.b[:l])
		out[i] = buf[off : off+l : off+l]
		r.b = r.b[l:]
		off += l
	}
	return out
}
