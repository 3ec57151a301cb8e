package xreply

import (
	"strconv"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/resp"
	"streamd/streams"
)

// XINFO's replies: maps whose names Redis writes as bulk strings
// (addReplyBulkCString), which RESP2 flattens into the array.

// optEntry is XINFO STREAM's first-entry/last-entry: the entry, or a null
// when the stream is empty.
func optEntry(e *streams.Entry) resp.Reply {
	if e == nil {
		return resp.Null{}
	}
	return Entry(*e)
}

// optInt is an integer that Redis sends as a null when unknown (XINFO
// entries-read and lag).
func optInt(v *int64) resp.Reply {
	if v == nil {
		return resp.Null{}
	}
	return resp.Int(*v)
}

// field is one key of an XINFO map.
func field(name string, v resp.Reply) resp.KV {
	return resp.KV{K: resp.Bulk(name), V: v}
}

// streamHeader is the fields both XINFO STREAM forms start with.
func streamHeader(h state.StreamHeader, more int) resp.Map {
	m := make(resp.Map, 0, 19+more)
	m = append(m,
		field("length", resp.Int(h.Length)),
		field("radix-tree-keys", resp.Int(h.RadixTreeKeys)),
		field("radix-tree-nodes", resp.Int(h.RadixTreeNodes)),
		field("last-generated-id", ID(h.LastGeneratedID)),
		field("max-deleted-entry-id", ID(h.MaxDeletedEntryID)),
		field("entries-added", resp.Int(h.EntriesAdded)),
		field("recorded-first-entry-id", ID(h.RecordedFirstEntryID)),
		// Redis 8.6: always present, in this order.
		field("idmp-duration", resp.Int(h.IDMP.Duration)),
		field("idmp-maxsize", resp.Int(h.IDMP.MaxSize)),
		field("pids-tracked", resp.Int(h.IDMP.PidsTracked)),
		field("iids-tracked", resp.Int(h.IDMP.IidsTracked)),
		field("iids-added", resp.Int(h.IDMP.IidsAdded)),
		field("iids-duplicates", resp.Int(h.IDMP.IidsDuplicates)),
	)
	if h.AckLevel != wire.AckDefault {
		// Issue #15: the stream's ACKLEVEL, shown when set on the stream
		// or when the node's default is not QUORUM (so a stream with the
		// defaults answers Redis's reply).
		m = append(m, field("acklevel", resp.Bulk(h.AckLevel.String())))
	}
	return appendRetention(m, h.Ret)
}

// appendRetention adds the retention fields (issue #15) of a stream with
// a retention or group-expiry setting; a stream with the defaults shows
// none, so its reply stays Redis's.
func appendRetention(m resp.Map, r *state.RetentionInfo) resp.Map {
	if r == nil {
		return m
	}
	return append(m,
		field("retention-maxlen", resp.Int(r.MaxLen)),
		field("retention-maxage", resp.Int(r.MaxAgeMs)),
		field("retention-policy", resp.Bulk(r.Policy)),
		field("retention-held", resp.Int(r.Held)),
		field("group-idle-expire", resp.Int(r.GroupIdleExpire)),
		field("groups-expired", resp.Int(r.GroupsExpired)),
	)
}

// StreamInfo is XINFO STREAM in Redis 7.2's field order.
func StreamInfo(si state.StreamInfo) resp.Reply {
	return append(streamHeader(si.StreamHeader, 3),
		field("groups", resp.Int(si.Groups)),
		field("first-entry", optEntry(si.FirstEntry)),
		field("last-entry", optEntry(si.LastEntry)),
	)
}

// StreamFullInfo is XINFO STREAM FULL in Redis 7.2's field order
// (xinfoReplyWithStreamInfo with full = 1).
func StreamFullInfo(fi state.StreamFullInfo) resp.Reply {
	groups := make(resp.Array, len(fi.Groups))
	for i, g := range fi.Groups {
		groups[i] = groupFull(g)
	}
	return append(streamHeader(fi.StreamHeader, 2),
		field("entries", Entries(fi.Entries)),
		field("groups", groups),
	)
}

// groupFull is one group of XINFO STREAM FULL.
func groupFull(g state.GroupFull) resp.Reply {
	consumers := make(resp.Array, len(g.Consumers))
	for i, c := range g.Consumers {
		consumers[i] = resp.Map{
			field("name", resp.Bulk(c.Name)),
			field("seen-time", resp.Int(c.SeenTimeMs)),
			field("active-time", resp.Int(c.ActiveTimeMs)),
			field("pel-count", resp.Int(c.PelCount)),
			field("pending", consumerPending(c.Pending)),
		}
	}
	return resp.Map{
		field("name", resp.Bulk(g.Name)),
		field("last-delivered-id", ID(g.LastDeliveredID)),
		field("entries-read", optInt(g.EntriesRead)),
		field("lag", optInt(g.Lag)),
		field("pel-count", resp.Int(g.PelCount)),
		field("nacked-count", resp.Int(g.NackedCount)),
		field("pending", groupPending(g.Pending)),
		field("consumers", consumers),
	}
}

// groupPending is a group's PEL in XINFO STREAM FULL: [id, consumer,
// delivery time, delivery count] per row, rendered as it is written out.
type groupPending []state.PendingFull

// StreamRESP writes the rows, checking the encoder after each
// (resp.Streamer).
func (l groupPending) StreamRESP(e *resp.Encoder) {
	e.Buf = resp.AppendHeader(e.Buf, '*', len(l))
	for i := range l {
		if e.Stopped() {
			return
		}
		p := &l[i]
		e.Buf = append(e.Buf, '*', '4', '\r', '\n')
		e.Buf = appendID(e.Buf, p.ID)
		e.Buf = resp.AppendHeader(e.Buf, '$', len(p.Consumer))
		e.Buf = append(e.Buf, p.Consumer...)
		e.Buf = append(e.Buf, '\r', '\n')
		e.Buf = appendInt(e.Buf, p.DeliveryTimeMs)
		e.Buf = appendInt(e.Buf, p.DeliveryCount)
		e.Check()
	}
}

// AppendRESP writes the whole array (resp.Appender).
func (l groupPending) AppendRESP(b []byte, proto int) []byte {
	return resp.AppendStreamer(b, l, proto)
}

// consumerPending is a consumer's PEL in XINFO STREAM FULL: [id, delivery
// time, delivery count] per row, rendered as it is written out.
type consumerPending []state.ConsumerPendingFull

// StreamRESP writes the rows, checking the encoder after each
// (resp.Streamer).
func (l consumerPending) StreamRESP(e *resp.Encoder) {
	e.Buf = resp.AppendHeader(e.Buf, '*', len(l))
	for i := range l {
		if e.Stopped() {
			return
		}
		p := &l[i]
		e.Buf = append(e.Buf, '*', '3', '\r', '\n')
		e.Buf = appendID(e.Buf, p.ID)
		e.Buf = appendInt(e.Buf, p.DeliveryTimeMs)
		e.Buf = appendInt(e.Buf, p.DeliveryCount)
		e.Check()
	}
}

// AppendRESP writes the whole array (resp.Appender).
func (l consumerPending) AppendRESP(b []byte, proto int) []byte {
	return resp.AppendStreamer(b, l, proto)
}

// appendInt writes an integer reply.
func appendInt(b []byte, v int64) []byte {
	b = append(b, ':')
	b = strconv.AppendInt(b, v, 10)
	return append(b, '\r', '\n')
}

// Groups is XINFO GROUPS: one map per group, in name order.
func Groups(gs []state.GroupInfo) resp.Reply {
	out := make(resp.Array, len(gs))
	for i, g := range gs {
		m := resp.Map{
			field("name", resp.Bulk(g.Name)),
			field("consumers", resp.Int(g.Consumers)),
			field("pending", resp.Int(g.Pending)),
			field("last-delivered-id", ID(g.LastDeliveredID)),
			field("entries-read", optInt(g.EntriesRead)),
			field("lag", optInt(g.Lag)),
		}
		out[i] = groupConfigFields(m, g)
	}
	return out
}

// groupConfigFields appends XGROUP CONFIG's settings and the dead-lettered
// count (issue #15) to a group's XINFO GROUPS map, only when the group has
// a setting or has dead-lettered something: a group without them answers
// exactly as Redis's does. max-deliveries and visibility are 0 for NONE,
// dead-letter-key null.
func groupConfigFields(m resp.Map, g state.GroupInfo) resp.Map {
	if g.Config.IsZero() && g.DeadLettered == 0 {
		return m
	}
	dlq := resp.Reply(resp.Null{})
	if g.Config.DeadLetterKey != "" {
		dlq = resp.Bulk(g.Config.DeadLetterKey)
	}
	return append(m,
		field("max-deliveries", resp.Int(g.Config.MaxDeliveries)),
		field("dead-letter-key", dlq),
		field("dead-lettered", resp.Int(g.DeadLettered)),
		field("visibility", resp.Int(g.Config.VisibilityMs)),
	)
}

// Consumers is XINFO CONSUMERS (7.2: idle since last seen, inactive since
// last successful read, -1 if never).
func Consumers(cs []state.ConsumerInfo) resp.Reply {
	out := make(resp.Array, len(cs))
	for i, c := range cs {
		out[i] = resp.Map{
			field("name", resp.Bulk(c.Name)),
			field("pending", resp.Int(c.Pending)),
			field("idle", resp.Int(c.IdleMs)),
			field("inactive", resp.Int(c.InactiveMs)),
		}
	}
	return out
}

// StreamInfoResult is XINFO STREAM's Format: the FULL form when full.
func StreamInfoResult(full bool, defaultAck wire.AckLevel) func(any, error) resp.Reply {
	return func(res any, err error) resp.Reply {
		if err != nil {
			return Error(err)
		}
		if full {
			fi, _ := res.(state.StreamFullInfo)
			if fi.AckLevel == wire.AckDefault && defaultAck != wire.AckQuorum {
				fi.AckLevel = defaultAck
			}
			return StreamFullInfo(fi)
		}
		si, _ := res.(state.StreamInfo)
		if si.AckLevel == wire.AckDefault && defaultAck != wire.AckQuorum {
			si.AckLevel = defaultAck
		}
		return StreamInfo(si)
	}
}

// GroupsResult is XINFO GROUPS's Format.
func GroupsResult(res any, err error) resp.Reply {
	if err != nil {
		return Error(err)
	}
	gs, _ := res.([]state.GroupInfo)
	return Groups(gs)
}

// ConsumersResult is XINFO CONSUMERS's Format.
func ConsumersResult(res any, err error) resp.Reply {
	if err != nil {
		return Error(err)
	}
	cs, _ := res.([]state.ConsumerInfo)
	return Consumers(cs)
}
