package replication

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"streamd/replication/wire"
	"streamd/streams"
)

// maxBatch is the most commands packed into one log entry of a single
// node; clusterMaxBatch in a cluster, where every entry also costs an
// AppendEntries round and a follower's fsync and apply: 512 gave 5–9 % more
// XADDs/s than 128 on 3 nodes (bench/cluster.sh, paired runs, -c 50 -P 16)
// and nothing measurable on a single node.
const (
	maxBatch        = 128
	clusterMaxBatch = 512
)

// maxInflightPartial is how many entries may be in flight before a partial
// batch waits for more commands (or for one to complete). 1 beat 2 in
// interleaved runs (50 clients, XADD, wal store, medians of 3: 38.8k vs
// 27.3k/s at -P 1, 397k vs 359k/s at -P 16): raft writes one batch of
// entries at a time anyway, so a second partial entry in flight only makes
// the next fsync carry fewer commands.
const maxInflightPartial = 1

// Pending is a proposal whose outcome is not known yet. Wait blocks until
// it is.
type Pending struct {
	cmd wire.Command
	// done is released once when the outcome is known (one allocation
	// less per write than a channel to close).
	done  sync.WaitGroup
	res   any
	err   error
	index uint64
	// ACKLEVEL LEADER (acklevel.go): early is the entry's assigned XADDs
	// (nil: none); leaderAcked is set when done was released at local
	// durability; applied is closed, and lateRes/lateErr set, once the
	// entry resolved.
	early *earlyBatch
	// lead is the rest of an assigned XADD's state (nil for every other
	// write, so a Pending stays small).
	lead *leadPending
	// start is when an XADD was proposed (zero for other writes), for
	// the answer latency histograms (acklevel_stats.go).
	start time.Time
	// local is the batcher of a single node that has gone local (nil
	// otherwise): Wait sends the queue up to this write itself, unless
	// taken (set under the batcher's lock once it is being sent).
	local *batcher
	taken bool
}

// Wait blocks until the proposal is committed and applied (or failed) and
// returns its result, as Propose does.
func (p *Pending) Wait() (any, error) {
	if b := p.local; b != nil {
		b.flush(p)
	}
	p.done.Wait()
	return p.res, p.err
}

// Index returns the raft log index of the entry that holds the write, once
// Wait has returned; 0 if the write failed.
func (p *Pending) Index() uint64 { return p.index }

// LeaderAcked reports, once Wait has returned, whether the write was an
// XADD answered at ACKLEVEL LEADER: durable in the leader's log but maybe
// not yet committed nor applied. applied is then closed once the entry
// has resolved (Applied tells how); its effects (wake-ups, WATCH,
// tracking) belong to that moment.
func (p *Pending) LeaderAcked() (applied <-chan struct{}, ok bool) {
	if p.lead == nil || !p.lead.acked {
		return nil, false
	}
	return p.lead.applied, true
}

// Applied returns the outcome of a LeaderAcked write's entry once applied
// is closed: its result as applied (the same ID), or the error that ended
// it (the acknowledged entry was then lost, or its fate is unknown).
func (p *Pending) Applied() (any, error) { return p.lead.res, p.lead.err }

// leadPending is an XADD's state once its ID was assigned at ACKLEVEL
// LEADER: acked is set when done was released at local durability; applied
// is closed, and res/err set, once the entry resolved; id is the ID it was
// answered with.
type leadPending struct {
	acked   bool
	applied chan struct{}
	res     any
	err     error
	id      streams.ID
}

func (p *Pending) resolve(res any, err error) { p.settle(res, err, 0) }

// settle resolves p with its outcome (index: its entry's, 0 if failed).
// A write already answered early keeps its answer: the outcome goes to
// Applied, and settle reports true.
func (p *Pending) settle(res any, err error, index uint64) (early bool) {
	if eb := p.early; eb != nil {
		eb.mu.Lock()
		eb.finished = true
		answered := eb.answered
		eb.mu.Unlock()
		if answered {
			p.lead.res, p.lead.err, p.cmd = res, err, nil
			close(p.lead.applied)
			return true
		}
		close(p.lead.applied)
	}
	p.index = index
	p.res, p.err, p.cmd = res, err, nil
	p.done.Done()
	return false
}

// failedPending returns a Pending already resolved with err.
func failedPending(err error) *Pending {
	p := &Pending{}
	p.done.Add(1)
	p.resolve(nil, err)
	return p
}

// batcher packs queued proposals into log entries (DESIGN §8): one
// goroutine takes commands in call order, up to max per entry, stamps
// the entry's time and hands it to raft. It is self-clocking rather than
// timed: a full batch goes at once; a partial one only while fewer than
// maxInflightPartial entries are in flight, so under load the queue fills
// while the disk works and each fsync carries many commands, and when idle
// a lone command goes straight out.
type batcher struct {
	s    *Shard
	mu   sync.Mutex
	cond *sync.Cond
	// queue holds proposals not yet handed to raft, in call order.
	queue    []*Pending
	inflight int // entries handed to raft and not resolved
	// released counts those of them already answered at ACKLEVEL LEADER
	// (stored in the leader's log): they no longer hold back a partial
	// batch, so LEADER XADDs pipeline with the replication of earlier
	// entries instead of waiting for their commit.
	released int
	closed   bool // no more proposals accepted; drain and stop
	// sending is set while a batch is being sent (by run, or by the FSM
	// in sendNext): one at a time, so entries reach raft in queue order.
	sending bool
	// lastNow is the greatest time stamped on an entry (owned by the
	// sender holding sending).
	lastNow int64
	clock   func() int64
	done    chan struct{} // closed when run has returned and all resolved
	// max is the most commands per entry (maxBatch or clusterMaxBatch).
	max int
	// noopWaiting counts appendNoop calls waiting for a send to end.
	noopWaiting int
}

func newBatcher(s *Shard, clock func() int64, lastNow int64) *batcher {
	b := &batcher{s: s, clock: clock, lastNow: lastNow, done: make(chan struct{}), max: maxBatch}
	if s.clustered {
		b.max = clusterMaxBatch
	}
	if s.local != nil {
		b.max = localTake
	}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// add queues a proposal; it fails at once if the batcher is closed.
func (b *batcher) add(cmd wire.Command) *Pending {
	p := &Pending{cmd: cmd}
	p.done.Add(1)
	if b.s.local != nil {
		p.local = b
	}
	if _, ok := cmd.(wire.XAdd); ok && b.s.acks.measuring() {
		p.start = time.Now()
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return failedPending(ErrShuttingDown)
	}
	b.queue = append(b.queue, p)
	if len(b.queue) == 1 || len(b.queue) == b.max {
		b.cond.Signal()
	}
	b.mu.Unlock()
	return p
}

// addMany queues cmds in order, out[i] receiving cmds[i]'s proposal (see
// Shard.ProposeAsyncMany); they fail at once if the batcher is closed.
// quiet leaves the batcher goroutine asleep when the shard is local: the
// caller is about to Wait, which sends them (Shard.QueueMany).
func (b *batcher) addMany(cmds []wire.Command, out []*Pending, quiet bool) {
	ps := make([]Pending, len(cmds))
	measuring := b.s.acks.measuring()
	var local *batcher
	if b.s.local != nil {
		local = b
	} else {
		quiet = false
	}
	var now time.Time
	for i, cmd := range cmds {
		p := &ps[i]
		p.cmd = cmd
		p.local = local
		p.done.Add(1)
		if _, ok := cmd.(wire.XAdd); ok && measuring {
			if now.IsZero() {
				now = time.Now()
			}
			p.start = now
		}
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		for i := range cmds {
			out[i] = failedPending(ErrShuttingDown)
		}
		return
	}
	wasEmpty := len(b.queue) == 0
	for i := range ps {
		b.queue = append(b.queue, &ps[i])
		out[i] = &ps[i]
	}
	if !quiet && (wasEmpty || len(b.queue) >= b.max) {
		b.cond.Signal()
	}
	b.mu.Unlock()
}

// close stops accepting proposals and waits until everything queued has
// been sent and every entry in flight has resolved (each within the quorum
// timeout).
func (b *batcher) close() {
	b.mu.Lock()
	b.closed = true
	b.cond.Broadcast()
	b.mu.Unlock()
	<-b.done
}

// run is the batcher goroutine.
func (b *batcher) run() {
	defer close(b.done)
	for {
		b.mu.Lock()
		for b.sending || !(len(b.queue) >= b.max || (len(b.queue) > 0 && b.inflight-b.released < maxInflightPartial) ||
			(b.closed && len(b.queue) == 0 && b.inflight == 0)) {
			b.cond.Wait()
		}
		if len(b.queue) == 0 { // closed, drained, nothing in flight
			b.mu.Unlock()
			return
		}
		b.sendTakenLocked()
	}
}

// takeLocked takes the next batch off the queue, counts it in flight and
// marks a send as running (b.mu held).
func (b *batcher) takeLocked() []*Pending {
	n := min(len(b.queue), b.max)
	batch := make([]*Pending, n)
	copy(batch, b.queue)
	if b.s.local != nil { // only a local node's Wait looks (flush)
		for _, p := range batch {
			p.taken = true
		}
	}
	rest := copy(b.queue, b.queue[n:])
	clear(b.queue[rest:])
	b.queue = b.queue[:rest]
	b.inflight++
	b.sending = true
	return batch
}

// sendTakenLocked takes the next batch (b.mu held, released) and sends
// it, then lets the next send (of either sender) go.
func (b *batcher) sendTakenLocked() {
	batch := b.takeLocked()
	b.mu.Unlock()
	b.send(batch)
	b.mu.Lock()
	b.sending = false
	b.wakeLocked()
	b.mu.Unlock()
}

// wakeLocked wakes the goroutines waiting on cond after a send ended or an
// entry left the flight (b.mu held), unless none of them can go on now:
// the batcher goroutine waits for something queued to send (or, closed,
// for the last entry in flight), appendNoop for the send to end. Waking
// the batcher goroutine for nothing cost a thread wake-up per entry.
func (b *batcher) wakeLocked() {
	if len(b.queue) > 0 || b.closed || b.noopWaiting > 0 {
		b.cond.Broadcast()
	}
}

// sendNext sends the queued partial batch from the calling goroutine (the
// FSM, which has just finished the batch in flight) when the batcher
// goroutine would send it now: one wake-up less between a batch's fsync
// and the next one's. Sends stay one at a time and in queue order.
func (b *batcher) sendNext() {
	b.mu.Lock()
	if b.sending || b.closed || len(b.queue) == 0 || len(b.queue) >= b.max || b.inflight-b.released >= maxInflightPartial {
		b.mu.Unlock()
		return
	}
	b.sendTakenLocked()
}

// send stamps, encodes and applies one batch; its outcome is delivered by a
// goroutine that waits on raft's future. If raft has not resolved the
// future within the quorum timeout, a timer resolves the batch with
// OutcomeUnknownError instead and the batch stops counting as in flight;
// raft's late answer is then ignored (a batch resolves once).
func (b *batcher) send(batch []*Pending) {
	now := b.clock()
	if now < b.lastNow {
		now = b.lastNow
	}
	b.lastNow = now
	if err := b.s.writeBlocked(); err != nil {
		b.finish(batch, nil, nil, 0, err)
		return
	}
	if b.s.local != nil {
		b.sendLocal(batch, now)
		return
	}
	if b.s.clustered && b.s.raft.State() != raft.Leader {
		// A follower's shard: fail fast, the server routes to the leader.
		b.finish(batch, nil, nil, 0, b.s.notLeader())
		return
	}
	// ACKLEVEL LEADER: count the writes in flight per key and assign the
	// IDs of XADDs answered at local durability (acklevel.go).
	ab := b.s.acks.plan(b.s, batch, now)
	e := wire.Entry{NowMs: now, Cmds: make([]wire.Command, len(batch))}
	for i, p := range batch {
		e.Cmds[i] = p.cmd
	}
	data := e.Append(nil)
	b.s.proposed.put(data, e)
	if ab != nil && ab.early != nil {
		b.s.durable.watch(data, ab.early)
	}
	// The goroutine that waits for the outcome is started before the
	// entry goes to raft: a goroutine started right after raft.Apply takes
	// the scheduler's next slot from raft's leader goroutine, which Apply
	// has just woken, and sends it behind every connection goroutine the
	// last batch woke (~100 µs before the fsync starts, measured at -P 1
	// with 50 clients). The future reaches it through a buffered channel,
	// normally before it runs.
	sent := make(chan raft.ApplyFuture, 1)
	// Bounded enqueue: raft's apply queue is full only when the log has
	// stalled; the batch then fails as not applied (ErrLogBusy) instead
	// of holding every later proposal without an answer.
	bound := b.s.quorumTimeout
	sb := &sentBatch{batch: batch, ab: ab}
	sb.timer = time.AfterFunc(bound, func() {
		if sb.claim() {
			b.finish(batch, ab, nil, 0, &OutcomeUnknownError{Cause: fmt.Errorf("no quorum within %v", bound)})
		}
	})
	if len(batch) <= maxEarlyFinish {
		b.s.sent.put(data, sb)
	}
	go b.resolve(sb, data, sent)
	// Counted first: the FSM may answer the batch before Apply returns.
	b.s.stats.batches.Add(1)
	b.s.stats.proposals.Add(int64(len(batch)))
	sent <- b.s.raft.Apply(data, bound)
}

// resolve waits for the outcome of a batch sent to raft (data is its
// entry) and finishes it, unless the FSM (settle_early.go) or its timer
// did first.
func (b *batcher) resolve(sb *sentBatch, data []byte, sent <-chan raft.ApplyFuture) {
	batch, ab := sb.batch, sb.ab
	f := <-sent
	err := f.Error()
	b.s.proposed.drop(data)
	b.s.sent.take(data)
	if ab != nil && ab.early != nil {
		b.s.durable.unwatch(data)
	}
	if err != nil {
		b.s.noteApplyError(err)
	} else {
		b.s.noteWriteOK()
	}
	if !sb.claim() {
		return // finished already: applied here, or timed out
	}
	sb.timer.Stop()
	if err != nil {
		b.finish(batch, ab, nil, 0, b.s.proposalError(err))
		return
	}
	out, ok := f.Response().([]wire.Outcome)
	if !ok || len(out) != len(batch) {
		b.finish(batch, ab, nil, 0, fmt.Errorf("ERR internal: log entry answered %T for %d commands", f.Response(), len(batch)))
		return
	}
	b.finish(batch, ab, out, f.Index(), nil)
}

// finish resolves a batch (with its outcomes and log index, or all with
// err), undoes its counts of writes in flight (ab; nil if none) and lets
// the next partial batch go.
func (b *batcher) finish(batch []*Pending, ab *ackBatch, out []wire.Outcome, index uint64, err error) {
	b.s.acks.done(ab, err != nil)
	released := ab != nil && ab.early != nil && ab.early.finish()
	b.answer(batch, out, index, err)
	b.mu.Lock()
	b.inflight--
	if released {
		b.released--
	}
	b.wakeLocked()
	b.mu.Unlock()
}

// answer resolves a batch's writes with their outcomes and log index, or
// all with err.
func (b *batcher) answer(batch []*Pending, out []wire.Outcome, index uint64, err error) {
	for i, p := range batch {
		if err != nil {
			p.resolve(nil, err)
		} else {
			if p.early != nil {
				b.s.checkAssigned(p, out[i])
			}
			if !p.settle(out[i].Result, out[i].Err, index) {
				b.s.acks.observeQuorum(p, out[i].Result, out[i].Err)
			}
		}
	}
}

// release lets the next partial batch go once an entry's XADDs were
// answered at local durability (see released).
func (b *batcher) release() {
	b.mu.Lock()
	b.released++
	b.wakeLocked()
	b.mu.Unlock()
}

// wallClock is the proposer's clock: unix milliseconds.
func wallClock() int64 { return time.Now().UnixMilli() }

// isWriteError reports whether a raft apply error is the log store's own
// failure (rather than raft's state), i.e. something to report as
// MISCONF and remember as the last write error.
func isWriteError(err error) bool {
	switch err {
	case nil, raft.ErrRaftShutdown, raft.ErrLeadershipLost, raft.ErrLeadershipTransferInProgress,
		raft.ErrAbortedByRestore, raft.ErrNotLeader, raft.ErrEnqueueTimeout:
		return false
	}
	return true
}
