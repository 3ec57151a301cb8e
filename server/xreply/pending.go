package xreply

import (
	"strconv"

	"streamd/replication/state"
	"streamd/server/resp"
	"streamd/streams"
)

// PendingSummary is XPENDING's summary form: [count, min-id, max-id,
// [[consumer, count]...]] with each consumer's count a bulk string (Redis's
// addReplyBulkLongLong), and null, null, null-array when nothing is pending.
func PendingSummary(res any, err error) resp.Reply {
	if err != nil {
		return Error(err)
	}
	ps, _ := res.(state.PendingSummary)
	if ps.Count == 0 {
		return resp.Array{resp.Int(0), resp.Null{}, resp.Null{}, resp.NullArray{}}
	}
	consumers := resp.Array{}
	for _, cp := range ps.Consumers {
		if cp.Count == 0 {
			continue // Redis lists only consumers with pending entries
		}
		consumers = append(consumers, resp.Array{resp.Bulk(cp.Name), resp.Bulk(strconv.AppendInt(nil, cp.Count, 10))})
	}
	return resp.Array{resp.Int(ps.Count), ID(ps.Min), ID(ps.Max), consumers}
}

// PendingEntries is XPENDING's extended form: [[id, consumer, idle-ms,
// delivery-count]...].
func PendingEntries(res any, err error) resp.Reply {
	if err != nil {
		return Error(err)
	}
	pes, _ := res.([]state.PendingEntry)
	out := make(resp.Array, len(pes))
	for i, p := range pes {
		out[i] = resp.Array{ID(p.ID), resp.Bulk(p.Consumer), resp.Int(p.IdleMs), resp.Int(p.Deliveries)}
	}
	return out
}

// PendingOf is XPENDING's extended form for the consumer named "" (which
// the engine reads as "all consumers"): of every pending entry in the
// range, that consumer's, up to limit.
func PendingOf(limit int64) func(any, error) resp.Reply {
	return func(res any, err error) resp.Reply {
		if err != nil {
			return Error(err)
		}
		all, _ := res.([]state.PendingEntry)
		own := []state.PendingEntry{}
		for _, p := range all {
			if int64(len(own)) == limit {
				break
			}
			if p.Consumer == "" {
				own = append(own, p)
			}
		}
		return PendingEntries(own, nil)
	}
}

// Claimed is XCLAIM's Format: the claimed entries, or their IDs (JUSTID).
func Claimed(justID bool) func(any, error) resp.Reply {
	return func(res any, err error) resp.Reply {
		if err != nil {
			return Error(err)
		}
		es, _ := res.([]streams.Entry)
		if justID {
			return EntryIDs(es)
		}
		return Entries(es)
	}
}

// AutoClaimed is XAUTOCLAIM's Format: [next-id, claimed entries (or their
// IDs with JUSTID), deleted IDs].
func AutoClaimed(justID bool) func(any, error) resp.Reply {
	return func(res any, err error) resp.Reply {
		if err != nil {
			return Error(err)
		}
		ac, _ := res.(state.AutoClaimResult)
		claimed := Entries(ac.Entries)
		if justID {
			claimed = EntryIDs(ac.Entries)
		}
		return resp.Array{ID(ac.Next), claimed, IDs(ac.Deleted)}
	}
}

// Read renders an XREAD/XREADGROUP answer for a client speaking proto: per
// stream [key, entries] (a RESP3 map key → entries, as Redis 7 sends it),
// or the null array when no stream has anything.
func Read(res any, err error, proto int) resp.Reply {
	if err != nil {
		return Error(err)
	}
	kes, _ := res.([]state.KeyEntries)
	if len(kes) == 0 {
		return resp.NullArray{}
	}
	if proto >= 3 {
		m := make(resp.Map, len(kes))
		for i, ke := range kes {
			m[i] = resp.KV{K: resp.Bulk(ke.Key), V: readEntries(ke)}
		}
		return m
	}
	out := make(resp.Array, len(kes))
	for i, ke := range kes {
		out[i] = resp.Array{resp.Bulk(ke.Key), readEntries(ke)}
	}
	return out
}
