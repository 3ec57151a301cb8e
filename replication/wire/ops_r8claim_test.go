package wire

import (
	"testing"

	"streamd/streams"
)

// r8claimSampleOps are samples of the XNACK / CLAIM / MAXCOUNT / MAXSIZE
// encodings (kept out of sampleOps, whose commands the every_op golden
// file pins).
func r8claimSampleOps() []Op {
	b := Base{DB: 3, Key: "stream:1"}
	rs := []ReadStream{{Key: "a", ID: streams.ID{Ms: 5, Seq: 1}}, {Key: "b", New: true}}
	return []Op{
		XReadGroup{DB: 1, Group: "g", Consumer: "c", Count: 10, Streams: rs, Claim: true, MinIdleMs: 0},
		XReadGroup{DB: 1, Group: "g", Consumer: "c", NoAck: true, Streams: rs, Claim: true, MinIdleMs: 60000, MaxCount: 5, MaxSize: 1 << 20},
		XReadGroup{DB: 0, Group: "g", Consumer: "c", Streams: rs, MaxSize: 100},
		XNack{Base: b, Group: "g", Mode: NackSilent, IDs: []streams.ID{{Ms: 1}, {Ms: 1}}, RetryCount: -1},
		XNack{Base: b, Group: "g", Mode: NackFatal, IDs: []streams.ID{{Ms: 2, Seq: 3}}, RetryCount: 0, Force: true},
		XNack{Base: b, Group: "g", Mode: NackFail, IDs: []streams.ID{{Ms: 2}}, RetryCount: 7},
		XRead{DB: 2, Count: 2, Streams: rs[:1], MaxCount: 3},
		XRead{DB: 2, Streams: rs[:1], MaxCount: 3, MaxSize: 4096},
		XRead{DB: 2, Streams: rs[:1], MaxSize: 1},
		XClaimWake{DB: 4, Group: "g", MinIdleMs: 500, Names: []string{"a", "b"}},
	}
}

// TestR8ClaimGolden pins the new encodings byte for byte (like
// TestGoldenEntries) and checks that an old XREADGROUP/XREAD still encodes
// as before (no flag bit, op 25).
func TestR8ClaimGolden(t *testing.T) {
	checkGoldenEntry(t, "r8claim_ops", "XREADGROUP CLAIM/MAXCOUNT/MAXSIZE, XNACK, then an Exec of XREAD with caps and XClaimWake",
		sampleEntry(1700000005000, 2, r8claimSampleOps()))
	old := AppendOp(nil, XRead{DB: 7, Streams: []ReadStream{{Key: "a"}}})
	if opCode(old[0]) != opXRead {
		t.Fatalf("an XREAD without caps encodes as op %d", old[0])
	}
	rg := AppendOp(nil, XReadGroup{Group: "g", Consumer: "c", Streams: []ReadStream{{Key: "a", New: true}}})
	if rg[1] != 0 {
		t.Fatalf("an XREADGROUP without new options has flags %#x", rg[1])
	}
}

// TestR8ClaimMalformed: presence bits on default values and unknown modes
// are refused, so the encoding stays canonical.
func TestR8ClaimMalformed(t *testing.T) {
	checkMalformed(t, []malformedOp{
		{name: "xread op 52 without caps", op: []byte{byte(opXReadMax), 0, 0, 0, 0}},
		{name: "xreadgroup maxcount 0", op: append(AppendOp(nil, XReadGroup{Group: "g", Consumer: "c"})[:1], append([]byte{4}, append(AppendOp(nil, XReadGroup{Group: "g", Consumer: "c"})[2:], 0)...)...)},
		{name: "xnack mode 3", op: []byte{byte(opXNack), 0, 0, 0, 1, 'g', 3, 0}},
		{name: "xnack retrycount -1 flagged", op: []byte{byte(opXNack), 2, 0, 0, 1, 'g', 0, 0, 1}},
	})
}
