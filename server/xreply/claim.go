package xreply

import (
	"streamd/replication/state"
	"streamd/server/resp"
	"streamd/streams"
)

// ClaimEntries is a stream's entries in an XREADGROUP ... CLAIM answer
// (Redis 8.4, integers since 8.4.0 GA): each one [id, [field, value, ...],
// idle-ms, delivery-count], the same in RESP2 and RESP3.
type ClaimEntries struct {
	Entries []streams.Entry
	Info    []state.ClaimInfo
}

// AppendRESP writes the array (resp.Appender).
func (l ClaimEntries) AppendRESP(b []byte, proto int) []byte {
	b = resp.AppendHeader(b, '*', len(l.Entries))
	for i, e := range l.Entries {
		b = append(b, '*', '4', '\r', '\n')
		b = appendID(b, e.ID)
		b = resp.AppendHeader(b, '*', len(e.Fields))
		for _, f := range e.Fields {
			b = resp.AppendBulk(b, '$', f)
		}
		b = resp.AppendReply(b, resp.Int(l.Info[i].IdleMs), proto)
		b = resp.AppendReply(b, resp.Int(l.Info[i].DeliveryCount), proto)
	}
	return b
}

// readEntries is one stream's entries in an XREAD/XREADGROUP answer.
func readEntries(ke state.KeyEntries) resp.Reply {
	if ke.Claim != nil {
		return ClaimEntries{Entries: ke.Entries, Info: ke.Claim}
	}
	return Entries(ke.Entries)
}
