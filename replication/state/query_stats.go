package state

import (
	"container/heap"
	"sort"

	"streamd/replication/wire"
)

// MetricsStats answers wire.MetricsQuery: keyspace totals over every
// database and the details of the longest streams.
type MetricsStats struct {
	// Streams is the number of stream keys (every key is a stream); Entries
	// the live entries in them; Groups, Consumers and Pending the consumer
	// groups, their consumers and their pending entries, all summed over
	// every database.
	Streams, Entries, Groups, Consumers, Pending int64
	// MemoryBytes is the memory the keys hold (the accounting of
	// memory.go, without the deadlines' table).
	MemoryBytes int64
	// Top details at most MaxStreams streams, the longest first (ties by
	// key, then database); Omitted is how many streams it leaves out.
	Top     []StreamMetrics
	Omitted int64
}

// StreamMetrics is one stream's figures.
type StreamMetrics struct {
	DB  int
	Key string
	// Length is XLEN; EntriesAdded every entry ever added (XINFO
	// entries-added).
	Length, EntriesAdded int64
	// Groups are the stream's consumer groups in name order.
	Groups []GroupMetrics
}

// GroupMetrics is one consumer group's figures.
type GroupMetrics struct {
	Name string
	// Pending is the PEL size, Consumers the consumers known to the group.
	Pending, Consumers int64
	// Lag is XINFO GROUPS lag (entries not yet delivered to the group);
	// LagKnown is false where XINFO replies null.
	Lag      int64
	LagKnown bool
	// OldestPendingAgeMs is the time since the last delivery of the
	// group's oldest pending entry (the lowest ID in its PEL), clamped at
	// 0; 0 when nothing is pending.
	OldestPendingAgeMs int64
}

// MetricsStats answers q at nowMs. It walks every key once (and every
// group of the streams it details), so it costs O(keys + groups); the
// bytes are the keys' counted bytes, as INFO used_memory sums them.
func (ks *Keyspace) MetricsStats(q wire.MetricsQuery, nowMs int64) *MetricsStats {
	nowMs = ks.clampNow(nowMs)
	out := &MetricsStats{}
	top := &streamHeap{}
	for dbi, d := range ks.dbs {
		for key, o := range d.keys {
			if d.expired(key, nowMs) {
				continue
			}
			out.Streams++
			out.Entries += o.Stream.Len()
			out.MemoryBytes += o.mem // the memory accounting (memory.go)
			for _, g := range o.Groups.All() {
				out.Groups++
				out.Consumers += int64(len(g.Consumers()))
				out.Pending += int64(g.PEL.Len())
			}
			if q.MaxStreams <= 0 {
				continue
			}
			c := candidate{db: dbi, key: key, obj: o}
			if top.Len() < q.MaxStreams {
				heap.Push(top, c)
			} else if c.before((*top)[0]) {
				(*top)[0] = c
				heap.Fix(top, 0)
			}
		}
	}
	sort.Slice(*top, func(i, j int) bool { return (*top)[i].before((*top)[j]) })
	out.Top = make([]StreamMetrics, 0, top.Len())
	for _, c := range *top {
		out.Top = append(out.Top, streamMetrics(c, nowMs))
	}
	out.Omitted = out.Streams - int64(len(out.Top))
	return out
}

// streamMetrics returns a detailed stream's figures.
func streamMetrics(c candidate, nowMs int64) StreamMetrics {
	s := c.obj.Stream
	sm := StreamMetrics{DB: c.db, Key: c.key, Length: s.Len(), EntriesAdded: s.EntriesAdded()}
	for _, g := range c.obj.Groups.All() {
		gm := GroupMetrics{Name: g.Name, Pending: int64(g.PEL.Len()), Consumers: int64(len(g.Consumers()))}
		gm.Lag, gm.LagKnown = g.Lag(s)
		if n, ok := g.PEL.First(); ok {
			gm.OldestPendingAgeMs = max(nowMs-n.DeliveryMs, 0)
		}
		sm.Groups = append(sm.Groups, gm)
	}
	return sm
}

// candidate is a stream considered for MetricsStats.Top.
type candidate struct {
	db  int
	key string
	obj *Object
}

// before orders candidates: longer first, then by key, then by database.
func (c candidate) before(o candidate) bool {
	if a, b := c.obj.Stream.Len(), o.obj.Stream.Len(); a != b {
		return a > b
	}
	if c.key != o.key {
		return c.key < o.key
	}
	return c.db < o.db
}

// streamHeap keeps the best candidates seen with the worst at the root, so
// a better one replaces it.
type streamHeap []candidate

func (h streamHeap) Len() int           { return len(h) }
func (h streamHeap) Less(i, j int) bool { return h[j].before(h[i]) }
func (h streamHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

// Push adds x (a candidate).
func (h *streamHeap) Push(x any) { *h = append(*h, x.(candidate)) }

// Pop removes the last element.
func (h *streamHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
