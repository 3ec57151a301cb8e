package streams

import "errors"

// Errors of XADD and XSETID. Each Error() is Redis's exact reply text,
// including the "ERR" code (t_stream.c xaddCommand and xsetidCommand).
var (
	// ErrIDTooSmall is XADD's error for an ID not greater than the stream's
	// last ID.
	ErrIDTooSmall = errors.New("ERR The ID specified in XADD is equal or smaller than the target stream top item")
	// ErrIDZero is XADD's error for the explicit ID 0-0.
	ErrIDZero = errors.New("ERR The ID specified in XADD must be greater than 0-0")
	// ErrStreamExhausted is XADD's error when the last ID is the maximum ID.
	ErrStreamExhausted = errors.New("ERR The stream has exhausted the last possible ID, unable to add more items")
	// ErrSetIDTooSmall is XSETID's error for an ID below the last live entry.
	ErrSetIDTooSmall = errors.New("ERR The ID specified in XSETID is smaller than the target stream top item")
	// ErrSetIDEntriesAdded is XSETID's error for ENTRIESADDED below the length.
	ErrSetIDEntriesAdded = errors.New("ERR The entries_added specified in XSETID is smaller than the target stream length")
	// ErrSetIDBelowGivenMaxDeleted is XSETID's error for an ID below its own
	// MAXDELETEDID argument (checked before the key is looked up).
	ErrSetIDBelowGivenMaxDeleted = errors.New("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
)

// NextID returns the ID XADD would give a new entry, with Redis's rules
// (t_stream.c streamAppendItem and streamNextID): "*" is nowMs-0 when nowMs
// is past the last ID's milliseconds, else the last ID plus one; "ms-*" is
// ms-0 for a new millisecond, else the last ID's sequence plus one; an
// explicit ID is taken as given. The result must be greater than LastID.
// nowMs is the replicated command's time: the stream reads no clock.
func (s *Stream) NextID(spec IDSpec, nowMs int64) (ID, error) {
	return NextIDAfter(s.lastID, spec, nowMs)
}

// NextIDAfter is NextID for a stream whose last ID is last (a proposer that
// assigns IDs before the log entry is applied projects the stream's last ID
// and asks what the FSM will give).
func NextIDAfter(last ID, spec IDSpec, nowMs int64) (ID, error) {
	if !spec.Auto && !spec.AutoSeq && spec.ID.IsZero() {
		return ID{}, ErrIDZero
	}
	// xaddCommand refuses before anything else once the last ID is the
	// maximum, whatever ID was asked for.
	if last == MaxID {
		return ID{}, ErrStreamExhausted
	}
	var id ID
	switch {
	case spec.Auto:
		if nowMs > 0 && uint64(nowMs) > last.Ms {
			id = ID{Ms: uint64(nowMs)}
		} else {
			id, _ = last.Next()
		}
	case spec.AutoSeq:
		if spec.ID.Ms == last.Ms {
			next, ok := last.Next()
			if !ok || next.Ms != last.Ms {
				// The sequence would overflow into the next millisecond.
				return ID{}, ErrIDTooSmall
			}
			id = next
		} else {
			id = ID{Ms: spec.ID.Ms}
		}
	default:
		id = spec.ID
	}
	if !last.Less(id) {
		return ID{}, ErrIDTooSmall
	}
	return id, nil
}

// SetID applies XSETID's checks and changes (xsetidCommand): the new last ID
// may not be below the last live entry, nor below maxDeleted when given, and
// entriesAdded (-1 = not given) may not be below the length. The last-ID
// check is against the last live entry, not the last-generated ID, so XSETID
// can lower the last ID after the top entries were deleted, as in Redis.
func (s *Stream) SetID(last ID, entriesAdded int64, maxDeleted *ID) error {
	if maxDeleted != nil && last.Less(*maxDeleted) {
		return ErrSetIDBelowGivenMaxDeleted
	}
	if s.length > 0 {
		top, _ := s.Last()
		if last.Less(top.ID) {
			return ErrSetIDTooSmall
		}
		if entriesAdded != -1 && s.length > entriesAdded {
			return ErrSetIDEntriesAdded
		}
	}
	s.lastID = last
	if entriesAdded != -1 {
		s.entriesAdded = entriesAdded
	}
	// Redis sets max_deleted_entry_id only from a non-zero MAXDELETEDID.
	if maxDeleted != nil && !maxDeleted.IsZero() {
		s.maxDeleted = *maxDeleted
	}
	return nil
}
