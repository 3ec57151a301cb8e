// Package keywait is the registry of clients blocked on keys (XREAD and
// XREADGROUP with BLOCK). A waiter subscribes to its keys before it first
// tries its read, so a write that lands in between still wakes it; writers
// Signal the keys they changed. Signal never blocks: a single unblocker
// goroutine serves signalled keys, waking the key's waiters one at a time in
// arrival order and waiting for each to finish its retry (Done) before waking
// the next. So one new entry read by one XREADGROUP consumer is not also
// offered to the others at the same moment (no thundering herd), and a waiter
// that got nothing stays queued in its place, as Redis's
// serveClientsBlockedOnKey serves blocked clients in FIFO order.
package keywait

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Key names a key in one logical database.
type Key struct {
	DB   int
	Name string
}

// Registry maps keys to FIFO lists of waiters. It is safe for concurrent
// use. The zero value is not usable: call New, and Close when done.
type Registry struct {
	mu      sync.Mutex
	waiters map[Key][]*Waiter
	// keys mirrors len(waiters) (written under mu): a Signal on a
	// registry nobody waits on — every write while no client blocks —
	// returns without the lock. A waiter subscribes before it first
	// reads, so a write it must see was applied before its read, or
	// signals after its Subscribe, which this count then shows.
	keys atomic.Int64
	// pending is the set of signalled keys not yet served, in signal order.
	pending []Key
	queued  map[Key]bool
	kick    chan struct{}
	done    chan struct{}
	stopped chan struct{}
	// ackTimeout bounds how long the unblocker waits for a woken waiter's
	// Done before moving on, so a stuck client cannot stall a key.
	ackTimeout time.Duration
	// started says the unblocker goroutine runs; it starts with the
	// first Subscribe, so an unused registry costs no goroutine.
	started bool
	// serving is set while the unblocker works through a key's waiters.
	serving bool
}

// Waiter is one blocked client's subscription. Its owner waits on Wake(),
// retries its read, then calls Done (still waiting) or Unsubscribe (served,
// timed out or gone).
type Waiter struct {
	r    *Registry
	keys []Key
	// wake receives one token per wake-up (capacity 1: wakes coalesce).
	wake chan struct{}
	// ack receives the owner's Done after a retry.
	ack chan struct{}
	// gone is closed by Unsubscribe.
	gone     chan struct{}
	goneOnce sync.Once
}

// DefaultAckTimeout is how long the unblocker waits for a woken waiter to
// report its retry before it wakes the next one anyway.
const DefaultAckTimeout = time.Second

// New returns a registry; its unblocker goroutine starts with the first
// Subscribe, and Close stops it.
func New() *Registry {
	r := &Registry{
		waiters:    make(map[Key][]*Waiter),
		queued:     make(map[Key]bool),
		kick:       make(chan struct{}, 1),
		done:       make(chan struct{}),
		stopped:    make(chan struct{}),
		ackTimeout: DefaultAckTimeout,
	}
	return r
}

// Close stops the unblocker goroutine and waits for it to exit. Waiters
// still subscribed are not woken; their owners end on their own deadlines
// or connection close.
func (r *Registry) Close() {
	r.mu.Lock()
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	started := r.started
	r.mu.Unlock()
	if started {
		<-r.stopped
	}
}

// Subscribe registers a waiter on keys (duplicates are ignored), at the end
// of each key's queue.
func (r *Registry) Subscribe(keys []Key) *Waiter {
	w := &Waiter{
		r:    r,
		wake: make(chan struct{}, 1),
		ack:  make(chan struct{}, 1),
		gone: make(chan struct{}),
	}
	seen := make(map[Key]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			w.keys = append(w.keys, k)
		}
	}
	r.mu.Lock()
	if !r.started {
		select {
		case <-r.done: // closed: nobody will be woken; the owner times out
		default:
			r.started = true
			go r.unblocker()
		}
	}
	for _, k := range w.keys {
		r.waiters[k] = append(r.waiters[k], w)
	}
	r.keys.Store(int64(len(r.waiters)))
	r.mu.Unlock()
	return w
}

// Wake returns the channel that receives when one of the waiter's keys was
// signalled and it is this waiter's turn to retry.
func (w *Waiter) Wake() <-chan struct{} { return w.wake }

// Done tells the unblocker that the waiter finished a retry that followed a
// wake and is still waiting: the next waiter on the key gets its turn.
func (w *Waiter) Done() {
	select {
	case w.ack <- struct{}{}:
	default:
	}
}

// Unsubscribe removes the waiter from all its keys (served, timed out,
// unblocked or disconnected). It is idempotent.
func (w *Waiter) Unsubscribe() {
	w.goneOnce.Do(func() {
		r := w.r
		r.mu.Lock()
		for _, k := range w.keys {
			list := r.waiters[k]
			for i, x := range list {
				if x == w {
					list = append(list[:i:i], list[i+1:]...)
					break
				}
			}
			if len(list) == 0 {
				delete(r.waiters, k)
			} else {
				r.waiters[k] = list
			}
		}
		r.keys.Store(int64(len(r.waiters)))
		r.mu.Unlock()
		close(w.gone)
	})
}

// Signal marks a key as changed. It never blocks: the unblocker serves the
// key's waiters later. A key nobody waits on costs a map lookup.
func (r *Registry) Signal(db int, name string) {
	if r.keys.Load() == 0 {
		return
	}
	k := Key{db, name}
	r.mu.Lock()
	if _, ok := r.waiters[k]; !ok || r.queued[k] {
		r.mu.Unlock()
		return
	}
	r.queued[k] = true
	r.pending = append(r.pending, k)
	r.mu.Unlock()
	r.poke()
}

// SignalDB signals every waited-on key of database db (FLUSHDB); db < 0
// signals every database (FLUSHALL). Keys are served in key order.
func (r *Registry) SignalDB(db int) {
	r.mu.Lock()
	var keys []Key
	for k := range r.waiters {
		if (db < 0 || k.DB == db) && !r.queued[k] {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].DB != keys[j].DB {
			return keys[i].DB < keys[j].DB
		}
		return keys[i].Name < keys[j].Name
	})
	for _, k := range keys {
		r.queued[k] = true
		r.pending = append(r.pending, k)
	}
	r.mu.Unlock()
	if len(keys) > 0 {
		r.poke()
	}
}

// Waiting returns how many waiters are queued on key (for tests and INFO).
func (r *Registry) Waiting(db int, name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.waiters[Key{db, name}])
}

func (r *Registry) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// unblocker serves signalled keys one after the other.
func (r *Registry) unblocker() {
	defer close(r.stopped)
	for {
		select {
		case <-r.done:
			return
		case <-r.kick:
		}
		for {
			r.mu.Lock()
			if len(r.pending) == 0 {
				r.mu.Unlock()
				break
			}
			k := r.pending[0]
			r.pending = r.pending[1:]
			delete(r.queued, k)
			r.serving = true
			// The waiters queued now are the ones this signal is for;
			// later arrivals subscribed after the change and try it
			// themselves before blocking.
			list := append([]*Waiter(nil), r.waiters[k]...)
			r.mu.Unlock()
			served := r.serveRound(k, list)
			r.mu.Lock()
			r.serving = false
			r.mu.Unlock()
			if !served {
				return
			}
		}
	}
}

// serveRound wakes k's waiters of one signal in order (see unblocker); it
// returns false when the registry is closing.
func (r *Registry) serveRound(k Key, list []*Waiter) bool {
	for _, w := range list {
		if r.resignalled(k) {
			// k changed again while this round was under
			// way: the rest of the round would see the new
			// entry before waiters ahead of them in the
			// queue. Start over from the head when k's turn
			// comes, as Redis serves each change in FIFO order.
			break
		}
		if !r.serve(w) {
			return false
		}
	}
	return true
}

// Idle reports whether no signalled key is waiting to be served and no
// round of wake-ups is under way (tests use it to let a round finish).
func (r *Registry) Idle() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending) == 0 && !r.serving
}

// resignalled reports whether k was signalled again and awaits a new round.
func (r *Registry) resignalled(k Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queued[k]
}

// serve wakes one waiter and waits until it reports its retry (Done), leaves
// (Unsubscribe) or the ack timeout passes. It returns false when the
// registry is closing.
func (r *Registry) serve(w *Waiter) bool {
	select {
	case <-w.gone:
		return true
	default:
	}
	// Drop a stale Done from an earlier turn before this one.
	select {
	case <-w.ack:
	default:
	}
	select {
	case w.wake <- struct{}{}:
	default: // a wake is already pending: this turn waits for its retry
	}
	t := time.NewTimer(r.ackTimeout)
	defer t.Stop()
	select {
	case <-w.ack:
	case <-w.gone:
	case <-t.C:
	case <-r.done:
		return false
	}
	return true
}
