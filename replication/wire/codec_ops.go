package wire

// Per-op encodings. After the op code byte come the fields below, in this
// order (f = flags byte, bits listed from bit 0; v = varint; u = uvarint;
// s = string; id = ID; [x] = present only when its flag bit is set; xs =
// count-prefixed list). Base is "db:v key:s".
//
//	XAdd                 f{NoMkStream,ID.Auto,ID.AutoSeq,ID.ID≠0,IDMP≠0} Base trim [ID.ID] fields:count-prefixed bytes
//	                     [IDMP.PID IDMP.IID]
//	XDel                 Base ids
//	XTrim                Base trim
//	XSetID               f{MaxDeletedID≠nil} Base LastID EntriesAdded:v [MaxDeletedID]
//	XGroupCreate         f{Dollar,MkStream} Base Group ID EntriesRead:v
//	XGroupSetID          f{Dollar} Base Group ID EntriesRead:v
//	XGroupDestroy        Base Group
//	XGroupCreateConsumer Base Group Consumer
//	XGroupDelConsumer    Base Group Consumer
//	XReadGroup           f{NoAck,Claim,MaxCount≠0,MaxSize≠0} db:v Group Consumer Count:v streams [MinIdleMs:v] [MaxCount:v] [MaxSize:v]
//	XNack, XClaimWake, XRead with caps (op 52): see ops_r8claim.go
//	XGroupConfig, XGroupConfigGet, XVisibilityWake: see ops_xgroupconfig.go
//	XAck                 Base Group ids
//	XClaim               f{Force,JustID,LastID≠nil} Base Group Consumer MinIdleMs:v ids IdleMs:v TimeMs:v RetryCount:v [LastID]
//	XAutoClaim           f{JustID} Base Group Consumer MinIdleMs:v Start Count:v
//	Del, Expired         db:v names:strings
//	Rename               f{NX} db:v Src Dst
//	FlushDB              db:v
//	FlushAll             (nothing)
//	Expire               f{Relative} Base Ms:v Cond:byte
//	Persist              Base
//	ConfigSet            Name Value
//	Exec                 db:v count:u op*count
//	XRange               f{Rev} Base Start End Count:v
//	XLen, XInfoGroups, Type       Base
//	XRead                db:v Count:v streams
//	LastIDs, Exists      db:v names:strings
//	XPending             f{Summary} Base Group IdleMs:v Start End Count:v Consumer
//	XInfoStream          f{Full} Base Count:v
//	XInfoConsumers       Base Group
//	KeysMatch            db:v Pattern
//	Scan                 db:v Cursor:u Match Count:v Type
//	DBSize               db:v
//	TTL                  f{Millis,Abs} Base
//	KeyspaceInfo         (nothing)
//	ExpiredKeys          db:v Limit:v
//	Copy                 f{Replace} db:v Src DstDB:v Dst
//	Restore              f{Abs,Replace} Base TTLMs:v Payload:s
//	SwapDB               A:v B:v
//	Dump                 Base
//	RandomKey            db:v Seed:u
//	MemoryUsage          Base Samples:v
//	ACLSetUser           f{Replace} Name Rules:strings
//	ACLDelUser           Names:strings
//	ACLLoad              count:u (Name Rules:strings)*count
//	EngineLevel          Level:v
//	XDelEx               f{bits 0-1 Mode} Base ids
//	XAckDel              f{bits 0-1 Mode} Base Group ids
//	XCfgSet              f{Duration≠0,MaxSize≠0,AckLevel≠0,MaxLen,MaxAge,Policy,IdleExpire} Base [Duration:v] [MaxSize:v] [AckLevel:1]
//	                     [MaxLen:v] [MaxAge:v] [Policy:byte] [IdleExpire:v]
//	XIDMPRecord          Base PID IID ID
//	IDMPExpired          db:v names:strings
//	RetentionSweep       f{Full} db:v names:strings
//	GroupsExpired        db:v names:strings groups:strings
//
//	trim    = t:byte{bits 0-1 Strategy, 2 Approx, 3 MaxLen≠0, 4 MinID≠0, 5 Limit≠-1, 6-7 Ref} [MaxLen:v] [MinID] [Limit:v]
//
// Trim's Ref bits (KEEPREF 0, DELREF 1, ACKED 2) were unused before Redis
// 8.2's options, so every older entry decodes as KEEPREF, as before.
//	streams = count:u (f{New,Last} Key:s ID)*count

import (
	"encoding/binary"
	"fmt"

	"streamd/streams"
)

// Trim header bits.
const (
	trimStrategyMask = 0x03
	trimApprox       = 0x04
	trimHasMaxLen    = 0x08
	trimHasMinID     = 0x10
	trimHasLimit     = 0x20
	trimRefShift     = 6
	trimRefMask      = 0xc0
	trimMask         = 0xff
)

func appendBase(dst []byte, b Base) []byte {
	dst = appendInt(dst, b.DB)
	return appendString(dst, b.Key)
}

func appendTrim(dst []byte, t Trim) []byte {
	h := byte(t.Strategy)&trimStrategyMask | bit(t.Approx, trimApprox) |
		bit(t.MaxLen != 0, trimHasMaxLen) | bit(!t.MinID.IsZero(), trimHasMinID) |
		bit(t.Limit != -1, trimHasLimit) | byte(t.Ref)<<trimRefShift&trimRefMask
	dst = append(dst, h)
	if t.MaxLen != 0 {
		dst = appendVarint(dst, t.MaxLen)
	}
	if !t.MinID.IsZero() {
		dst = appendID(dst, t.MinID)
	}
	if t.Limit != -1 {
		dst = appendVarint(dst, t.Limit)
	}
	return dst
}

func appendReadStreams(dst []byte, ss []ReadStream) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = append(dst, bit(s.New, 1)|bit(s.Last, 2))
		dst = appendString(dst, s.Key)
		dst = appendID(dst, s.ID)
	}
	return dst
}

// AppendOp appends op's encoding (code byte and fields) to dst. Commands and
// Queries both encode, since an Exec carries both. It allocates nothing when
// dst has room. It panics on an op type the codec does not know: every type
// in ops.go has a case, which TestEveryOpTypeHasACodecCase enforces.
func AppendOp(dst []byte, op Op) []byte {
	switch o := op.(type) {
	// Commands.
	case XAdd:
		f := bit(o.NoMkStream, 1) | bit(o.ID.Auto, 2) | bit(o.ID.AutoSeq, 4) | bit(!o.ID.ID.IsZero(), 8) |
			bit(!o.IDMP.IsZero(), 16)
		dst = append(dst, byte(opXAdd), f)
		dst = appendBase(dst, o.Base)
		dst = appendTrim(dst, o.Trim)
		if !o.ID.ID.IsZero() {
			dst = appendID(dst, o.ID.ID)
		}
		dst = binary.AppendUvarint(dst, uint64(len(o.Fields)))
		for _, v := range o.Fields {
			dst = binary.AppendUvarint(dst, uint64(len(v)))
			dst = append(dst, v...)
		}
		if !o.IDMP.IsZero() {
			dst = appendString(dst, o.IDMP.PID)
			dst = appendString(dst, o.IDMP.IID)
		}
	case XDel:
		dst = append(dst, byte(opXDel))
		dst = appendBase(dst, o.Base)
		dst = appendIDs(dst, o.IDs)
	case XTrim:
		dst = append(dst, byte(opXTrim))
		dst = appendBase(dst, o.Base)
		dst = appendTrim(dst, o.Trim)
	case XSetID:
		dst = append(dst, byte(opXSetID), bit(o.MaxDeletedID != nil, 1))
		dst = appendBase(dst, o.Base)
		dst = appendID(dst, o.LastID)
		dst = appendVarint(dst, o.EntriesAdded)
		if o.MaxDeletedID != nil {
			dst = appendID(dst, *o.MaxDeletedID)
		}
	case XGroupCreate:
		dst = append(dst, byte(opXGroupCreate), bit(o.Dollar, 1)|bit(o.MkStream, 2))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
		dst = appendID(dst, o.ID)
		dst = appendVarint(dst, o.EntriesRead)
	case XGroupSetID:
		dst = append(dst, byte(opXGroupSetID), bit(o.Dollar, 1))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
		dst = appendID(dst, o.ID)
		dst = appendVarint(dst, o.EntriesRead)
	case XGroupDestroy:
		dst = append(dst, byte(opXGroupDestroy))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
	case XGroupCreateConsumer:
		dst = append(dst, byte(opXGroupCreateConsumer))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
		dst = appendString(dst, o.Consumer)
	case XGroupDelConsumer:
		dst = append(dst, byte(opXGroupDelConsumer))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
		dst = appendString(dst, o.Consumer)
	case XReadGroup:
		dst = append(dst, byte(opXReadGroup), readGroupFlags(o))
		dst = appendInt(dst, o.DB)
		dst = appendString(dst, o.Group)
		dst = appendString(dst, o.Consumer)
		dst = appendVarint(dst, o.Count)
		dst = appendReadStreams(dst, o.Streams)
		dst = appendReadCaps(dst, o.Claim, o.MinIdleMs, o.MaxCount, o.MaxSize)
	case XNack:
		dst = appendXNack(dst, o)
	case XAck:
		dst = append(dst, byte(opXAck))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
		dst = appendIDs(dst, o.IDs)
	case XClaim:
		dst = append(dst, byte(opXClaim), bit(o.Force, 1)|bit(o.JustID, 2)|bit(o.LastID != nil, 4))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
		dst = appendString(dst, o.Consumer)
		dst = appendVarint(dst, o.MinIdleMs)
		dst = appendIDs(dst, o.IDs)
		dst = appendVarint(dst, o.IdleMs)
		dst = appendVarint(dst, o.TimeMs)
		dst = appendVarint(dst, o.RetryCount)
		if o.LastID != nil {
			dst = appendID(dst, *o.LastID)
		}
	case XAutoClaim:
		dst = append(dst, byte(opXAutoClaim), bit(o.JustID, 1))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
		dst = appendString(dst, o.Consumer)
		dst = appendVarint(dst, o.MinIdleMs)
		dst = appendID(dst, o.Start)
		dst = appendVarint(dst, o.Count)
	case Del:
		dst = append(dst, byte(opDel))
		dst = appendInt(dst, o.DB)
		dst = appendStrings(dst, o.Names)
	case Rename:
		dst = append(dst, byte(opRename), bit(o.NX, 1))
		dst = appendInt(dst, o.DB)
		dst = appendString(dst, o.Src)
		dst = appendString(dst, o.Dst)
	case FlushDB:
		dst = append(dst, byte(opFlushDB))
		dst = appendInt(dst, o.DB)
	case FlushAll:
		dst = append(dst, byte(opFlushAll))
	case Expire:
		dst = append(dst, byte(opExpire), bit(o.Relative, 1))
		dst = appendBase(dst, o.Base)
		dst = appendVarint(dst, o.Ms)
		dst = append(dst, byte(o.Cond))
	case Persist:
		dst = append(dst, byte(opPersist))
		dst = appendBase(dst, o.Base)
	case Expired:
		dst = append(dst, byte(opExpired))
		dst = appendInt(dst, o.DB)
		dst = appendStrings(dst, o.Names)
	case ConfigSet:
		dst = append(dst, byte(opConfigSet))
		dst = appendString(dst, o.Name)
		dst = appendString(dst, o.Value)
	case ACLSetUser:
		dst = append(dst, byte(opACLSetUser), bit(o.Replace, 1))
		dst = appendString(dst, o.Name)
		dst = appendStrings(dst, o.Rules)
	case ACLDelUser:
		dst = append(dst, byte(opACLDelUser))
		dst = appendStrings(dst, o.Names)
	case ACLLoad:
		dst = append(dst, byte(opACLLoad))
		dst = binary.AppendUvarint(dst, uint64(len(o.Users)))
		for _, u := range o.Users {
			dst = appendString(dst, u.Name)
			dst = appendStrings(dst, u.Rules)
		}
	case Exec:
		dst = append(dst, byte(opExec))
		dst = appendInt(dst, o.DB)
		dst = binary.AppendUvarint(dst, uint64(len(o.Ops)))
		for _, sub := range o.Ops {
			dst = AppendOp(dst, sub)
		}

	// Queries.
	case XRange:
		dst = append(dst, byte(opXRange), bit(o.Rev, 1))
		dst = appendBase(dst, o.Base)
		dst = appendID(dst, o.Start)
		dst = appendID(dst, o.End)
		dst = appendVarint(dst, o.Count)
	case XLen:
		dst = append(dst, byte(opXLen))
		dst = appendBase(dst, o.Base)
	case XRead:
		dst = appendXRead(dst, o)
	case XClaimWake:
		dst = appendXClaimWake(dst, o)
	case XGroupConfig, XGroupConfigGet, XVisibilityWake:
		dst = appendGroupConfigOp(dst, o)
	case LastIDs:
		dst = append(dst, byte(opLastIDs))
		dst = appendInt(dst, o.DB)
		dst = appendStrings(dst, o.Names)
	case XPending:
		dst = append(dst, byte(opXPending), bit(o.Summary, 1))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
		dst = appendVarint(dst, o.IdleMs)
		dst = appendID(dst, o.Start)
		dst = appendID(dst, o.End)
		dst = appendVarint(dst, o.Count)
		dst = appendString(dst, o.Consumer)
	case XInfoStream:
		dst = append(dst, byte(opXInfoStream), bit(o.Full, 1))
		dst = appendBase(dst, o.Base)
		dst = appendVarint(dst, o.Count)
	case XInfoGroups:
		dst = append(dst, byte(opXInfoGroups))
		dst = appendBase(dst, o.Base)
	case XInfoConsumers:
		dst = append(dst, byte(opXInfoConsumers))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
	case Exists:
		dst = append(dst, byte(opExists))
		dst = appendInt(dst, o.DB)
		dst = appendStrings(dst, o.Names)
	case Type:
		dst = append(dst, byte(opType))
		dst = appendBase(dst, o.Base)
	case KeysMatch:
		dst = append(dst, byte(opKeysMatch))
		dst = appendInt(dst, o.DB)
		dst = appendString(dst, o.Pattern)
	case Scan:
		dst = append(dst, byte(opScan))
		dst = appendInt(dst, o.DB)
		dst = binary.AppendUvarint(dst, o.Cursor)
		dst = appendString(dst, o.Match)
		dst = appendVarint(dst, o.Count)
		dst = appendString(dst, o.Type)
	case DBSize:
		dst = append(dst, byte(opDBSize))
		dst = appendInt(dst, o.DB)
	case TTL:
		dst = append(dst, byte(opTTL), bit(o.Millis, 1)|bit(o.Abs, 2))
		dst = appendBase(dst, o.Base)
	case KeyspaceInfo:
		dst = append(dst, byte(opKeyspaceInfo))
	case ExpiredKeys:
		dst = append(dst, byte(opExpiredKeys))
		dst = appendInt(dst, o.DB)
		dst = appendInt(dst, o.Limit)
	case Copy:
		dst = append(dst, byte(opCopy), bit(o.Replace, 1))
		dst = appendInt(dst, o.DB)
		dst = appendString(dst, o.Src)
		dst = appendInt(dst, o.DstDB)
		dst = appendString(dst, o.Dst)
	case Restore:
		dst = append(dst, byte(opRestore), bit(o.Abs, 1)|bit(o.Replace, 2))
		dst = appendBase(dst, o.Base)
		dst = appendVarint(dst, o.TTLMs)
		dst = binary.AppendUvarint(dst, uint64(len(o.Payload)))
		dst = append(dst, o.Payload...)
	case SwapDB:
		dst = append(dst, byte(opSwapDB))
		dst = appendInt(dst, o.A)
		dst = appendInt(dst, o.B)
	case Dump:
		dst = append(dst, byte(opDump))
		dst = appendBase(dst, o.Base)
	case RandomKey:
		dst = append(dst, byte(opRandomKey))
		dst = appendInt(dst, o.DB)
		dst = binary.AppendUvarint(dst, o.Seed)
	case MemoryUsage:
		dst = append(dst, byte(opMemoryUsage))
		dst = appendBase(dst, o.Base)
		dst = appendVarint(dst, o.Samples)
	case EngineLevel:
		dst = append(dst, byte(opEngineLevel))
		dst = appendVarint(dst, o.Level)
	case XDelEx, XAckDel:
		dst = appendRefOp(dst, o)
	case XCfgSet, XIDMPRecord, IDMPExpired:
		dst = appendIDMPOp(dst, o)
	case RetentionSweep, GroupsExpired:
		dst = appendRetentionOp(dst, o)
	default:
		panic(fmt.Sprintf("wire: AppendOp: no encoding for %T", op))
	}
	return dst
}

func (r *reader) base() Base {
	db := r.int()
	return Base{DB: db, Key: r.str()}
}

func (r *reader) trim() Trim {
	h := r.flags(trimMask)
	t := Trim{Strategy: TrimStrategy(h & trimStrategyMask), Approx: h&trimApprox != 0, Limit: -1,
		Ref: RefMode(h & trimRefMask >> trimRefShift)}
	if t.Strategy > TrimMinID {
		r.malformed("trim strategy %d", t.Strategy)
		return Trim{}
	}
	if t.Ref > RefAcked {
		r.malformed("trim ref mode %d", t.Ref)
		return Trim{}
	}
	if h&trimHasMaxLen != 0 {
		if t.MaxLen = r.varint(); t.MaxLen == 0 && r.err == nil {
			r.malformed("trim MaxLen 0 marked present")
		}
	}
	if h&trimHasMinID != 0 {
		if t.MinID = r.id(); t.MinID.IsZero() && r.err == nil {
			r.malformed("trim MinID 0-0 marked present")
		}
	}
	if h&trimHasLimit != 0 {
		if t.Limit = r.varint(); t.Limit == -1 && r.err == nil {
			r.malformed("trim Limit -1 marked present")
		}
	}
	return t
}

func (r *reader) readStreams() []ReadStream {
	n := r.count(4)
	if n == 0 {
		return nil
	}
	ss := make([]ReadStream, n)
	for i := range ss {
		f := r.flags(3)
		key := r.str()
		ss[i] = ReadStream{Key: key, ID: r.id(), New: f&1 != 0, Last: f&2 != 0}
	}
	if r.err != nil {
		return nil
	}
	return ss
}

// optID reads an ID when present is true.
func (r *reader) optID(present bool) *streams.ID {
	if !present {
		return nil
	}
	id := r.id()
	return &id
}

// op decodes one op; depth counts the Execs around it. On error it returns
// nil and r.err says what is wrong, prefixed with the op's name.
func (r *reader) op(depth int) Op {
	code := opCode(r.byte())
	if r.err != nil {
		return nil
	}
	if int(code) >= len(opNames) || opNames[code] == "" {
		r.fail(fmt.Errorf("%w %d", ErrUnknownOp, code))
		return nil
	}
	if code == opExec {
		return r.exec(depth) // prefixes its own errors
	}
	op := r.opFields(code)
	if r.err != nil {
		r.err = fmt.Errorf("%v: %w", code, r.err)
		return nil
	}
	return op
}

// opFields decodes the fields of a known op other than Exec.
func (r *reader) opFields(code opCode) Op {
	switch code {
	// Commands.
	case opXAdd:
		f := r.flags(31)
		o := XAdd{NoMkStream: f&1 != 0}
		o.ID.Auto, o.ID.AutoSeq = f&2 != 0, f&4 != 0
		o.Base = r.base()
		o.Trim = r.trim()
		if f&8 != 0 {
			if o.ID.ID = r.id(); o.ID.ID.IsZero() && r.err == nil {
				r.malformed("ID 0-0 marked present")
			}
		}
		o.Fields = r.byteStrings()
		if f&16 != 0 {
			o.IDMP.PID = r.str()
			o.IDMP.IID = r.str()
			if (o.IDMP.PID == "" || o.IDMP.IID == "") && r.err == nil {
				r.malformed("empty IDMP producer or idempotent ID")
			}
		}
		return o
	case opXDel:
		b := r.base()
		return XDel{Base: b, IDs: r.ids()}
	case opXTrim:
		b := r.base()
		return XTrim{Base: b, Trim: r.trim()}
	case opXSetID:
		f := r.flags(1)
		o := XSetID{Base: r.base()}
		o.LastID = r.id()
		o.EntriesAdded = r.varint()
		o.MaxDeletedID = r.optID(f&1 != 0)
		return o
	case opXGroupCreate:
		f := r.flags(3)
		o := XGroupCreate{Dollar: f&1 != 0, MkStream: f&2 != 0, Base: r.base()}
		o.Group = r.str()
		o.ID = r.id()
		o.EntriesRead = r.varint()
		return o
	case opXGroupSetID:
		f := r.flags(1)
		o := XGroupSetID{Dollar: f&1 != 0, Base: r.base()}
		o.Group = r.str()
		o.ID = r.id()
		o.EntriesRead = r.varint()
		return o
	case opXGroupDestroy:
		b := r.base()
		return XGroupDestroy{Base: b, Group: r.str()}
	case opXGroupCreateConsumer:
		b := r.base()
		g := r.str()
		return XGroupCreateConsumer{Base: b, Group: g, Consumer: r.str()}
	case opXGroupDelConsumer:
		b := r.base()
		g := r.str()
		return XGroupDelConsumer{Base: b, Group: g, Consumer: r.str()}
	case opXReadGroup:
		f := r.flags(15)
		o := XReadGroup{NoAck: f&1 != 0, Claim: f&2 != 0, DB: r.int()}
		o.Group = r.str()
		o.Consumer = r.str()
		o.Count = r.varint()
		o.Streams = r.readStreams()
		o.MinIdleMs, o.MaxCount, o.MaxSize = r.readCaps(o.Claim, f&4 != 0, f&8 != 0)
		return o
	case opXNack:
		return r.xnack()
	case opXReadMax:
		return r.xreadMax()
	case opXClaimWake:
		return r.xclaimWake()
	case opXGroupConfig, opXGroupConfigGet, opXVisibilityWake:
		return r.groupConfigOp(code)
	case opXAck:
		b := r.base()
		g := r.str()
		return XAck{Base: b, Group: g, IDs: r.ids()}
	case opXClaim:
		f := r.flags(7)
		o := XClaim{Force: f&1 != 0, JustID: f&2 != 0, Base: r.base()}
		o.Group = r.str()
		o.Consumer = r.str()
		o.MinIdleMs = r.varint()
		o.IDs = r.ids()
		o.IdleMs = r.varint()
		o.TimeMs = r.varint()
		o.RetryCount = r.varint()
		o.LastID = r.optID(f&4 != 0)
		return o
	case opXAutoClaim:
		f := r.flags(1)
		o := XAutoClaim{JustID: f&1 != 0, Base: r.base()}
		o.Group = r.str()
		o.Consumer = r.str()
		o.MinIdleMs = r.varint()
		o.Start = r.id()
		o.Count = r.varint()
		return o
	case opDel:
		db := r.int()
		return Del{DB: db, Names: r.strs()}
	case opRename:
		f := r.flags(1)
		o := Rename{NX: f&1 != 0, DB: r.int()}
		o.Src = r.str()
		o.Dst = r.str()
		return o
	case opFlushDB:
		return FlushDB{DB: r.int()}
	case opFlushAll:
		return FlushAll{}
	case opExpire:
		f := r.flags(1)
		o := Expire{Relative: f&1 != 0, Base: r.base()}
		o.Ms = r.varint()
		o.Cond = ExpireCond(r.byte())
		return o
	case opPersist:
		return Persist{Base: r.base()}
	case opExpired:
		db := r.int()
		return Expired{DB: db, Names: r.strs()}
	case opConfigSet:
		name := r.str()
		return ConfigSet{Name: name, Value: r.str()}
	case opACLSetUser:
		f := r.flags(1)
		name := r.str()
		return ACLSetUser{Name: name, Rules: r.strs(), Replace: f&1 != 0}
	case opACLDelUser:
		return ACLDelUser{Names: r.strs()}
	case opACLLoad:
		n := r.count(2)
		var users []ACLUser
		for i := 0; i < n && r.err == nil; i++ {
			name := r.str()
			users = append(users, ACLUser{Name: name, Rules: r.strs()})
		}
		return ACLLoad{Users: users}

	// Queries.
	case opXRange:
		f := r.flags(1)
		o := XRange{Rev: f&1 != 0, Base: r.base()}
		o.Start = r.id()
		o.End = r.id()
		o.Count = r.varint()
		return o
	case opXLen:
		return XLen{Base: r.base()}
	case opXRead:
		db := r.int()
		count := r.varint()
		return XRead{DB: db, Count: count, Streams: r.readStreams()}
	case opLastIDs:
		db := r.int()
		return LastIDs{DB: db, Names: r.strs()}
	case opXPending:
		f := r.flags(1)
		o := XPending{Summary: f&1 != 0, Base: r.base()}
		o.Group = r.str()
		o.IdleMs = r.varint()
		o.Start = r.id()
		o.End = r.id()
		o.Count = r.varint()
		o.Consumer = r.str()
		return o
	case opXInfoStream:
		f := r.flags(1)
		o := XInfoStream{Full: f&1 != 0, Base: r.base()}
		o.Count = r.varint()
		return o
	case opXInfoGroups:
		return XInfoGroups{Base: r.base()}
	case opXInfoConsumers:
		b := r.base()
		return XInfoConsumers{Base: b, Group: r.str()}
	case opExists:
		db := r.int()
		return Exists{DB: db, Names: r.strs()}
	case opType:
		return Type{Base: r.base()}
	case opKeysMatch:
		db := r.int()
		return KeysMatch{DB: db, Pattern: r.str()}
	case opScan:
		o := Scan{DB: r.int()}
		o.Cursor = r.uvarint()
		o.Match = r.str()
		o.Count = r.varint()
		o.Type = r.str()
		return o
	case opDBSize:
		return DBSize{DB: r.int()}
	case opTTL:
		f := r.flags(3)
		return TTL{Millis: f&1 != 0, Abs: f&2 != 0, Base: r.base()}
	case opKeyspaceInfo:
		return KeyspaceInfo{}
	case opExpiredKeys:
		db := r.int()
		return ExpiredKeys{DB: db, Limit: r.int()}
	case opCopy:
		f := r.flags(1)
		o := Copy{Replace: f&1 != 0, DB: r.int()}
		o.Src = r.str()
		o.DstDB = r.int()
		o.Dst = r.str()
		return o
	case opRestore:
		f := r.flags(3)
		o := Restore{Abs: f&1 != 0, Replace: f&2 != 0, Base: r.base()}
		o.TTLMs = r.varint()
		if p := r.str(); r.err == nil {
			o.Payload = []byte(p)
		}
		return o
	case opSwapDB:
		a := r.int()
		return SwapDB{A: a, B: r.int()}
	case opDump:
		return Dump{Base: r.base()}
	case opRandomKey:
		db := r.int()
		return RandomKey{DB: db, Seed: r.uvarint()}
	case opMemoryUsage:
		b := r.base()
		return MemoryUsage{Base: b, Samples: r.varint()}
	case opEngineLevel:
		return EngineLevel{Level: r.varint()}
	case opXDelEx, opXAckDel:
		return r.refOp(code)
	case opXCfgSet, opXIDMPRecord, opIDMPExpired:
		return r.idmpOp(code)
	case opRetentionSweep, opGroupsExpired:
		return r.retentionOp(code)
	}
	r.fail(fmt.Errorf("%w %d", ErrUnknownOp, code)) // a name in opNames without a case here
	return nil
}

// exec decodes an Exec's fields. Errors inside name the failing op's index
// and the path of op names ("Exec: op 2 of 3: XAdd: truncated: ...").
func (r *reader) exec(depth int) Op {
	if depth >= maxExecDepth {
		r.malformed("nested deeper than %d", maxExecDepth)
		r.err = fmt.Errorf("Exec: %w", r.err)
		return nil
	}
	o := Exec{DB: r.int()}
	n := r.count(1)
	if r.err != nil {
		r.err = fmt.Errorf("Exec: %w", r.err)
		return nil
	}
	if n > 0 {
		o.Ops = make([]Op, 0, n)
	}
	for i := 0; i < n; i++ {
		op := r.op(depth + 1)
		if r.err != nil {
			r.err = fmt.Errorf("Exec: op %d of %d: %w", i+1, n, r.err)
			return nil
		}
		o.Ops = append(o.Ops, op)
	}
	return o
}
