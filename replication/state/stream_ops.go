package state

import (
	"errors"

	"streamd/replication/wire"
	"streamd/streams"
)

// ErrNoSuchKey is Redis's reply for RENAME/RENAMENX/XSETID on a missing key.
var ErrNoSuchKey = errors.New("ERR no such key")

// trimArgs converts the wire clause for the stream of o, resolving LIMIT's
// default from the current stream-node-max-entries as Redis does at
// command time, and DELREF/ACKED into the trim's Keep (setRefKeep).
func (ks *Keyspace) trimArgs(t wire.Trim, o *Object) (streams.TrimArgs, bool) {
	var a streams.TrimArgs
	switch t.Strategy {
	case wire.TrimMaxLen:
		a.Strategy, a.MaxLen = streams.TrimMaxLen, t.MaxLen
	case wire.TrimMinID:
		a.Strategy, a.MinID = streams.TrimMinID, t.MinID
	default:
		return a, false
	}
	a.Approx = t.Approx
	a.Limit = streams.TrimLimit(t.Limit, t.Approx, ks.nodeMax)
	setRefKeep(&a, t.Ref, o)
	return a, true
}

// xadd mirrors xaddCommand: the 0-0 check comes before the key lookup; a
// missing key with NOMKSTREAM answers nil; the ID is computed before the key
// is created, so a refused XADD never leaves an empty stream behind; the
// trim runs after the append.
func (ks *Keyspace) xadd(c wire.XAdd, nowMs int64) (any, error) {
	if !c.ID.Auto && !c.ID.AutoSeq && c.ID.ID.IsZero() {
		return nil, streams.ErrIDZero
	}
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil && c.NoMkStream {
		return nil, nil
	}
	if dup, ok := idmpDuplicate(o, c, nowMs); ok {
		// Redis answers the recorded ID and changes nothing else: no
		// entry, no trim, no wake-up.
		return dup, nil
	}
	var s *streams.Stream
	if o != nil {
		s = o.Stream
	} else {
		s = streams.New()
	}
	id, err := s.NextID(c.ID, nowMs)
	if err != nil {
		return nil, err
	}
	if o == nil {
		o = ks.createStream(c.DB, c.Key)
		o.Stream = s
	}
	// stream-node-max-bytes applies from engine level 1 (level.go): a log
	// written by an earlier release, replayed from its start, splits nodes
	// as that release did.
	s.AppendNode(id, c.Fields, ks.nodeMax, ks.nodeMaxBytesInForce())
	idmpRecord(o, c, id, nowMs)
	if t, ok := ks.trimArgs(c.Trim, o); ok {
		s.Trim(t)
	}
	applyRetention(o, nowMs, false)
	return id, nil
}

// xdel mirrors xdelCommand: each ID deleted if live; max-deleted-entry-id
// follows (streams.Stream.Delete).
func (ks *Keyspace) xdel(c wire.XDel, nowMs int64) (any, error) {
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil {
		return int64(0), nil
	}
	var n int64
	for _, id := range c.IDs {
		if o.Stream.Delete(id) {
			n++
		}
	}
	return n, nil
}

func (ks *Keyspace) xtrim(c wire.XTrim, nowMs int64) (any, error) {
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil {
		return int64(0), nil
	}
	t, ok := ks.trimArgs(c.Trim, o)
	if !ok {
		return int64(0), nil
	}
	return o.Stream.Trim(t), nil
}

// xsetid mirrors xsetidCommand: the MAXDELETEDID argument check precedes the
// key lookup ("ERR no such key" comes after it).
func (ks *Keyspace) xsetid(c wire.XSetID, nowMs int64) (any, error) {
	if c.MaxDeletedID != nil && c.LastID.Less(*c.MaxDeletedID) {
		return nil, streams.ErrSetIDBelowGivenMaxDeleted
	}
	o := ks.lookupWrite(c.DB, c.Key, nowMs)
	if o == nil {
		return nil, ErrNoSuchKey
	}
	return nil, o.Stream.SetID(c.LastID, c.EntriesAdded, c.MaxDeletedID)
}

// xrange answers XRANGE/XREVRANGE over inclusive bounds. Count -1 is no
// limit; Count 0 is an empty answer, as Redis gives for COUNT 0 (and for a
// negative COUNT, which the server maps to 0).
func (ks *Keyspace) xrange(q wire.XRange, nowMs int64) (any, error) {
	out := []streams.Entry{}
	o := ks.lookupCounted(q.DB, q.Key, nowMs)
	if o == nil || q.Count == 0 || q.End.Less(q.Start) {
		return out, nil
	}
	if s := o.Stream; !s.FirstID().Less(q.Start) && !q.End.Less(s.LastID()) {
		// The whole stream (XRANGE - +): sized up front, so a huge reply's
		// entries are not copied again as the slice grows.
		n := s.Len()
		if q.Count > 0 && q.Count < n {
			n = q.Count
		}
		out = make([]streams.Entry, 0, n)
	}
	take := func(e streams.Entry) bool {
		out = append(out, e)
		return q.Count < 0 || int64(len(out)) < q.Count
	}
	if q.Rev {
		o.Stream.Descend(q.End, func(e streams.Entry) bool {
			return !e.ID.Less(q.Start) && take(e)
		})
	} else {
		o.Stream.Ascend(q.Start, func(e streams.Entry) bool {
			return !q.End.Less(e.ID) && take(e)
		})
	}
	return out, nil
}

func (ks *Keyspace) xlen(q wire.XLen, nowMs int64) (any, error) {
	if o := ks.lookupCounted(q.DB, q.Key, nowMs); o != nil {
		return o.Stream.Len(), nil
	}
	return int64(0), nil
}

// xread answers XREAD: per stream the entries after the given ID (at most
// Count, 0 = no limit) or, with Last ("+"), the last entry; streams with
// nothing are left out, and the answer is nil when every stream is.
// MAXCOUNT and MAXSIZE cap the whole answer (readBudget).
func (ks *Keyspace) xread(q wire.XRead, nowMs int64) (any, error) {
	var out []KeyEntries
	b := &readBudget{maxCount: q.MaxCount, maxSize: q.MaxSize}
	for _, rs := range q.Streams {
		if b.exhausted() {
			break // MAXCOUNT / MAXSIZE reached: the other streams are skipped
		}
		o := ks.lookupCounted(q.DB, rs.Key, nowMs)
		if o == nil {
			continue
		}
		var entries []streams.Entry
		if rs.Last {
			if e, ok := o.Stream.Last(); ok && b.allow(e) {
				entries = append(entries, e)
			}
		} else if from, ok := rs.ID.Next(); ok {
			o.Stream.Ascend(from, func(e streams.Entry) bool {
				if !b.allow(e) {
					return false
				}
				entries = append(entries, e)
				return q.Count <= 0 || int64(len(entries)) < q.Count
			})
		}
		if len(entries) > 0 {
			out = append(out, KeyEntries{Key: rs.Key, Entries: entries})
		}
	}
	if out == nil {
		return nil, nil
	}
	return out, nil
}

// lastIDs answers each key's last-generated ID (0-0 when absent), to
// resolve XREAD's "$".
func (ks *Keyspace) lastIDs(q wire.LastIDs, nowMs int64) (any, error) {
	out := make([]streams.ID, len(q.Names))
	for i, k := range q.Names {
		if o := ks.lookupRead(q.DB, k, nowMs); o != nil {
			out[i] = o.Stream.LastID()
		}
	}
	return out, nil
}
