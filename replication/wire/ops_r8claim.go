package wire

import "streamd/streams"

// Redis 8.4–8.10 consumer-group reads: XNACK (8.8), the wake-up time of a
// blocked XREADGROUP ... CLAIM, and the encodings of XREADGROUP's CLAIM /
// MAXCOUNT / MAXSIZE and XREAD's MAXCOUNT / MAXSIZE (8.10).
//
//	XReadGroup flags: bit 0 NoAck, bit 1 Claim (trailing MinIdleMs:v),
//	           bit 2 MaxCount≠0 (trailing MaxCount:v), bit 3 MaxSize≠0
//	           (trailing MaxSize:v); the trailing fields follow streams, in
//	           that order, so every older entry decodes as before.
//	XRead      without caps: op 25 as before; with a cap: op 52,
//	           f{MaxCount≠0, MaxSize≠0} db:v Count:v streams [MaxCount:v] [MaxSize:v]
//	XNack      f{Force, RetryCount≠-1} Base Group Mode:byte ids [RetryCount:v]
//	XClaimWake db:v Group MinIdleMs:v names:strings

// NackMode is XNACK's mode word.
type NackMode byte

// XNACK's modes, as encoded (on-disk values: never renumber).
const (
	NackSilent NackMode = 0
	NackFail   NackMode = 1
	NackFatal  NackMode = 2
)

// XNack is XNACK key group mode IDS n id… [RETRYCOUNT c] [FORCE] (Redis
// 8.8). Result: int64 IDs NACKed.
type XNack struct {
	Base
	Group      string
	Mode       NackMode
	IDs        []streams.ID
	RetryCount int64 // -1 when not given
	Force      bool
}

// XClaimWake asks when a blocked XREADGROUP ... CLAIM min-idle-time on the
// keys should retry: the earliest time, over the group's PEL in each
// stream, at which the oldest pending entry is idle for MinIdleMs (Redis's
// beforeSleep check). Result: int64 unix ms, or -1 when no stream has a
// pending entry (nor the group).
type XClaimWake struct {
	DB        int
	Group     string
	MinIdleMs int64
	Names     []string
}

func (XNack) command()    {}
func (XClaimWake) query() {}

// Keys returns the stream.
func (q XClaimWake) Keys() []string { return q.Names }

// Database returns the database.
func (q XClaimWake) Database() int { return q.DB }

// effects: entries given back wake the clients blocked on the key (a
// blocked XREADGROUP ... CLAIM can take them); like XCLAIM, no WATCH is
// aborted.
func (c XNack) effects(res any, e Effects) Effects {
	if count(res) > 0 {
		e.Ready = append(e.Ready, c.Key)
	}
	return e
}

func appendXNack(dst []byte, o XNack) []byte {
	dst = append(dst, byte(opXNack), bit(o.Force, 1)|bit(o.RetryCount != -1, 2))
	dst = appendBase(dst, o.Base)
	dst = appendString(dst, o.Group)
	dst = append(dst, byte(o.Mode))
	dst = appendIDs(dst, o.IDs)
	if o.RetryCount != -1 {
		dst = appendVarint(dst, o.RetryCount)
	}
	return dst
}

func (r *reader) xnack() Op {
	f := r.flags(3)
	o := XNack{Force: f&1 != 0, Base: r.base(), RetryCount: -1}
	o.Group = r.str()
	o.Mode = NackMode(r.byte())
	if r.err == nil && o.Mode > NackFatal {
		r.malformed("XNACK mode %d", o.Mode)
	}
	o.IDs = r.ids()
	if f&2 != 0 {
		if o.RetryCount = r.varint(); r.err == nil && o.RetryCount == -1 {
			r.malformed("RETRYCOUNT -1 flagged present")
		}
	}
	return o
}

// readGroupFlags is XReadGroup's flags byte.
func readGroupFlags(o XReadGroup) byte {
	return bit(o.NoAck, 1) | bit(o.Claim, 2) | bit(o.MaxCount != 0, 4) | bit(o.MaxSize != 0, 8)
}

// appendReadCaps appends the trailing fields of XReadGroup's bits 1-3 (or
// XRead's op-52 bits 0-1, shifted by the caller).
func appendReadCaps(dst []byte, claim bool, minIdle, maxCount, maxSize int64) []byte {
	if claim {
		dst = appendVarint(dst, minIdle)
	}
	if maxCount != 0 {
		dst = appendVarint(dst, maxCount)
	}
	if maxSize != 0 {
		dst = appendVarint(dst, maxSize)
	}
	return dst
}

// readCaps reads the trailing fields appendReadCaps wrote.
func (r *reader) readCaps(claim, maxCount, maxSize bool) (minIdle, mc, ms int64) {
	if claim {
		minIdle = r.varint()
	}
	if maxCount {
		if mc = r.varint(); r.err == nil && mc == 0 {
			r.malformed("MAXCOUNT 0 flagged present")
		}
	}
	if maxSize {
		if ms = r.varint(); r.err == nil && ms == 0 {
			r.malformed("MAXSIZE 0 flagged present")
		}
	}
	return minIdle, mc, ms
}

func appendXRead(dst []byte, o XRead) []byte {
	if o.MaxCount == 0 && o.MaxSize == 0 {
		dst = append(dst, byte(opXRead))
	} else {
		dst = append(dst, byte(opXReadMax), bit(o.MaxCount != 0, 1)|bit(o.MaxSize != 0, 2))
	}
	dst = appendInt(dst, o.DB)
	dst = appendVarint(dst, o.Count)
	dst = appendReadStreams(dst, o.Streams)
	return appendReadCaps(dst, false, 0, o.MaxCount, o.MaxSize)
}

func (r *reader) xreadMax() Op {
	f := r.flags(3)
	if r.err == nil && f == 0 {
		r.malformed("XRead without caps under op %d", opXReadMax)
	}
	o := XRead{DB: r.int()}
	o.Count = r.varint()
	o.Streams = r.readStreams()
	_, o.MaxCount, o.MaxSize = r.readCaps(false, f&1 != 0, f&2 != 0)
	return o
}

func appendXClaimWake(dst []byte, o XClaimWake) []byte {
	dst = append(dst, byte(opXClaimWake))
	dst = appendInt(dst, o.DB)
	dst = appendString(dst, o.Group)
	dst = appendVarint(dst, o.MinIdleMs)
	return appendStrings(dst, o.Names)
}

func (r *reader) xclaimWake() Op {
	o := XClaimWake{DB: r.int()}
	o.Group = r.str()
	o.MinIdleMs = r.varint()
	o.Names = r.strs()
	return o
}
