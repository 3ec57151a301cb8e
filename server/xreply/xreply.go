// Package xreply holds the stream commands' reply shapes: it turns the
// engine's answers (replication/state results, streams entries and IDs)
// into resp values, in the shapes Redis 7.2 sends. It knows nothing of
// connections or command tables; server's planners call it from their
// Format functions.
//
// Redis sends entries as arrays in both protocols (streamReplyWithRange
// never uses RESP3 maps): [id, [field, value, ...]].
package xreply

import (
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/streams"
)

// ID is a stream ID sent as a bulk string "ms-seq" (Redis's
// addReplyStreamID), rendered straight into the output: one allocation
// instead of one per digit run (XADD's reply, every entry's ID).
type ID streams.ID

// Entry is a stream entry sent as [id, [field, value, ...]], or [id, null
// array] when Fields is nil (an entry deleted while pending, as Redis's
// streamReplyWithRangeFromConsumerPEL sends it). It renders what
// Array{ID, Array{Bulk...}} would, in one value.
type Entry streams.Entry

// AppendRESP writes id as the bulk string "ms-seq" (resp.Appender).
func (id ID) AppendRESP(b []byte, _ int) []byte {
	return appendID(b, streams.ID(id))
}

// AppendRESP writes the entry as [id, [field, value, ...]], or [id, null]
// when it has no fields (resp.Appender).
func (e Entry) AppendRESP(b []byte, proto int) []byte {
	b = append(b, '*', '2', '\r', '\n')
	b = appendID(b, e.ID)
	if e.Fields == nil {
		return resp.AppendNull(b, proto, '*')
	}
	b = resp.AppendHeader(b, '*', len(e.Fields))
	for _, f := range e.Fields {
		b = resp.AppendBulk(b, '$', f)
	}
	return b
}

// appendID writes id as the bulk string "ms-seq" without building the
// string first.
func appendID(b []byte, id streams.ID) []byte {
	var digits [41]byte // two uint64s (20 digits each) and the dash
	s := id.Append(digits[:0])
	return resp.AppendBulk(b, '$', s)
}

// IDs is an array of IDs (XCLAIM/XAUTOCLAIM JUSTID, XAUTOCLAIM's deleted
// IDs).
func IDs(ids []streams.ID) resp.Reply {
	out := make(resp.Array, len(ids))
	for i, id := range ids {
		out[i] = ID(id)
	}
	return out
}

// Entries is an array of entries, always an array (empty, not null, when
// there are none). It is rendered straight from es as it is written out
// (EntryList), not copied into reply values first.
func Entries(es []streams.Entry) resp.Reply {
	if es == nil {
		es = []streams.Entry{}
	}
	return EntryList(es)
}

// EntryList is an array of entries that renders itself element by element
// (resp.Streamer), so a huge XRANGE or XINFO STREAM FULL reply goes out in
// chunks without a reply value per entry.
type EntryList []streams.Entry

// StreamRESP writes the array, checking the encoder after each entry.
func (l EntryList) StreamRESP(e *resp.Encoder) {
	e.Buf = resp.AppendHeader(e.Buf, '*', len(l))
	for i := range l {
		if e.Stopped() {
			return
		}
		e.Buf = Entry(l[i]).AppendRESP(e.Buf, e.Proto)
		e.Check()
	}
}

// AppendRESP writes the whole array (resp.Appender).
func (l EntryList) AppendRESP(b []byte, proto int) []byte {
	return resp.AppendStreamer(b, l, proto)
}

// EntryIDs is the JUSTID form of a list of entries: their IDs only.
func EntryIDs(es []streams.Entry) resp.Reply {
	out := make(resp.Array, len(es))
	for i, e := range es {
		out[i] = ID(e.ID)
	}
	return out
}

// Error turns an engine answer's error into its reply: the engine's errors
// already carry Redis's text with its code.
func Error(err error) resp.Reply {
	return resp.ErrorReply(err.Error())
}

// Int is a Format for an int64 result: an integer.
func Int(res any, err error) resp.Reply {
	if err != nil {
		return Error(err)
	}
	n, _ := res.(int64)
	return resp.Int(n)
}

// OK is a Format for a command whose result is nil: +OK.
func OK(_ any, err error) resp.Reply {
	if err != nil {
		return Error(err)
	}
	return resp.OK
}

// EntriesResult is a Format for a []streams.Entry result (XRANGE,
// XREVRANGE): an array of entries.
func EntriesResult(res any, err error) resp.Reply {
	if err != nil {
		return Error(err)
	}
	es, _ := res.([]streams.Entry)
	return Entries(es)
}

// Added is XADD's Format: the new ID as a bulk string, or a null when
// NOMKSTREAM met a missing key.
func Added(res any, err error) resp.Reply {
	if err != nil {
		return Error(err)
	}
	switch r := res.(type) {
	case streams.ID:
		return ID(r)
	case wire.IDMPDuplicate:
		// The recorded ID, as if just added (Redis 8.6).
		return ID(r.ID)
	}
	return resp.Null{}
}
