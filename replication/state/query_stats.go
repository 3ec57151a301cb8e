package state

import (
	"container/heap"
	"sort"

	"streamd/replication/wire"
	"streamd/streams"
)

// MetricsStats answers wire.MetricsQuery: keyspace totals over every
// database and the details of the longest streams.
type MetricsStats struct {
	// Streams is the number of stream keys (every key is a stream); Entries
	// the live entries in them; Groups, Consumers and Pending the consumer
	// groups, their consumers and their pending entries, all summed over
	// every database.
	Streams, Entries, Groups, Consumers, Pending int64
	// MemoryBytes is the estimated memory the keyspace holds (see
	// estimateMemory for what it counts).
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

// Memory estimate constants (bytes), from the Go layout of the engine's
// structures on 64-bit platforms, rounded up for allocator and map/btree
// overhead. The estimate is an order of magnitude for dashboards, not an
// exact account: Go's own heap figures are in go_memstats_*.
const (
	// memKey: the keyspace map entry, the SCAN order item, the Object, the
	// Stream and its node btree (plus the key's bytes, added separately).
	memKey = 256
	// memNode: a stream node's header (its Entry and tombstone slices are
	// counted per slot: memNodeSlot times the slice capacity).
	memNode = 96
	// memNodeSlot: one Entry (ID and fields slice header) and its
	// tombstone flag.
	memNodeSlot = 41
	// memField: a field or value's slice header (plus its bytes).
	memField = 24
	// memGroup, memConsumer: a group (with its PEL and indexes) and a
	// consumer, plus their names' bytes.
	memGroup    = 256
	memConsumer = 64
	// memPending: a NACK in the PEL btree and its ID in the owner's index.
	memPending = 96
	// memSampleEntries is how many entries at each end of a stream are
	// measured to estimate its mean entry size.
	memSampleEntries = 8
)

// MetricsStats answers q at nowMs. It walks every key once (and every
// group of the streams it details), so it costs O(keys + groups); entry
// bytes are sampled, not summed.
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
			out.MemoryBytes += ks.estimateMemory(key, o)
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

// estimateMemory estimates the bytes key's stream holds: the key, its
// nodes (header and entry slots at the node capacity the engine allocates),
// the entries' fields and values (mean size of up to memSampleEntries at
// each end, times the length; exact for short streams), and its groups,
// consumers and pending entries.
func (ks *Keyspace) estimateMemory(key string, o *Object) int64 {
	s := o.Stream
	slots := int64(ks.nodeMaxEntries())
	if slots <= 0 || slots > 1024 {
		slots = 16 // as streams.newNode sizes a node
	}
	n := int64(memKey+len(key)) + s.NodeCount()*(memNode+slots*memNodeSlot)
	if length := s.Len(); length > 0 {
		var sampled, bytes int64
		measure := func(e streams.Entry) bool {
			sampled++
			for _, f := range e.Fields {
				bytes += memField + int64(len(f))
			}
			return true
		}
		if length <= 2*memSampleEntries {
			s.Ascend(streams.MinID, measure)
		} else {
			s.Ascend(streams.MinID, func(e streams.Entry) bool { measure(e); return sampled < memSampleEntries })
			s.Descend(streams.MaxID, func(e streams.Entry) bool { measure(e); return sampled < 2*memSampleEntries })
		}
		if sampled > 0 {
			n += bytes * length / sampled
		}
	}
	for _, g := range o.Groups.All() {
		n += int64(memGroup+len(g.Name)) + int64(g.PEL.Len())*memPending
		for _, c := range g.Consumers() {
			n += int64(memConsumer + len(c.Name))
		}
	}
	return n
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
