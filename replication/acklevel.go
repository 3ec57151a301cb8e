package replication

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hashicorp/raft"

	"streamd/replication/logstore"
	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/streams"
)

// ACKLEVEL LEADER (issue #15): an XADD to a stream at that level is
// answered once its log entry is durable in the leader's own log, before a
// majority has it, with exactly the ID the FSM will give it.
//
// The ID must be known before the entry is applied, so the batcher (the
// one goroutine that orders entries into the log) assigns it: it projects
// the stream's last ID and logs the XADD with an explicit ID, which the FSM
// then cannot refuse. The projection is only trusted when the batcher knows
// every log entry before this one that writes the key:
//
//   - ready: a raft Barrier issued in the current term has completed after
//     the last failed or timed-out proposal, so every entry from earlier
//     terms (written by another leader) and every entry whose outcome was
//     lost is applied. A new term, or any failure, clears ready until the
//     next barrier completes.
//   - per key, the entries in flight that write it are counted: the last
//     ID of a key with nothing in flight is the state's; a key whose only
//     writes in flight are XADDs assigned here has the last of them as its
//     last ID; any other write in flight (XSETID, DEL, XCFGSET, MULTI, …)
//     or a keyless one (FLUSHALL, SWAPDB, COPY, EXEC) stops assignments to
//     it until it is applied. Those XADDs simply wait for the quorum.
//     Consumer-group reads, acknowledgements, claims, XDEL and XTRIM of
//     the stream itself do not count (keepsLastID).
//
// The early answer is given by the log store wrapper (durableLogs) when
// raft's StoreLogs of the entry returns on the leader (fsynced under
// appendfsync always) and only if the entry was stored in the term the ID
// was assigned in. What such an answer can lose is in the README
// ("Delivery guarantees").

// dbKey names a key of a database.
type dbKey struct {
	db  int
	key string
}

// keyTrack is a key's writes in flight.
type keyTrack struct {
	assigned int        // XADDs with an ID assigned here, in flight
	other    int        // any other writes in flight
	stale    bool       // an other write followed an assigned one: project from the state again once idle
	last     streams.ID // the last assigned ID (valid while assigned > 0 and !stale)
	target   state.AckTarget
}

// ackTracker is a shard's ID assignment state (see above). plan runs on
// the batcher goroutine; done on the goroutines resolving entries.
type ackTracker struct {
	mu    sync.Mutex
	term  uint64
	ready bool
	// epoch changes whenever ready is cleared; a barrier makes ready only
	// if no clearing happened since it was issued.
	epoch       uint64
	barrierOut  bool
	wantBarrier bool // a LEADER XADD found ready unset (plan issues the barrier)
	keys        map[dbKey]*keyTrack
	global      int // keyless writes in flight
	configs     int // XGROUP CONFIGs in flight (mayDeadLetter)

	// defaultLevel is stream-default-acklevel (wire.AckLevel).
	defaultLevel atomic.Int32
	// leaderSeen is set once the state has had a stream at ACKLEVEL
	// LEADER (the FSM sets it; it stays set). Until then, or while the
	// default is QUORUM and it is unset, plan counts nothing (active
	// false): no per-write cost for shards that never use LEADER.
	leaderSeen atomic.Bool
	// active is whether plan counted the last batch (batcher goroutine
	// only). Becoming active clears ready: writes planned while inactive
	// were not counted, and the barrier a LEADER XADD then waits for is
	// applied after all of them.
	active bool
	// Counters for INFO/metrics: XADDs answered early, XADDs at LEADER
	// level that waited for the quorum, and early answers whose applied
	// result differed (a bug: logged).
	leaderAcked, fellBack, mismatches atomic.Int64
	// quorumLat and leaderLat are the XADD answer latencies by level.
	quorumLat, leaderLat logstore.LatencyHist
}

// ackBatch is what plan counted for one entry, undone by done.
type ackBatch struct {
	keys     []dbKey // one per other write counted
	assigned []dbKey // one per assigned XADD
	global   int
	configs  int
	early    *earlyBatch // nil: nothing assigned
}

// earlyBatch is the XADDs of one entry whose IDs were assigned: answered
// when the entry is stored locally in term (stored), or when it resolves.
type earlyBatch struct {
	mu       sync.Mutex
	term     uint64
	items    []*Pending
	ids      []streams.ID
	answered bool // the early answer was given
	finished bool // the entry resolved (finish took over)
	t        *ackTracker
	b        *batcher
}

// finish marks the entry resolved and reports whether it was answered
// early (then the batcher had released it).
func (eb *earlyBatch) finish() bool {
	eb.mu.Lock()
	defer eb.mu.Unlock()
	eb.finished = true
	return eb.answered
}

// SetDefaultAckLevel sets stream-default-acklevel: the level of a stream
// XCFGSET never gave one (wire.AckQuorum or wire.AckLeader).
func (s *Shard) SetDefaultAckLevel(l wire.AckLevel) { s.acks.defaultLevel.Store(int32(l)) }

// AckStats returns how many XADDs were answered at ACKLEVEL LEADER before
// commit, how many at that level waited for the quorum instead (the ID
// could not be assigned safely), and early answers whose applied result
// differed (always 0 unless there is a bug).
func (s *Shard) AckStats() (leaderAcked, fellBack, mismatches int64) {
	return s.acks.leaderAcked.Load(), s.acks.fellBack.Load(), s.acks.mismatches.Load()
}

// globalWrite reports whether cmd may change keys it does not name (or
// another database's), so no projection can be trusted while it is in
// flight.
func globalWrite(cmd wire.Command) bool {
	switch cmd.(type) {
	case wire.Exec, wire.Copy, wire.SwapDB, wire.FlushAll, wire.FlushDB:
		return true
	}
	return len(cmd.Keys()) == 0
}

// mayDeadLetter reports whether cmd is a read or claim on a consumer group
// with a dead-letter stream (XGROUP CONFIG DEADLETTER): applying it may
// append to that stream, which cmd does not name, so it counts as a global
// write. While an XGROUP CONFIG is in flight every such command counts (it
// may be applied after the CONFIG gave its group a dead-letter stream).
// locked tracks the state's read lock as in assign. t.mu held.
func (t *ackTracker) mayDeadLetter(s *Shard, cmd wire.Command, now int64, locked *bool) bool {
	var db int
	var group string
	var keys []string
	switch c := cmd.(type) {
	case wire.XReadGroup:
		db, group = c.DB, c.Group
		for _, rs := range c.Streams {
			keys = append(keys, rs.Key)
		}
	case wire.XClaim:
		db, group, keys = c.DB, c.Group, []string{c.Key}
	case wire.XAutoClaim:
		db, group, keys = c.DB, c.Group, []string{c.Key}
	default:
		return false
	}
	if t.configs > 0 {
		return true
	}
	if !*locked {
		s.mu.RLock()
		*locked = true
	}
	for _, k := range keys {
		if s.ks.DeadLetters(db, k, group, now) {
			return true
		}
	}
	return false
}

// keepsLastID returns the keys of cmd whose last ID cmd cannot change, nor
// whether they exist (but for expiry, which plan handles): a consumer
// group's reads, acknowledgements and claims, and deletions and trims,
// on their own stream. Writes in flight to a key only through these do
// not stop assignments to it, so producers at LEADER level keep their
// early answers while consumers work. Any other key such a command names
// (a dead-letter stream it appends to, say) is still counted: a command
// added here must not move another key's last ID without naming it.
func keepsLastID(cmd wire.Command) []string {
	switch c := cmd.(type) {
	case wire.XReadGroup:
		keys := make([]string, len(c.Streams))
		for i, rs := range c.Streams {
			keys[i] = rs.Key
		}
		return keys
	case wire.XAck:
		return []string{c.Key}
	case wire.XClaim:
		return []string{c.Key}
	case wire.XAutoClaim:
		return []string{c.Key}
	case wire.XNack:
		return []string{c.Key}
	case wire.XDel:
		return []string{c.Key}
	case wire.XTrim:
		return []string{c.Key}
	case wire.XDelEx:
		return []string{c.Key}
	case wire.XAckDel:
		return []string{c.Key}
	case wire.XGroupCreate:
		return []string{c.Key}
	case wire.XGroupSetID:
		return []string{c.Key}
	case wire.XGroupDestroy:
		return []string{c.Key}
	case wire.XGroupCreateConsumer:
		return []string{c.Key}
	case wire.XGroupDelConsumer:
		return []string{c.Key}
	}
	return nil
}

// plan counts batch's writes and assigns the IDs of the XADDs to LEADER
// streams it can (rewriting their commands to explicit IDs). It runs on
// the batcher goroutine before the entry is handed to raft.
// measuring reports whether ACKLEVEL LEADER is in use on the shard (a
// stream has had it, or it is the default): only then are XADDs timed for
// streamd_xadd_ack_duration_seconds (a clock read per XADD costs the
// others a few percent of their throughput).
func (t *ackTracker) measuring() bool {
	return wire.AckLevel(t.defaultLevel.Load()) == wire.AckLeader || t.leaderSeen.Load()
}

func (t *ackTracker) plan(s *Shard, batch []*Pending, now int64) *ackBatch {
	if !t.measuring() {
		t.active = false
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.active {
		t.active = true
		t.clearReady()
	}
	if t.keys == nil {
		t.keys = map[dbKey]*keyTrack{}
	}
	if term := s.raft.CurrentTerm(); term != t.term {
		t.term = term
		t.clearReady()
	}
	ab := &ackBatch{}
	def := wire.AckLevel(t.defaultLevel.Load())
	locked := false
	for _, p := range batch {
		if x, ok := p.cmd.(wire.XAdd); ok {
			k := dbKey{x.DB, x.Key}
			kt := t.keys[k]
			if id, target, ok := t.assign(s, x, kt, def, now, &locked); ok {
				if kt == nil {
					kt = &keyTrack{target: target}
					t.keys[k] = kt
				}
				kt.assigned++
				kt.last = id
				x.ID = streams.IDSpec{ID: id}
				p.cmd = x
				ab.assigned = append(ab.assigned, k)
				if ab.early == nil {
					ab.early = &earlyBatch{term: t.term, t: t, b: s.batcher}
				}
				ab.early.items = append(ab.early.items, p)
				ab.early.ids = append(ab.early.ids, id)
				p.early, p.lead = ab.early, &leadPending{id: id, applied: make(chan struct{})}
				continue
			}
		}
		if _, ok := p.cmd.(wire.XGroupConfig); ok {
			t.configs++
			ab.configs++
		}
		if globalWrite(p.cmd) || t.mayDeadLetter(s, p.cmd, now, &locked) {
			t.global++
			ab.global++
			continue
		}
		db := p.cmd.Database()
		keep := keepsLastID(p.cmd)
		for _, key := range p.cmd.Keys() {
			if slices.Contains(keep, key) {
				continue
			}
			k := dbKey{db, key}
			kt := t.keys[k]
			if kt == nil {
				kt = &keyTrack{}
				t.keys[k] = kt
			}
			kt.other++
			if kt.assigned > 0 {
				kt.stale = true
			}
			ab.keys = append(ab.keys, k)
		}
	}
	if locked {
		s.mu.RUnlock()
	}
	if t.wantBarrier && !t.ready && !t.barrierOut {
		t.barrier(s)
	}
	t.wantBarrier = false
	return ab
}

// assign returns the ID for XADD x if it is to a LEADER stream and the ID
// can be projected safely; locked tracks the state's read lock (taken at
// most once per batch, released by plan).
func (t *ackTracker) assign(s *Shard, x wire.XAdd, kt *keyTrack, def wire.AckLevel, now int64, locked *bool) (streams.ID, state.AckTarget, bool) {
	if !x.IDMP.IsZero() {
		return streams.ID{}, state.AckTarget{}, false // a duplicate answers another ID
	}
	var target state.AckTarget
	var last streams.ID
	switch {
	case kt == nil:
		if !*locked {
			s.mu.RLock()
			*locked = true
		}
		target = s.ks.AckTarget(x.DB, x.Key, now)
		last = target.LastID
	case kt.other == 0 && !kt.stale && kt.assigned > 0:
		target, last = kt.target, kt.last
	default:
		return t.fallBack(x, kt, def)
	}
	level := target.Level
	if level == wire.AckDefault {
		level = def
	}
	if level != wire.AckLeader {
		return streams.ID{}, target, false
	}
	if !t.ready {
		// Only once a LEADER XADD comes: a shard whose streams are all
		// QUORUM logs no barriers. Issued by plan once the state's read
		// lock is released (raft may need the FSM to move to take it).
		t.wantBarrier = true
	}
	if !t.ready || t.global > 0 || (x.NoMkStream && (!target.Exists || target.Volatile)) {
		t.fellBack.Add(1)
		return streams.ID{}, target, false
	}
	id, err := streams.NextIDAfter(last, x.ID, now)
	if err != nil {
		// The FSM refuses it the same way: let it answer the error.
		return streams.ID{}, target, false
	}
	target.LastID = id
	return id, target, true
}

// fallBack counts an XADD to a key with other writes in flight when its
// level is known to be LEADER (best effort: the level last seen).
func (t *ackTracker) fallBack(x wire.XAdd, kt *keyTrack, def wire.AckLevel) (streams.ID, state.AckTarget, bool) {
	level := kt.target.Level
	if level == wire.AckDefault {
		level = def
	}
	if level == wire.AckLeader {
		t.fellBack.Add(1)
	}
	return streams.ID{}, state.AckTarget{}, false
}

// clearReady stops assignments until a new barrier completes. t.mu held.
func (t *ackTracker) clearReady() {
	t.ready = false
	t.epoch++
}

// barrier issues a raft Barrier (ordered before the entry being planned)
// and sets ready when it completes, unless ready was cleared meanwhile.
// t.mu held.
func (t *ackTracker) barrier(s *Shard) {
	if s.clustered && s.raft.State() != raft.Leader {
		return
	}
	t.barrierOut = true
	epoch := t.epoch
	f := s.raft.Barrier(s.quorumTimeout)
	go func() {
		err := f.Error()
		t.mu.Lock()
		t.barrierOut = false
		if err == nil && t.epoch == epoch {
			t.ready = true
		}
		t.mu.Unlock()
	}()
}

// done undoes ab's counts once its entry resolved (applied, or failed:
// then the entry may still be applied later, so ready is cleared).
func (t *ackTracker) done(ab *ackBatch, failed bool) {
	if ab == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if failed {
		t.clearReady()
	}
	t.global -= ab.global
	t.configs -= ab.configs
	for _, k := range ab.keys {
		if kt := t.keys[k]; kt != nil {
			kt.other--
			t.settle(k, kt)
		}
	}
	for _, k := range ab.assigned {
		if kt := t.keys[k]; kt != nil {
			kt.assigned--
			t.settle(k, kt)
		}
	}
}

// settle forgets a key with nothing in flight: the state is its truth
// again. t.mu held.
func (t *ackTracker) settle(k dbKey, kt *keyTrack) {
	if kt.other <= 0 && kt.assigned <= 0 {
		delete(t.keys, k)
	}
}

// stored is called when the entry holding the batch is in the leader's
// log: the XADDs are answered with their IDs if the entry was stored in
// the term the IDs were assigned in.
func (eb *earlyBatch) stored(index, term uint64) {
	eb.mu.Lock()
	defer eb.mu.Unlock()
	if eb.finished || eb.answered || term != eb.term {
		return
	}
	eb.answered = true
	now := time.Now()
	for i, p := range eb.items {
		p.index = index
		p.res = eb.ids[i]
		p.lead.acked = true
		eb.t.leaderLat.Observe(now.Sub(p.start))
		p.done.Done()
	}
	eb.t.leaderAcked.Add(int64(len(eb.items)))
	eb.b.release()
}

// checkAssigned compares an assigned XADD's applied outcome with its ID
// (they cannot differ unless the projection is wrong: then it is logged
// and counted, and the client that got the early answer was misled).
func (s *Shard) checkAssigned(p *Pending, out wire.Outcome) {
	if id, ok := out.Result.(streams.ID); ok && out.Err == nil && id == p.lead.id {
		return
	}
	s.acks.mismatches.Add(1)
	s.opts.Logger.Error("ACKLEVEL LEADER: an XADD applied otherwise than assigned",
		"assigned", p.lead.id.String(), "result", out.Result, "err", out.Err)
}

// durableLogs wraps raft's log store to tell the batcher when an entry it
// watches has been stored (StoreLogs returned: durable per appendfsync).
// Entries are recognised by their data's first byte's address: raft
// stores the slice given to Apply without copying it.
type durableLogs struct {
	raft.LogStore
	n  atomic.Int32
	mu sync.Mutex
	w  map[*byte]*earlyBatch
}

func newDurableLogs(ls raft.LogStore) *durableLogs {
	return &durableLogs{LogStore: ls, w: map[*byte]*earlyBatch{}}
}

// watch asks for eb.stored when data's entry is stored.
func (d *durableLogs) watch(data []byte, eb *earlyBatch) {
	d.mu.Lock()
	d.w[unsafe.SliceData(data)] = eb
	d.n.Add(1)
	d.mu.Unlock()
}

// unwatch forgets data's entry (resolved, stored or not).
func (d *durableLogs) unwatch(data []byte) {
	d.mu.Lock()
	if _, ok := d.w[unsafe.SliceData(data)]; ok {
		delete(d.w, unsafe.SliceData(data))
		d.n.Add(-1)
	}
	d.mu.Unlock()
}

// StoreLog stores one entry (as StoreLogs).
func (d *durableLogs) StoreLog(l *raft.Log) error { return d.StoreLogs([]*raft.Log{l}) }

// StoreLogs stores the entries, then answers the watched ones among them.
func (d *durableLogs) StoreLogs(logs []*raft.Log) error {
	if err := d.LogStore.StoreLogs(logs); err != nil {
		return err
	}
	if d.n.Load() == 0 {
		return nil
	}
	for _, l := range logs {
		if l.Type != raft.LogCommand || len(l.Data) == 0 {
			continue
		}
		d.mu.Lock()
		eb := d.w[unsafe.SliceData(l.Data)]
		if eb != nil {
			delete(d.w, unsafe.SliceData(l.Data))
			d.n.Add(-1)
		}
		d.mu.Unlock()
		if eb != nil {
			eb.stored(l.Index, l.Term)
		}
	}
	return nil
}

// IsMonotonic forwards the wrapped store's raft.MonotonicLogStore answer
// (raft-wal's log may not have gaps).
func (d *durableLogs) IsMonotonic() bool {
	m, ok := d.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}
