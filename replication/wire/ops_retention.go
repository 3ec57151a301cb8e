package wire

// Retention and orphan-group expiry (issue #15): XCFGSET's MAXLEN, MAXAGE,
// NONE, RETENTION-POLICY and GROUP-IDLE-EXPIRE options (fields of XCfgSet,
// gated by its flags bits 3-6), and the two ops the leader's sweep
// proposes: RetentionSweep (trim streams no XADD touches) and GroupsExpired
// (destroy groups idle past their stream's GROUP-IDLE-EXPIRE).

// Retention policies (RETENTION-POLICY).
const (
	// PolicyAcked never removes an entry a group still needs (Redis 8.2's
	// ACKED trim rule); the default.
	PolicyAcked byte = 0
	// PolicyKeepRef removes entries whatever the groups (Redis's classic
	// trimming, leaving PEL references dangling, as KEEPREF).
	PolicyKeepRef byte = 1
)

// RetentionSet is XCFGSET's retention options; the zero value sets nothing.
type RetentionSet struct {
	// SetMaxLen: MaxLen is the new MAXLEN (-1 = none: NONE).
	SetMaxLen bool
	MaxLen    int64
	// SetMaxAge: MaxAgeMs is the new MAXAGE (0 = none: NONE).
	SetMaxAge bool
	MaxAgeMs  int64
	// SetPolicy: Policy is the new RETENTION-POLICY (PolicyAcked or
	// PolicyKeepRef).
	SetPolicy bool
	Policy    byte
	// SetIdleExpire: IdleExpireMs is the new GROUP-IDLE-EXPIRE (0 =
	// none: NONE).
	SetIdleExpire bool
	IdleExpireMs  int64
}

// IsZero reports whether no retention option is given.
func (r RetentionSet) IsZero() bool {
	return !r.SetMaxLen && !r.SetMaxAge && !r.SetPolicy && !r.SetIdleExpire
}

// RetentionSweep applies, at the entry's time, the retention settings of
// streams of database DB (the leader's sweep proposes it for streams whose
// retention could remove something, so that a stream that stops receiving
// XADDs is trimmed too). Full makes the ACKED trim start from the head of
// each stream instead of where the last one found entries still needed.
// Result: int64 entries removed.
type RetentionSweep struct {
	DB    int
	Names []string
	Full  bool
}

// GroupsExpired destroys, at the entry's time, each group Groups[i] of
// stream Names[i] in database DB whose stream has GROUP-IDLE-EXPIRE set and
// in which nothing was read, claimed or acknowledged for at least that
// long (the Apply re-checks: the leader's sweep only proposes candidates).
// Result: ExpiredGroups.
type GroupsExpired struct {
	DB     int
	Names  []string
	Groups []string
}

// ExpiredGroups is GroupsExpired's result: the groups destroyed, Keys[i]
// being Groups[i]'s stream.
type ExpiredGroups struct {
	Keys, Groups []string
}

// Keys returns the streams swept.
func (c RetentionSweep) Keys() []string { return c.Names }

// Database returns the database.
func (c RetentionSweep) Database() int { return c.DB }

// Keys returns the streams whose groups may expire.
func (c GroupsExpired) Keys() []string { return c.Names }

// Database returns the database.
func (c GroupsExpired) Database() int { return c.DB }

func (RetentionSweep) command() {}
func (GroupsExpired) command()  {}

// A retention sweep that removed entries modifies the streams, as XTRIM.
func (c RetentionSweep) effects(res any, e Effects) Effects {
	if count(res) > 0 {
		e.Modified = append(e.Modified, c.Names...)
	}
	return e
}

// An expired group is destroyed as XGROUP DESTROY: its stream is ready, so
// blocked XREADGROUP clients wake and get the NOGROUP error.
func (c GroupsExpired) effects(res any, e Effects) Effects {
	x, _ := res.(ExpiredGroups)
	for i, k := range x.Keys {
		if i == 0 || x.Keys[i-1] != k {
			e.Ready = append(e.Ready, k)
		}
	}
	return e
}

// XCfgSet flags bits of the retention options (bits 0-1 are IDMP's, bit 2
// b15ack's).
const (
	cfgMaxLen     = 0x08
	cfgMaxAge     = 0x10
	cfgPolicy     = 0x20
	cfgIdleExpire = 0x40
	cfgRetention  = cfgMaxLen | cfgMaxAge | cfgPolicy | cfgIdleExpire
)

// retentionFlags returns the XCfgSet flags bits for r.
func (r RetentionSet) flags() byte {
	return bit(r.SetMaxLen, cfgMaxLen) | bit(r.SetMaxAge, cfgMaxAge) |
		bit(r.SetPolicy, cfgPolicy) | bit(r.SetIdleExpire, cfgIdleExpire)
}

// appendRetention appends r's fields in bit order.
func appendRetention(dst []byte, r RetentionSet) []byte {
	if r.SetMaxLen {
		dst = appendVarint(dst, r.MaxLen)
	}
	if r.SetMaxAge {
		dst = appendVarint(dst, r.MaxAgeMs)
	}
	if r.SetPolicy {
		dst = append(dst, r.Policy)
	}
	if r.SetIdleExpire {
		dst = appendVarint(dst, r.IdleExpireMs)
	}
	return dst
}

// retention reads the fields flags f announces.
func (r *reader) retention(f byte) RetentionSet {
	var s RetentionSet
	if f&cfgMaxLen != 0 {
		s.SetMaxLen = true
		if s.MaxLen = r.varint(); s.MaxLen < -1 && r.err == nil {
			r.malformed("MaxLen %d", s.MaxLen)
		}
	}
	if f&cfgMaxAge != 0 {
		s.SetMaxAge = true
		if s.MaxAgeMs = r.varint(); s.MaxAgeMs < 0 && r.err == nil {
			r.malformed("MaxAge %d", s.MaxAgeMs)
		}
	}
	if f&cfgPolicy != 0 {
		s.SetPolicy = true
		if s.Policy = r.byte(); s.Policy > PolicyKeepRef && r.err == nil {
			r.malformed("retention policy %d", s.Policy)
		}
	}
	if f&cfgIdleExpire != 0 {
		s.SetIdleExpire = true
		if s.IdleExpireMs = r.varint(); s.IdleExpireMs < 0 && r.err == nil {
			r.malformed("GroupIdleExpire %d", s.IdleExpireMs)
		}
	}
	return s
}

// appendRetentionOp appends a RetentionSweep or GroupsExpired.
func appendRetentionOp(dst []byte, op Op) []byte {
	switch o := op.(type) {
	case RetentionSweep:
		dst = append(dst, byte(opRetentionSweep), bit(o.Full, 1))
		dst = appendInt(dst, o.DB)
		dst = appendStrings(dst, o.Names)
	case GroupsExpired:
		dst = append(dst, byte(opGroupsExpired))
		dst = appendInt(dst, o.DB)
		dst = appendStrings(dst, o.Names)
		dst = appendStrings(dst, o.Groups)
	}
	return dst
}

// retentionOp decodes a RetentionSweep or GroupsExpired.
func (r *reader) retentionOp(code opCode) Op {
	var f byte
	if code == opRetentionSweep {
		f = r.flags(1)
	}
	db := r.int()
	names := r.strs()
	if code == opRetentionSweep {
		return RetentionSweep{DB: db, Names: names, Full: f&1 != 0}
	}
	gs := r.strs()
	if len(gs) != len(names) && r.err == nil {
		r.malformed("%d groups for %d keys", len(gs), len(names))
	}
	return GroupsExpired{DB: db, Names: names, Groups: gs}
}
