package wire

// Codec of XDELEX and XACKDEL (see the table in codec_ops.go).

// refModeMask is the flags bits of XDelEx/XAckDel holding the RefMode.
const refModeMask = 0x03

func appendRefOp(dst []byte, op Op) []byte {
	switch o := op.(type) {
	case XDelEx:
		dst = append(dst, byte(opXDelEx), byte(o.Mode)&refModeMask)
		dst = appendBase(dst, o.Base)
		dst = appendIDs(dst, o.IDs)
	case XAckDel:
		dst = append(dst, byte(opXAckDel), byte(o.Mode)&refModeMask)
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
		dst = appendIDs(dst, o.IDs)
	}
	return dst
}

// refMode reads the flags byte of XDelEx/XAckDel.
func (r *reader) refMode() RefMode {
	m := RefMode(r.flags(refModeMask))
	if m > RefAcked && r.err == nil {
		r.malformed("ref mode %d", m)
	}
	return m
}

// refOp decodes the fields of XDelEx or XAckDel.
func (r *reader) refOp(code opCode) Op {
	m := r.refMode()
	b := r.base()
	if code == opXDelEx {
		return XDelEx{Base: b, Mode: m, IDs: r.ids()}
	}
	g := r.str()
	return XAckDel{Base: b, Group: g, Mode: m, IDs: r.ids()}
}
