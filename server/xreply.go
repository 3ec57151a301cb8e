package server

import (
	"streamd/replication/state"
	"streamd/streams"
)

// Reply shapes and answer formatters shared by the keyspace commands (the
// stream commands, XREAD/XREADGROUP, the generic key commands).
// Redis sends entries as arrays in both protocols (streamReplyWithRange
// never uses RESP3 maps): [id, [field, value, ...]].

// idReply is an ID as Redis's addReplyStreamID sends it: a bulk "ms-seq".
func idReply(id streams.ID) Reply {
	return IDBulk(id)
}

// IDBulk is a stream ID sent as a bulk string "ms-seq" (Redis's
// addReplyStreamID), rendered straight into the output.
type IDBulk streams.ID

// EntryReply is a stream entry sent as [id, [field, value, ...]], or
// [id, null array] when Fields is nil (an entry deleted while pending, as
// Redis's streamReplyWithRangeFromConsumerPEL sends it). It renders what
// Array{IDBulk, Array{Bulk...}} would, in one value.
type EntryReply streams.Entry

// idsReply is an array of IDs (XCLAIM/XAUTOCLAIM JUSTID, XAUTOCLAIM's
// deleted IDs).
func idsReply(ids []streams.ID) Reply {
	out := make(Array, len(ids))
	for i, id := range ids {
		out[i] = idReply(id)
	}
	return out
}

// entryReply is one entry: [id, [field, value, ...]]. An entry with nil
// Fields was deleted while pending: Redis sends its ID and a null array
// (streamReplyWithRangeFromConsumerPEL).
func entryReply(e streams.Entry) Reply {
	return EntryReply(e)
}

// entriesReply is an array of entries, always an array (empty, not null,
// when there are none).
func entriesReply(es []streams.Entry) Reply {
	out := make(Array, len(es))
	for i, e := range es {
		out[i] = entryReply(e)
	}
	return out
}

// entryIDsReply is the JUSTID form of a list of entries: their IDs only.
func entryIDsReply(es []streams.Entry) Reply {
	out := make(Array, len(es))
	for i, e := range es {
		out[i] = idReply(e.ID)
	}
	return out
}

// optEntryReply is XINFO STREAM's first-entry/last-entry: the entry, or a
// null when the stream is empty.
func optEntryReply(e *streams.Entry) Reply {
	if e == nil {
		return Null{}
	}
	return entryReply(*e)
}

// optIntReply is an integer that Redis sends as a null when unknown
// (XINFO entries-read and lag).
func optIntReply(v *int64) Reply {
	if v == nil {
		return Null{}
	}
	return Int(*v)
}

// field is one key of an XINFO map: Redis writes the names as bulk strings
// (addReplyBulkCString), which RESP2 flattens into the array.
func field(name string, v Reply) KV {
	return KV{K: Bulk(name), V: v}
}

// streamHeaderFields are the fields both XINFO STREAM forms start with.
func streamHeaderFields(h state.StreamHeader, more int) Map {
	m := make(Map, 0, 7+more)
	return append(m,
		field("length", Int(h.Length)),
		field("radix-tree-keys", Int(h.RadixTreeKeys)),
		field("radix-tree-nodes", Int(h.RadixTreeNodes)),
		field("last-generated-id", idReply(h.LastGeneratedID)),
		field("max-deleted-entry-id", idReply(h.MaxDeletedEntryID)),
		field("entries-added", Int(h.EntriesAdded)),
		field("recorded-first-entry-id", idReply(h.RecordedFirstEntryID)),
	)
}

// streamInfoReply is XINFO STREAM in Redis 7.2's field order.
func streamInfoReply(si state.StreamInfo) Reply {
	return append(streamHeaderFields(si.StreamHeader, 3),
		field("groups", Int(si.Groups)),
		field("first-entry", optEntryReply(si.FirstEntry)),
		field("last-entry", optEntryReply(si.LastEntry)),
	)
}

// streamFullInfoReply is XINFO STREAM FULL in Redis 7.2's field order
// (xinfoReplyWithStreamInfo with full = 1).
func streamFullInfoReply(fi state.StreamFullInfo) Reply {
	groups := make(Array, len(fi.Groups))
	for i, g := range fi.Groups {
		groups[i] = groupFullReply(g)
	}
	return append(streamHeaderFields(fi.StreamHeader, 2),
		field("entries", entriesReply(fi.Entries)),
		field("groups", groups),
	)
}

// groupFullReply is one group of XINFO STREAM FULL.
func groupFullReply(g state.GroupFull) Reply {
	pending := make(Array, len(g.Pending))
	for i, p := range g.Pending {
		pending[i] = Array{idReply(p.ID), Bulk(p.Consumer), Int(p.DeliveryTimeMs), Int(p.DeliveryCount)}
	}
	consumers := make(Array, len(g.Consumers))
	for i, c := range g.Consumers {
		cp := make(Array, len(c.Pending))
		for j, p := range c.Pending {
			cp[j] = Array{idReply(p.ID), Int(p.DeliveryTimeMs), Int(p.DeliveryCount)}
		}
		consumers[i] = Map{
			field("name", Bulk(c.Name)),
			field("seen-time", Int(c.SeenTimeMs)),
			field("active-time", Int(c.ActiveTimeMs)),
			field("pel-count", Int(c.PelCount)),
			field("pending", cp),
		}
	}
	return Map{
		field("name", Bulk(g.Name)),
		field("last-delivered-id", idReply(g.LastDeliveredID)),
		field("entries-read", optIntReply(g.EntriesRead)),
		field("lag", optIntReply(g.Lag)),
		field("pel-count", Int(g.PelCount)),
		field("pending", pending),
		field("consumers", consumers),
	}
}

// groupsInfoReply is XINFO GROUPS: one map per group, in name order.
func groupsInfoReply(gs []state.GroupInfo) Reply {
	out := make(Array, len(gs))
	for i, g := range gs {
		out[i] = Map{
			field("name", Bulk(g.Name)),
			field("consumers", Int(g.Consumers)),
			field("pending", Int(g.Pending)),
			field("last-delivered-id", idReply(g.LastDeliveredID)),
			field("entries-read", optIntReply(g.EntriesRead)),
			field("lag", optIntReply(g.Lag)),
		}
	}
	return out
}

// consumersInfoReply is XINFO CONSUMERS (7.2: idle since last seen, inactive
// since last successful read, -1 if never).
func consumersInfoReply(cs []state.ConsumerInfo) Reply {
	out := make(Array, len(cs))
	for i, c := range cs {
		out[i] = Map{
			field("name", Bulk(c.Name)),
			field("pending", Int(c.Pending)),
			field("idle", Int(c.IdleMs)),
			field("inactive", Int(c.InactiveMs)),
		}
	}
	return out
}

// formatInt replies an int64 result as an integer.
func formatInt(res any, err error) Reply {
	if err != nil {
		return errorFormat(err)
	}
	n, _ := res.(int64)
	return Int(n)
}

// formatOK replies +OK for a command whose result is nil.
func formatOK(_ any, err error) Reply {
	if err != nil {
		return errorFormat(err)
	}
	return OK
}

// errorFormat turns an engine answer's error into its reply: the engine's
// errors already carry Redis's text with its code.
func errorFormat(err error) Reply {
	return ErrorReply(err.Error())
}
