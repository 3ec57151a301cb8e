package state

import (
	"encoding/binary"
	"hash/crc32"
	"hash/crc64"
	"testing"

	"streamd/replication/wire"
)

// resealDump frames records (the first byte is the record count the
// trailer claims) as a snapshot body with valid checksums and gives it a
// valid footer, so the fuzzer reaches the record decoder.
func resealDump(in []byte) []byte {
	var count byte
	if len(in) > 0 {
		count, in = in[0], in[1:]
	}
	var body []byte
	if len(in) > 0 {
		if len(in) > frameMax {
			in = in[:frameMax]
		}
		body = binary.BigEndian.AppendUint32(body, uint32(len(in)))
		body = binary.BigEndian.AppendUint32(body, crc32.Checksum(in, castagnoli))
		body = append(body, in...)
	}
	body = binary.BigEndian.AppendUint32(body, 0)
	body = binary.BigEndian.AppendUint64(body, uint64(count))
	body = binary.BigEndian.AppendUint64(body, uint64(len(in)))
	body = binary.BigEndian.AppendUint32(body, crc32.Checksum(in, castagnoli))
	p := binary.LittleEndian.AppendUint16(body, DumpVersion)
	return binary.LittleEndian.AppendUint64(p, crc64.Checksum(p, crc64Table))
}

// dumpRecords is a payload's records with their count in front: the
// fuzzer's form of it (resealDump's input).
func dumpRecords(p []byte, records byte) []byte {
	n := binary.BigEndian.Uint32(p)
	return append([]byte{records}, p[8:8+n]...)
}

// FuzzRestorePayload feeds RESTORE arbitrary payload bodies with a valid
// version and checksum: Apply (which runs on every replica) must answer
// OK or an error, never panic, and a restored key must dump again to a
// payload that restores to the same bytes.
func FuzzRestorePayload(f *testing.F) {
	ks := New()
	groupKey(&testing.T{}, ks, 0, "s")
	p, _ := ks.Query(wire.Dump{Base: base("s")}, 3000)
	payload := p.([]byte)
	// Records: the key, its three nodes' worth (one node here) and two
	// groups.
	f.Add(dumpRecords(payload, 4))
	if got := resealDump(dumpRecords(payload, 4)); string(got) != string(payload) {
		f.Fatalf("resealDump does not rebuild the payload:\n%x\n%x", got, payload)
	}
	// A stream with IDMP state: the key, its node and its IDMP record.
	idmp := New()
	for i, pid := range []string{"b", "a", "b"} {
		x := xadd("i", "*")
		x.IDMP = wire.IDMP{PID: pid, IID: string(rune('x' + i))}
		idmp.Apply(x, int64(1000+i))
	}
	p, _ = idmp.Query(wire.Dump{Base: base("i")}, 3000)
	f.Add(dumpRecords(p.([]byte), 3))
	if got := resealDump(dumpRecords(p.([]byte), 3)); string(got) != string(p.([]byte)) {
		f.Fatalf("resealDump does not rebuild the IDMP payload")
	}
	// A stream with every issue #15 setting: its ACKLEVEL, retention and
	// group config records.
	broker := dumpOf(&testing.T{}, brokerKeyspace(&testing.T{}), 0, "s")
	records := binary.BigEndian.Uint64(broker[len(broker)-dumpFooterLen-20:])
	f.Add(dumpRecords(broker, byte(records)))
	if got := resealDump(dumpRecords(broker, byte(records))); string(got) != string(broker) {
		f.Fatalf("resealDump does not rebuild the broker settings payload")
	}
	f.Add([]byte{})
	f.Add([]byte{1, 3, 0, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		ks := New()
		_, err := ks.Apply(wire.Restore{Base: base("k"), Payload: resealDump(body)}, 1000)
		if err != nil {
			return
		}
		d, _ := ks.Query(wire.Dump{Base: base("k")}, 1000)
		again, ok := d.([]byte)
		if !ok {
			t.Fatal("restored key cannot be dumped")
		}
		if _, err := ks.Apply(wire.Restore{Base: base("k2"), Payload: again}, 1000); err != nil {
			t.Fatalf("a dump of a restored key does not restore: %v", err)
		}
	})
}
