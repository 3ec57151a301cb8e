// Package streams is the log of a Redis stream: entry IDs, entries, and the
// Stream type with append, range, delete and trim. It is pure: it reads no
// clock and no randomness, so every replica computes the same result.
package streams

import (
	"errors"
	"math"
	"strconv"
)

// ID is a stream entry ID: milliseconds and a sequence number, ordered by
// (Ms, Seq) as Redis's streamID.
type ID struct {
	Ms  uint64
	Seq uint64
}

// MinID and MaxID are the smallest and largest IDs ("-" and "+").
var (
	MinID = ID{0, 0}
	MaxID = ID{math.MaxUint64, math.MaxUint64}
)

// ErrInvalidID is returned by the parsers for a malformed ID; its text is
// Redis's reply for it.
var ErrInvalidID = errors.New("ERR Invalid stream ID specified as stream command argument")

// String formats the ID as "ms-seq".
func (id ID) String() string {
	return string(id.Append(nil))
}

// Append appends "ms-seq" to dst.
func (id ID) Append(dst []byte) []byte {
	dst = strconv.AppendUint(dst, id.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, id.Seq, 10)
}

// Compare returns -1, 0 or +1 as id is less than, equal to or greater than o.
func (id ID) Compare(o ID) int {
	switch {
	case id.Ms < o.Ms:
		return -1
	case id.Ms > o.Ms:
		return 1
	case id.Seq < o.Seq:
		return -1
	case id.Seq > o.Seq:
		return 1
	}
	return 0
}

// Less reports whether id sorts before o.
func (id ID) Less(o ID) bool { return id.Compare(o) < 0 }

// IsZero reports whether id is 0-0.
func (id ID) IsZero() bool { return id.Ms == 0 && id.Seq == 0 }

// Next returns the ID right after id and false if id is MaxID (no successor),
// as Redis's streamIncrID.
func (id ID) Next() (ID, bool) {
	if id.Seq == math.MaxUint64 {
		if id.Ms == math.MaxUint64 {
			return id, false
		}
		return ID{id.Ms + 1, 0}, true
	}
	return ID{id.Ms, id.Seq + 1}, true
}

// Prev returns the ID right before id and false if id is 0-0, as Redis's
// streamDecrID.
func (id ID) Prev() (ID, bool) {
	if id.Seq == 0 {
		if id.Ms == 0 {
			return id, false
		}
		return ID{id.Ms - 1, math.MaxUint64}, true
	}
	return ID{id.Ms, id.Seq - 1}, true
}

// ParseID parses "ms-seq" or "ms" as Redis's streamGenericParseIDOrReply in
// non-strict mode: "-" and "+" are the minimum and maximum ID, and a missing
// sequence takes missingSeq (0 for a range start, MaxUint64 for an end).
func ParseID(s []byte, missingSeq uint64) (ID, error) {
	if len(s) == 1 {
		switch s[0] {
		case '-':
			return MinID, nil
		case '+':
			return MaxID, nil
		}
	}
	return ParseStrictID(s, missingSeq)
}

// ParseStrictID parses "ms-seq" or "ms" but refuses "-" and "+", as Redis
// does for IDs that name an entry (XDEL, XACK, XCLAIM, XSETID, ...).
func ParseStrictID(s []byte, missingSeq uint64) (ID, error) {
	id, seqGiven, err := parseParts(s)
	if err != nil {
		return ID{}, err
	}
	if !seqGiven {
		id.Seq = missingSeq
	}
	return id, nil
}

// IDSpec is the ID argument of XADD: "*" (Auto), "ms-*" (AutoSeq with Ms) or
// an explicit "ms-seq" (a missing sequence means 0).
type IDSpec struct {
	Auto    bool
	AutoSeq bool
	ID      ID
}

// ParseIDSpec parses the ID argument of XADD as Redis does.
func ParseIDSpec(s []byte) (IDSpec, error) {
	if len(s) == 1 && s[0] == '*' {
		return IDSpec{Auto: true}, nil
	}
	if n := len(s); n > 2 && s[n-1] == '*' && s[n-2] == '-' {
		ms, err := parseUint(s[:n-2])
		if err != nil {
			return IDSpec{}, ErrInvalidID
		}
		return IDSpec{AutoSeq: true, ID: ID{Ms: ms}}, nil
	}
	id, err := ParseStrictID(s, 0)
	if err != nil {
		return IDSpec{}, err
	}
	return IDSpec{ID: id}, nil
}

func parseParts(s []byte) (ID, bool, error) {
	if len(s) == 0 || len(s) > 127 {
		return ID{}, false, ErrInvalidID
	}
	for i, c := range s {
		if c == '-' {
			ms, err := parseUint(s[:i])
			if err != nil {
				return ID{}, false, ErrInvalidID
			}
			seq, err := parseUint(s[i+1:])
			if err != nil {
				return ID{}, false, ErrInvalidID
			}
			return ID{ms, seq}, true, nil
		}
	}
	ms, err := parseUint(s)
	if err != nil {
		return ID{}, false, ErrInvalidID
	}
	return ID{Ms: ms}, false, nil
}

// parseUint accepts what Redis's string2ull accepts: decimal digits only.
func parseUint(s []byte) (uint64, error) {
	if len(s) == 0 {
		return 0, ErrInvalidID
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, ErrInvalidID
		}
	}
	return strconv.ParseUint(string(s), 10, 64)
}
