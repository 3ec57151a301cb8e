package keywait

import (
	"sync"
	"testing"
	"time"
)

// woken reports whether w receives a wake within d.
func woken(w *Waiter, d time.Duration) bool {
	select {
	case <-w.Wake():
		return true
	case <-time.After(d):
		return false
	}
}

// notWoken checks that w has no wake pending right now (the unblocker only
// moves on after an ack, so a pending wake would already be there).
func notWoken(t *testing.T, w *Waiter, name string) {
	t.Helper()
	select {
	case <-w.Wake():
		t.Fatalf("%s woken out of turn", name)
	default:
	}
}

func TestSignalWakesSubscriber(t *testing.T) {
	r := New()
	defer r.Close()
	w := r.Subscribe([]Key{{0, "s"}, {0, "s"}, {1, "t"}})
	defer w.Unsubscribe()
	if got := r.Waiting(0, "s"); got != 1 {
		t.Fatalf("Waiting(0,s) = %d, want 1 (duplicate keys ignored)", got)
	}
	r.Signal(0, "other")
	r.Signal(2, "s") // same name, other database
	if woken(w, 50*time.Millisecond) {
		t.Fatal("woken by a key it does not wait on")
	}
	r.Signal(1, "t")
	if !woken(w, 5*time.Second) {
		t.Fatal("not woken by Signal")
	}
}

func TestSignalNeverBlocks(t *testing.T) {
	r := New()
	defer r.Close()
	w := r.Subscribe([]Key{{0, "s"}})
	defer w.Unsubscribe()
	done := make(chan struct{})
	go func() {
		// The waiter never retries; many signals must still return.
		for range 10000 {
			r.Signal(0, "s")
			r.SignalDB(0)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Signal blocked")
	}
}

func TestFIFOOneAtATime(t *testing.T) {
	r := New()
	defer r.Close()
	k := []Key{{0, "s"}}
	a, b, c := r.Subscribe(k), r.Subscribe(k), r.Subscribe(k)
	defer a.Unsubscribe()
	defer b.Unsubscribe()
	defer c.Unsubscribe()
	r.Signal(0, "s")
	if !woken(a, 5*time.Second) {
		t.Fatal("first waiter not woken")
	}
	notWoken(t, b, "b")
	notWoken(t, c, "c")
	// a found nothing and keeps waiting: b's turn.
	a.Done()
	if !woken(b, 5*time.Second) {
		t.Fatal("second waiter not woken after the first's Done")
	}
	notWoken(t, c, "c")
	// b was served and leaves: c's turn.
	b.Unsubscribe()
	if !woken(c, 5*time.Second) {
		t.Fatal("third waiter not woken after the second left")
	}
	c.Done()
	// The round is over: a stays queued, but is not woken again without a
	// new signal.
	if woken(a, 50*time.Millisecond) {
		t.Fatal("woken without a signal")
	}
	if got := r.Waiting(0, "s"); got != 2 {
		t.Fatalf("Waiting = %d, want 2 (a and c stay queued)", got)
	}
}

func TestLateSubscriberNotInRound(t *testing.T) {
	r := New()
	defer r.Close()
	k := []Key{{0, "s"}}
	a := r.Subscribe(k)
	defer a.Unsubscribe()
	r.Signal(0, "s")
	if !woken(a, 5*time.Second) {
		t.Fatal("a not woken")
	}
	// Subscribed after the signal was taken up: it tries on its own.
	late := r.Subscribe(k)
	defer late.Unsubscribe()
	a.Done()
	if woken(late, 50*time.Millisecond) {
		t.Fatal("late subscriber woken by an earlier signal")
	}
}

func TestSignalDB(t *testing.T) {
	r := New()
	defer r.Close()
	tests := []struct {
		name   string
		db     int
		wake0  bool
		wake3  bool
		signal func(r *Registry, db int)
	}{
		{"flushdb 0", 0, true, false, (*Registry).SignalDB},
		{"flushdb 3", 3, false, true, (*Registry).SignalDB},
		{"flushall", -1, true, true, (*Registry).SignalDB},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w0 := r.Subscribe([]Key{{0, "a"}})
			w3 := r.Subscribe([]Key{{3, "b"}})
			defer w0.Unsubscribe()
			defer w3.Unsubscribe()
			tc.signal(r, tc.db)
			if tc.wake0 {
				if !woken(w0, 5*time.Second) {
					t.Fatal("db 0 waiter not woken")
				}
				w0.Unsubscribe()
			}
			if tc.wake3 {
				if !woken(w3, 5*time.Second) {
					t.Fatal("db 3 waiter not woken")
				}
				w3.Unsubscribe()
			}
			if !tc.wake0 && woken(w0, 30*time.Millisecond) {
				t.Fatal("db 0 waiter woken")
			}
			if !tc.wake3 && woken(w3, 30*time.Millisecond) {
				t.Fatal("db 3 waiter woken")
			}
		})
	}
}

func TestAckTimeoutMovesOn(t *testing.T) {
	r := New()
	r.ackTimeout = 20 * time.Millisecond
	defer r.Close()
	k := []Key{{0, "s"}}
	stuck, next := r.Subscribe(k), r.Subscribe(k)
	defer stuck.Unsubscribe()
	defer next.Unsubscribe()
	r.Signal(0, "s")
	if !woken(stuck, 5*time.Second) {
		t.Fatal("first not woken")
	}
	// stuck never reports: the next waiter still gets its turn.
	if !woken(next, 5*time.Second) {
		t.Fatal("second not woken after the ack timeout")
	}
}

func TestUnsubscribeIdempotentAndClose(t *testing.T) {
	r := New()
	w := r.Subscribe([]Key{{0, "s"}})
	w.Unsubscribe()
	w.Unsubscribe()
	if got := r.Waiting(0, "s"); got != 0 {
		t.Fatalf("Waiting = %d after Unsubscribe", got)
	}
	r.Close()
	r.Close()
	r.Signal(0, "s") // after Close: no panic, no block
	// A registry never subscribed to has no goroutine to stop.
	New().Close()
}

// TestConcurrentOneEntryOneConsumer models XREADGROUP consumers sharing one
// entry: each woken waiter "takes" it if still there; exactly one gets it.
func TestConcurrentOneEntryOneConsumer(t *testing.T) {
	r := New()
	defer r.Close()
	const n = 8
	var mu sync.Mutex
	available := 0
	got := make(chan int, n)
	ready := make(chan struct{}, n)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := r.Subscribe([]Key{{0, "s"}})
			defer w.Unsubscribe()
			ready <- struct{}{}
			for {
				select {
				case <-w.Wake():
				case <-stop:
					return
				}
				mu.Lock()
				took := available > 0
				if took {
					available--
				}
				mu.Unlock()
				if took {
					got <- i
					return
				}
				w.Done()
			}
		}()
	}
	for range n {
		<-ready
	}
	mu.Lock()
	available = 1
	mu.Unlock()
	r.Signal(0, "s")
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("nobody got the entry")
	}
	// Let the round finish; nobody else may get anything.
	deadline := time.Now().Add(5 * time.Second)
	for r.pendingLen() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if len(got) != 0 {
		t.Fatalf("%d more consumers got the one entry", len(got))
	}
}

func (r *Registry) pendingLen() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// A signal that lands while a round is under way ends that round: the new
// round starts again from the head of the queue, so the newer change is
// offered first to the oldest waiter, not to whoever the old round reached.
func TestResignalRestartsFromHead(t *testing.T) {
	r := New()
	defer r.Close()
	k := []Key{{0, "s"}}
	a, b, c := r.Subscribe(k), r.Subscribe(k), r.Subscribe(k)
	defer a.Unsubscribe()
	defer b.Unsubscribe()
	defer c.Unsubscribe()
	r.Signal(0, "s")
	if !woken(a, 5*time.Second) {
		t.Fatal("a not woken")
	}
	a.Done()
	if !woken(b, 5*time.Second) {
		t.Fatal("b not woken")
	}
	if r.Idle() {
		t.Fatal("Idle during a round")
	}
	r.Signal(0, "s") // a new entry while b retries
	b.Done()
	// The old round stops before c; the new one starts with a.
	if !woken(a, 5*time.Second) {
		t.Fatal("new round did not start with a")
	}
	notWoken(t, c, "c")
	a.Done()
	if !woken(b, 5*time.Second) {
		t.Fatal("b not woken in the new round")
	}
	b.Done()
	if !woken(c, 5*time.Second) {
		t.Fatal("c not woken in the new round")
	}
	c.Done()
	deadline := time.Now().Add(5 * time.Second)
	for !r.Idle() {
		if time.Now().After(deadline) {
			t.Fatal("not Idle after the round")
		}
		time.Sleep(time.Millisecond)
	}
}
