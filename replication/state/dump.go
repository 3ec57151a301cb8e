package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc64"
	"slices"
)

// DUMP's payload: one key's value (its stream, consumer groups, consumers
// and pending entries; no name, no deadline) in the snapshot's record
// format (a key record with an empty name and its node and group records,
// framed and checksummed as a snapshot body: snapshot.go), followed, as
// Redis ends its payloads with the RDB version and a CRC-64, by
//
//	version  u16 little-endian (DumpVersion)
//	crc      u64 little-endian: CRC-64/ECMA of everything before it
//
// Redis's payloads carry an RDB version of at most 11 and a CRC-64/Jones:
// they fail VerifyDump here, and ours (version 0x5301) fail Redis's check,
// both with "DUMP payload version or checksum are wrong".

// DumpVersion is the version in a DUMP payload's footer ('S' = streamd,
// format 1).
const DumpVersion = 0x5301

// dumpFooterLen is the footer's length: version and CRC.
const dumpFooterLen = 10

var crc64Table = crc64.MakeTable(crc64.ECMA)

// ErrDumpPayload is RESTORE's answer to a payload whose version or checksum
// is not this server's.
var ErrDumpPayload = errors.New("ERR DUMP payload version or checksum are wrong")

// ErrBadDumpData is RESTORE's answer to a payload that passes the checksum
// but does not decode.
var ErrBadDumpData = errors.New("ERR Bad data format")

// dumpObject encodes o as a DUMP payload.
func dumpObject(o *Object) []byte {
	var buf bytes.Buffer
	// The payload keeps version 1 node records (its own version is 0x5301).
	sw := &snapWriter{f: newFrameWriter(&buf), version: snapshotVersion1}
	sw.key("", o, 0, false)
	sw.b = append(sw.b[:0], tagEnd)
	sw.f.write(sw.b)
	_ = sw.f.finish(sw.records) // a bytes.Buffer does not fail
	p := binary.LittleEndian.AppendUint16(buf.Bytes(), DumpVersion)
	return binary.LittleEndian.AppendUint64(p, crc64.Checksum(p, crc64Table))
}

// VerifyDump checks a DUMP payload's version and checksum, as Redis's
// verifyDumpPayload: ErrDumpPayload if either is wrong.
func VerifyDump(p []byte) error {
	if len(p) < dumpFooterLen {
		return ErrDumpPayload
	}
	foot := p[len(p)-dumpFooterLen:]
	if binary.LittleEndian.Uint16(foot) != DumpVersion {
		return ErrDumpPayload
	}
	if crc64.Checksum(p[:len(p)-8], crc64Table) != binary.LittleEndian.Uint64(foot[2:]) {
		return ErrDumpPayload
	}
	return nil
}

// undumpObject decodes a DUMP payload into a new object: ErrDumpPayload
// for a wrong version or checksum, ErrBadDumpData for one that does not
// decode.
func undumpObject(p []byte) (*Object, error) {
	if err := VerifyDump(p); err != nil {
		return nil, err
	}
	sr := &snapReader{f: newFrameReader(bytes.NewReader(p[:len(p)-dumpFooterLen])), version: snapshotVersion1}
	d := newDatabase()
	sr.key(d)
	if t := sr.byte(); sr.err == nil && t != tagEnd {
		sr.badf("expected the end, found tag %d", t)
	}
	if sr.err != nil {
		return nil, ErrBadDumpData
	}
	if err := sr.f.finish(sr.records); err != nil {
		return nil, ErrBadDumpData
	}
	o := d.keys[""]
	if o == nil || len(d.expires) != 0 {
		return nil, ErrBadDumpData
	}
	if err := o.Groups.Check(); err != nil {
		return nil, ErrBadDumpData
	}
	return o, nil
}

// DumpDeadLetterKeys returns the dead-letter streams (XGROUP CONFIG
// DEADLETTER) the groups of a DUMP payload name, in group order without
// repeats; nil for a payload without any or that does not restore. RESTORE
// routes them with its key, as XGROUP CONFIG routes its DEADLETTER: a
// group must not dead-letter into another shard's (cluster mode: slot's)
// key.
func DumpDeadLetterKeys(p []byte) []string {
	o, err := undumpObject(p)
	if err != nil {
		return nil
	}
	var out []string
	for _, g := range o.Groups.All() {
		if k := g.Config.DeadLetterKey; k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
