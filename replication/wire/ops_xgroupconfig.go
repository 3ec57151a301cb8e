package wire

// Per-group broker settings (issue #15): XGROUP CONFIG, its read form, and
// the wake-up time of a blocked XREADGROUP on groups with a visibility
// timeout.
//
//	XGroupConfig     f{SetMaxDeliveries,SetDeadLetter,SetVisibility} Base Group
//	                 [MaxDeliveries:v] [DeadLetter:s] [VisibilityMs:v]
//	                 (at least one bit; 0 / "" in a present field is NONE)
//	XGroupConfigGet  Base Group
//	XVisibilityWake  db:v Group names:strings

// XGroupConfig is XGROUP CONFIG key group option value [option value …]
// with at least one option: only the settings flagged Set change.
// MaxDeliveries 0, DeadLetter "" and VisibilityMs 0 are NONE. Result: nil
// (OK).
type XGroupConfig struct {
	Base
	Group            string
	SetMaxDeliveries bool
	MaxDeliveries    int64
	SetDeadLetter    bool
	DeadLetter       string
	SetVisibility    bool
	VisibilityMs     int64
}

// Keys returns the stream and, when DEADLETTER names one, the dead-letter
// stream (routing answers CROSSSLOT when they are in different slots).
func (c XGroupConfig) Keys() []string {
	if c.SetDeadLetter && c.DeadLetter != "" && c.DeadLetter != c.Key {
		return []string{c.Key, c.DeadLetter}
	}
	return []string{c.Key}
}

// XGroupConfigGet is XGROUP CONFIG key group with no option. Result:
// state.GroupConfigInfo.
type XGroupConfigGet struct {
	Base
	Group string
}

// XVisibilityWake asks when a blocked plain XREADGROUP ... > on the keys
// should retry because of the group's visibility timeout: the earliest time
// at which a pending entry of the group, in one of the streams whose group
// has a VISIBILITY, becomes due (with nothing pending there: VISIBILITY ms
// after the query's time, as entries another consumer reads wake nobody).
// Result: int64 unix ms, or -1 when no stream's group has a visibility
// timeout.
type XVisibilityWake struct {
	DB    int
	Group string
	Names []string
}

// Keys returns the streams.
func (q XVisibilityWake) Keys() []string { return q.Names }

// Database returns the database.
func (q XVisibilityWake) Database() int { return q.DB }

func (XGroupConfig) command()  {}
func (XGroupConfigGet) query() {}
func (XVisibilityWake) query() {}

// effects: a new configuration wakes the clients blocked on the key, so
// they retry under it (a visibility timeout may now make entries due).
func (c XGroupConfig) effects(_ any, e Effects) Effects {
	e.Ready = append(e.Ready, c.Key)
	return e
}

// Delivered wraps the answer of a claiming write (XREADGROUP, XCLAIM,
// XAUTOCLAIM) whose apply dead-lettered entries or redelivered entries by a
// visibility timeout; the engine returns the plain answer otherwise. The
// dead-letter streams it appended to are signalled as an XADD's key is;
// the server unwraps the answer (Unwrap) after taking the effects and the
// counts for its metrics.
type Delivered struct {
	Result any
	// DeadLetterKeys are the streams entries were appended to.
	DeadLetterKeys []string
	// DeadLettered counts the entries taken out of groups (appended, or
	// dropped when the group has no dead-letter stream).
	DeadLettered int64
	// Redelivered counts the entries redelivered by a visibility timeout.
	Redelivered int64
}

// Unwrap returns res without its Delivered wrapper (also inside an EXEC's
// outcomes, which it rewrites in place).
func Unwrap(res any) any {
	switch r := res.(type) {
	case Delivered:
		return r.Result
	case []Outcome:
		for i := range r {
			r[i].Result = Unwrap(r[i].Result)
		}
	}
	return res
}

// deliveredEffects signals the dead-letter streams a claiming write
// appended to.
func deliveredEffects(res any, e Effects) Effects {
	if d, ok := res.(Delivered); ok && len(d.DeadLetterKeys) > 0 {
		return e.modifyReady(d.DeadLetterKeys...)
	}
	return e
}

// appendGroupConfigOp appends an XGroupConfig, XGroupConfigGet or
// XVisibilityWake.
func appendGroupConfigOp(dst []byte, op Op) []byte {
	switch o := op.(type) {
	case XGroupConfig:
		dst = append(dst, byte(opXGroupConfig), bit(o.SetMaxDeliveries, 1)|bit(o.SetDeadLetter, 2)|bit(o.SetVisibility, 4))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
		if o.SetMaxDeliveries {
			dst = appendVarint(dst, o.MaxDeliveries)
		}
		if o.SetDeadLetter {
			dst = appendString(dst, o.DeadLetter)
		}
		if o.SetVisibility {
			dst = appendVarint(dst, o.VisibilityMs)
		}
	case XGroupConfigGet:
		dst = append(dst, byte(opXGroupConfigGet))
		dst = appendBase(dst, o.Base)
		dst = appendString(dst, o.Group)
	case XVisibilityWake:
		dst = append(dst, byte(opXVisibilityWake))
		dst = appendInt(dst, o.DB)
		dst = appendString(dst, o.Group)
		dst = appendStrings(dst, o.Names)
	}
	return dst
}

// groupConfigOp decodes the fields of the ops appendGroupConfigOp writes.
func (r *reader) groupConfigOp(code opCode) Op {
	switch code {
	case opXGroupConfig:
		f := r.flags(7)
		if r.err == nil && f == 0 {
			r.malformed("XGROUP CONFIG without an option")
			return nil
		}
		o := XGroupConfig{Base: r.base(), SetMaxDeliveries: f&1 != 0, SetDeadLetter: f&2 != 0, SetVisibility: f&4 != 0}
		o.Group = r.str()
		if o.SetMaxDeliveries {
			if o.MaxDeliveries = r.varint(); r.err == nil && o.MaxDeliveries < 0 {
				r.malformed("MaxDeliveries %d", o.MaxDeliveries)
			}
		}
		if o.SetDeadLetter {
			o.DeadLetter = r.str()
		}
		if o.SetVisibility {
			if o.VisibilityMs = r.varint(); r.err == nil && o.VisibilityMs < 0 {
				r.malformed("VisibilityMs %d", o.VisibilityMs)
			}
		}
		return o
	case opXGroupConfigGet:
		b := r.base()
		return XGroupConfigGet{Base: b, Group: r.str()}
	default: // opXVisibilityWake
		o := XVisibilityWake{DB: r.int()}
		o.Group = r.str()
		o.Names = r.strs()
		return o
	}
}
