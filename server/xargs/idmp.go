package xargs

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"

	"streamd/replication/wire"
	"streamd/server/resp"
)

// Errors of XADD's IDMP/IDMPAUTO, XCFGSET and XIDMPRECORD, in Redis 8.6's
// words.
const (
	ErrIDMPTwice   = resp.ErrorReply("ERR syntax error, IDMP/IDMPAUTO specified multiple times")
	ErrIDMPAutoPID = resp.ErrorReply("ERR syntax error, IDMPAUTO requires a non-empty producer ID")
	ErrIDMPPID     = resp.ErrorReply("ERR syntax error, IDMP requires a non-empty producer ID")
	ErrIDMPIID     = resp.ErrorReply("ERR syntax error, IDMP requires a non-empty idempotent ID")
	ErrIDMPAutoID  = resp.ErrorReply("ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs")

	ErrCfgDuration      = resp.ErrorReply("ERR IDMP-DURATION must be between 1 and 86400 seconds")
	ErrCfgMaxSize       = resp.ErrorReply("ERR IDMP-MAXSIZE must be between 1 and 10000 entries")
	ErrCfgDurationTwice = resp.ErrorReply("ERR IDMP-DURATION specified multiple times")
	ErrCfgMaxSizeTwice  = resp.ErrorReply("ERR IDMP-MAXSIZE specified multiple times")
	ErrCfgNone          = resp.ErrorReply("ERR At least one parameter must be specified")
	// ACKLEVEL (issue #15, not Redis): same style as the IDMP options.
	ErrCfgAckLevel      = resp.ErrorReply("ERR ACKLEVEL must be QUORUM or LEADER")
	ErrCfgAckLevelTwice = resp.ErrorReply("ERR ACKLEVEL specified multiple times")

	ErrRecordPID = resp.ErrorReply("ERR producer ID must be non-empty")
	ErrRecordIID = resp.ErrorReply("ERR idempotent ID must be non-empty")
)

// idmpClause is XADD's IDMP pid iid / IDMPAUTO pid as parsed.
type idmpClause struct {
	given bool
	auto  bool
	pid   []byte
	iid   []byte
}

// parseIDMP parses IDMP/IDMPAUTO at args[i] (the caller checked the name
// and that enough arguments follow) and returns the index of its last
// argument.
func (m *idmpClause) parse(args [][]byte, i int, auto bool) (int, resp.Reply) {
	if m.given {
		return i, ErrIDMPTwice
	}
	m.given, m.auto, m.pid = true, auto, args[i+1]
	if auto {
		if len(m.pid) == 0 {
			return i, ErrIDMPAutoPID
		}
		return i + 1, nil
	}
	m.iid = args[i+2]
	if len(m.pid) == 0 {
		return i, ErrIDMPPID
	}
	if len(m.iid) == 0 {
		return i, ErrIDMPIID
	}
	return i + 2, nil
}

// clause returns the log's IDMP clause: IDMPAUTO's iid is computed here,
// on the node that takes the command, and logged, so every replica records
// the same iid whatever build replays the log.
func (m idmpClause) clause(fields [][]byte) wire.IDMP {
	if !m.given {
		return wire.IDMP{}
	}
	if m.auto {
		return wire.IDMP{PID: string(m.pid), IID: IDMPAutoIID(fields)}
	}
	return wire.IDMP{PID: string(m.pid), IID: string(m.iid)}
}

// IDMPAutoIID is IDMPAUTO's idempotent ID of an entry's field-value pairs:
// 16 bytes that do not depend on the order of the pairs but do on the field
// names. It combines one 128-bit hash per pair as Redis 8.6 does
// (low = Σlow ^ rotl64(⊕high, 1), high = Σhigh ^ rotl64(⊕low, 1)), but the
// per-pair hash is SHA-256 (truncated to 128 bits) of field ‖ field length
// (8 bytes, little-endian) ‖ value, where Redis uses XXH3-128: the iids
// differ from Redis's, which matters only if they are exchanged with it.
func IDMPAutoIID(fields [][]byte) string {
	var sumLo, sumHi, xorLo, xorHi uint64
	h := sha256.New()
	var sum [sha256.Size]byte
	var n [8]byte
	for i := 0; i+1 < len(fields); i += 2 {
		h.Reset()
		h.Write(fields[i])
		binary.LittleEndian.PutUint64(n[:], uint64(len(fields[i])))
		h.Write(n[:])
		h.Write(fields[i+1])
		s := h.Sum(sum[:0])
		lo, hi := binary.LittleEndian.Uint64(s[0:8]), binary.LittleEndian.Uint64(s[8:16])
		sumLo += lo
		sumHi += hi
		xorLo ^= lo
		xorHi ^= hi
	}
	lo := sumLo ^ bits.RotateLeft64(xorHi, 1)
	hi := sumHi ^ bits.RotateLeft64(xorLo, 1)
	var out [16]byte
	binary.LittleEndian.PutUint64(out[0:8], lo)
	binary.LittleEndian.PutUint64(out[8:16], hi)
	return string(out[:])
}

// XCfgSet parses XCFGSET key [IDMP-DURATION duration] [IDMP-MAXSIZE
// maxsize] as xcfgsetCommand: each option once with a value, each value an
// integer in range, at least one option; the retention options (MAXLEN,
// MAXAGE, NONE, RETENTION-POLICY, GROUP-IDLE-EXPIRE: retention.go) may be
// mixed in. (Redis looks the key up first:
// the caller answers "no such key" before these errors.)
func XCfgSet(args [][]byte) (wire.XCfgSet, resp.Reply) {
	c := wire.XCfgSet{Base: key(args[1])}
	for i := 2; i < len(args); i += 2 {
		if n, r := retentionOption(&c.Ret, args[i:]); n > 0 {
			if r != nil {
				return c, r
			}
			i += n - 2
			continue
		}
		if i+1 >= len(args) {
			return c, resp.ErrSyntax
		}
		switch opt := args[i]; {
		case isOpt(opt, "IDMP-DURATION"):
			v, r := cfgInt(c.Duration != 0, args[i+1], 86400, ErrCfgDurationTwice, ErrCfgDuration)
			if r != nil {
				return c, r
			}
			c.Duration = v
		case isOpt(opt, "IDMP-MAXSIZE"):
			v, r := cfgInt(c.MaxSize != 0, args[i+1], 10000, ErrCfgMaxSizeTwice, ErrCfgMaxSize)
			if r != nil {
				return c, r
			}
			c.MaxSize = v
		case isOpt(opt, "ACKLEVEL"):
			if c.AckLevel != wire.AckDefault {
				return c, ErrCfgAckLevelTwice
			}
			l, ok := wire.ParseAckLevel(string(args[i+1]))
			if !ok {
				return c, ErrCfgAckLevel
			}
			c.AckLevel = l
		default:
			return c, resp.ErrSyntax
		}
	}
	if c.Duration == 0 && c.MaxSize == 0 && c.Ret.IsZero() && c.AckLevel == wire.AckDefault {
		return c, ErrCfgNone
	}
	return c, nil
}

// cfgInt parses the value of an XCFGSET IDMP option: twice when it was
// given already, Int's error, or bad when it is not in 1..max.
func cfgInt(given bool, val []byte, max int64, twice, bad resp.Reply) (int64, resp.Reply) {
	if given {
		return 0, twice
	}
	v, r := Int(val)
	if r != nil {
		return 0, r
	}
	if v < 1 || v > max {
		return 0, bad
	}
	return v, nil
}

// XIDMPRecord parses XIDMPRECORD key pid iid stream-id: the ID first, then
// the non-empty pid and iid, as xidmprecordCommand.
func XIDMPRecord(args [][]byte) (wire.XIDMPRecord, resp.Reply) {
	id, r := StrictID(args[4])
	if r != nil {
		return wire.XIDMPRecord{}, r
	}
	if len(args[2]) == 0 {
		return wire.XIDMPRecord{}, ErrRecordPID
	}
	if len(args[3]) == 0 {
		return wire.XIDMPRecord{}, ErrRecordIID
	}
	return wire.XIDMPRecord{Base: key(args[1]), PID: string(args[2]), IID: string(args[3]), ID: id}, nil
}
