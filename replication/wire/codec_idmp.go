package wire

// Encodings of the idempotent-production ops (see codec_ops.go for the
// notation; XAdd's IDMP clause is encoded with XAdd there).

// appendIDMPOp appends an XCfgSet, XIDMPRecord or IDMPExpired.
func appendIDMPOp(dst []byte, op Op) []byte {
	switch o := op.(type) {
	case XCfgSet:
		dst = append(dst, byte(opXCfgSet), bit(o.Duration != 0, 1)|bit(o.MaxSize != 0, 2)|bit(o.AckLevel != AckDefault, 4)|o.Ret.flags())
		dst = appendBase(dst, o.Base)
		if o.Duration != 0 {
			dst = appendVarint(dst, o.Duration)
		}
		if o.MaxSize != 0 {
			dst = appendVarint(dst, o.MaxSize)
		}
		if o.AckLevel != AckDefault {
			dst = append(dst, byte(o.AckLevel))
		}
		dst = appendRetention(dst, o.Ret)
	case XIDMPRecord:
		dst = append(dst, byte(opXIDMPRecord))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.PID)
		dst = appendString(dst, o.IID)
		dst = appendID(dst, o.ID)
	case IDMPExpired:
		dst = append(dst, byte(opIDMPExpired))
		dst = appendInt(dst, o.DB)
		dst = appendStrings(dst, o.Names)
	}
	return dst
}

// idmpOp decodes the fields of an XCfgSet, XIDMPRecord or IDMPExpired.
func (r *reader) idmpOp(code opCode) Op {
	switch code {
	case opXCfgSet:
		f := r.flags(7 | cfgRetention)
		o := XCfgSet{Base: r.base()}
		if f&1 != 0 {
			if o.Duration = r.varint(); o.Duration == 0 && r.err == nil {
				r.malformed("Duration 0 marked present")
			}
		}
		if f&2 != 0 {
			if o.MaxSize = r.varint(); o.MaxSize == 0 && r.err == nil {
				r.malformed("MaxSize 0 marked present")
			}
		}
		if f&4 != 0 {
			if o.AckLevel = AckLevel(r.byte()); (o.AckLevel != AckQuorum && o.AckLevel != AckLeader) && r.err == nil {
				r.malformed("ack level %d", o.AckLevel)
			}
		}
		o.Ret = r.retention(f)
		return o
	case opIDMPExpired:
		db := r.int()
		return IDMPExpired{DB: db, Names: r.strs()}
	default: // opXIDMPRecord
		o := XIDMPRecord{Base: r.base()}
		o.PID = r.str()
		o.IID = r.str()
		o.ID = r.id()
		return o
	}
}
