package state

import (
	"sort"

	"streamd/streams"
)

// Redis 8.6's idempotent production (XADD … IDMP/IDMPAUTO): per stream, a
// set of producers, each holding the iids it sent with the stream ID each
// was added as, so that a retried XADD answers the original ID instead of
// appending again.
//
// Where Redis expires iids with a local cron (every replica on its own
// clock), here expiry is part of applying a write: every XADD, XCFGSET and
// XIDMPRECORD on the stream first drops the iids recorded at or before the
// write's time minus the stream's duration (and the server's sweep logs
// wire.IDMPExpired for streams no write touches). Each iid keeps the time it was
// recorded at (the log entry's time, not its stream ID's ms: Redis's
// #15836), so every replica holds exactly the same iids. A producer exists
// only while it holds an iid (Redis's #15840: no empty producer after a
// failed XADD).

// Default and bounds of the IDMP settings (stream-idmp-duration in seconds,
// stream-idmp-maxsize in iids per producer), as Redis 8.6.
const (
	DefaultIDMPDuration = 100
	DefaultIDMPMaxSize  = 100
	MaxIDMPDuration     = 86400
	MaxIDMPMaxSize      = 10000
)

// iidRec is one recorded iid: on its producer's list (oldest first) and on
// the stream's list of all iids in the order they were recorded (so by
// time: the keyspace's time never goes backwards).
type iidRec struct {
	iid          string
	id           streams.ID
	atMs         int64 // when it was recorded (log entry time)
	p            *producer
	pNext        *iidRec
	gPrev, gNext *iidRec
}

// producer is one pid's iids.
type producer struct {
	pid        string
	iids       map[string]*iidRec
	head, tail *iidRec // oldest, newest
}

// IDMP is a stream's idempotency state: its settings, its producers and the
// lifetime counters XINFO STREAM shows. A nil *IDMP is a stream with the
// default settings and nothing recorded. The global list's head is always
// the head of its producer's list (both are in recording order), so expiry
// pops producer heads.
type IDMP struct {
	durationS, maxSize int64
	producers          map[string]*producer
	head, tail         *iidRec
	iids               int64
	added, duplicates  int64
	// mem is what the producers and their iids hold (idmp_memory.go).
	mem int64
}

// newIDMP returns an empty state with the given settings.
func newIDMP(durationS, maxSize int64) *IDMP {
	return &IDMP{durationS: durationS, maxSize: maxSize, producers: map[string]*producer{}}
}

// isDefault reports whether m holds nothing a nil state would not: the
// default settings, no iid, zero counters.
func (m *IDMP) isDefault() bool {
	return m == nil || (m.durationS == DefaultIDMPDuration && m.maxSize == DefaultIDMPMaxSize &&
		m.iids == 0 && m.added == 0 && m.duplicates == 0)
}

// settings returns the stream's duration and maxsize.
func (m *IDMP) settings() (durationS, maxSize int64) {
	if m == nil {
		return DefaultIDMPDuration, DefaultIDMPMaxSize
	}
	return m.durationS, m.maxSize
}

// expire drops the iids recorded at or before nowMs - duration.
func (m *IDMP) expire(nowMs int64) {
	if m == nil {
		return
	}
	cutoff := nowMs - m.durationS*1000
	for m.head != nil && m.head.atMs <= cutoff {
		m.removeHead(m.head.p)
	}
}

// lookup returns the stream ID recorded for (pid, iid).
func (m *IDMP) lookup(pid, iid string) (streams.ID, bool) {
	if m == nil {
		return streams.ID{}, false
	}
	if p := m.producers[pid]; p != nil {
		if r := p.iids[iid]; r != nil {
			return r.id, true
		}
	}
	return streams.ID{}, false
}

// record adds (pid, iid) → id at nowMs, creating the producer, and evicts
// the producer's oldest iid if it now holds more than maxsize.
func (m *IDMP) record(pid, iid string, id streams.ID, nowMs int64) {
	if m.tail != nil && nowMs < m.tail.atMs {
		// The keyspace's time never goes back, but a RESTOREd stream
		// may carry times from a server whose clock was ahead: keep the
		// stream's list in time order, which expiry and snapshots rely on.
		nowMs = m.tail.atMs
	}
	m.insert(pid, iid, id, nowMs)
	m.added++
	if p := m.producers[pid]; int64(len(p.iids)) > m.maxSize {
		m.removeHead(p)
	}
}

// insert links a new record at the tails of its producer's and the
// stream's lists.
func (m *IDMP) insert(pid, iid string, id streams.ID, atMs int64) {
	p := m.producers[pid]
	if p == nil {
		p = &producer{pid: pid, iids: map[string]*iidRec{}}
		m.producers[pid] = p
		m.mem += producerMemory(p)
	}
	r := &iidRec{iid: iid, id: id, atMs: atMs, p: p}
	m.mem += iidMemory(r, len(p.iids))
	p.iids[iid] = r
	if p.tail == nil {
		p.head = r
	} else {
		p.tail.pNext = r
	}
	p.tail = r
	r.gPrev = m.tail
	if m.tail == nil {
		m.head = r
	} else {
		m.tail.gNext = r
	}
	m.tail = r
	m.iids++
}

// removeHead drops p's oldest iid, and p when it was its last.
func (m *IDMP) removeHead(p *producer) {
	r := p.head
	delete(p.iids, r.iid)
	m.mem -= iidMemory(r, len(p.iids))
	p.head = r.pNext
	if p.head == nil {
		p.tail = nil
		delete(m.producers, p.pid)
		m.mem -= producerMemory(p)
	}
	if r.gPrev == nil {
		m.head = r.gNext
	} else {
		r.gPrev.gNext = r.gNext
	}
	if r.gNext == nil {
		m.tail = r.gPrev
	} else {
		r.gNext.gPrev = r.gPrev
	}
	*r = iidRec{}
	m.iids--
}

// clear drops every producer (XCFGSET that changes a setting); the
// counters stay.
func (m *IDMP) clear() {
	m.producers = map[string]*producer{}
	m.head, m.tail, m.iids, m.mem = nil, nil, 0, 0
}

// sortedProducers returns the producers by pid (snapshot order).
func (m *IDMP) sortedProducers() []*producer {
	ps := make([]*producer, 0, len(m.producers))
	for _, p := range m.producers {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].pid < ps[j].pid })
	return ps
}

// iidsOf calls fn for p's iids, oldest first.
func (p *producer) iidsOf(fn func(r *iidRec)) {
	for r := p.head; r != nil; r = r.pNext {
		fn(r)
	}
}

// restoreIDMP builds a state from producers read in pid order, each with
// its iids oldest first: the stream's list is their merge by time (ties
// in pid order), which keeps each producer's order, so the head invariant
// holds. It reports false when a producer is empty, a pid or an iid is
// repeated, or a producer's times go backwards.
func restoreIDMP(durationS, maxSize, added, duplicates int64, prods []restoredProducer) (*IDMP, bool) {
	m := newIDMP(durationS, maxSize)
	m.added, m.duplicates = added, duplicates
	type flat struct {
		pid string
		r   restoredIID
	}
	var all []flat
	pids := make(map[string]bool, len(prods))
	for _, p := range prods {
		if len(p.iids) == 0 || pids[p.pid] {
			return nil, false
		}
		pids[p.pid] = true
		seen := make(map[string]bool, len(p.iids))
		for i, r := range p.iids {
			if seen[r.iid] || (i > 0 && r.atMs < p.iids[i-1].atMs) {
				return nil, false
			}
			seen[r.iid] = true
			all = append(all, flat{p.pid, r})
		}
	}
	// Stable: equal times keep pid order, and a producer's own order.
	sort.SliceStable(all, func(i, j int) bool { return all[i].r.atMs < all[j].r.atMs })
	for _, f := range all {
		m.insert(f.pid, f.r.iid, f.r.id, f.r.atMs)
	}
	return m, true
}

// restoredProducer and restoredIID are a producer as a snapshot holds it.
type restoredProducer struct {
	pid  string
	iids []restoredIID
}

type restoredIID struct {
	iid  string
	id   streams.ID
	atMs int64
}

// clone returns a deep copy of m (nil for nil).
func (m *IDMP) clone() *IDMP {
	if m == nil {
		return nil
	}
	c := newIDMP(m.durationS, m.maxSize)
	c.added, c.duplicates = m.added, m.duplicates
	for r := m.head; r != nil; r = r.gNext {
		c.insert(r.p.pid, r.iid, r.id, r.atMs)
	}
	return c
}

// IDMPInfo is XINFO STREAM's idempotency fields.
type IDMPInfo struct {
	Duration, MaxSize         int64
	PidsTracked, IidsTracked  int64
	IidsAdded, IidsDuplicates int64
}

// info returns XINFO STREAM's fields at nowMs: the iids tracked are those
// the next write would keep (expiry happens on writes, but a read sees
// only the live ones, as Redis's cron keeps them).
func (m *IDMP) info(nowMs int64) IDMPInfo {
	d, s := m.settings()
	i := IDMPInfo{Duration: d, MaxSize: s}
	if m == nil {
		return i
	}
	i.PidsTracked, i.IidsTracked = int64(len(m.producers)), m.iids
	i.IidsAdded, i.IidsDuplicates = m.added, m.duplicates
	cutoff := nowMs - m.durationS*1000
	var gone map[*producer]int
	for r := m.head; r != nil && r.atMs <= cutoff; r = r.gNext {
		if gone == nil {
			gone = map[*producer]int{}
		}
		gone[r.p]++
		i.IidsTracked--
	}
	for p, n := range gone {
		if n == len(p.iids) {
			i.PidsTracked--
		}
	}
	return i
}
