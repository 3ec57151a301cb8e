package observe

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"streamd/server/resp"
)

// Monitor is a monitoring client as the fan-out sees it. Monitors compare
// by identity (a pointer to the client).
type Monitor interface {
	// PushLine queues a monitor line, a status reply in either protocol,
	// without waiting for the network (a monitor too slow to read is
	// disconnected by its own output limit, never waited for).
	PushLine(line resp.SimpleString)
}

// Monitors is the set of monitoring clients. The zero value is empty and
// ready; it is safe for concurrent use, and feeding reads the set with one
// atomic load.
type Monitors struct {
	mu sync.Mutex
	// list is the current members, replaced (never changed in place)
	// under mu.
	list atomic.Pointer[[]*Member]
}

// Member is one monitor's membership of a Monitors, from Add until
// Remove.
type Member struct {
	m Monitor
	// end is closed when it stops monitoring.
	end chan struct{}
}

// End is closed when the membership ends (Remove).
func (x *Member) End() <-chan struct{} { return x.end }

// Active reports whether anyone is monitoring: the hot path's check.
func (ms *Monitors) Active() bool {
	l := ms.list.Load()
	return l != nil && len(*l) > 0
}

// Find returns m's membership, or nil.
func (ms *Monitors) Find(m Monitor) *Member {
	if l := ms.list.Load(); l != nil {
		for _, x := range *l {
			if x.m == m {
				return x
			}
		}
	}
	return nil
}

// Add makes m a monitor; added is false (and x its current membership)
// if it already is one.
func (ms *Monitors) Add(m Monitor) (x *Member, added bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var cur []*Member
	if l := ms.list.Load(); l != nil {
		cur = *l
	}
	for _, x := range cur {
		if x.m == m {
			return x, false
		}
	}
	x = &Member{m: m, end: make(chan struct{})}
	next := append(append(make([]*Member, 0, len(cur)+1), cur...), x)
	ms.list.Store(&next)
	return x, true
}

// Remove ends x's monitoring and closes its End (idempotent).
func (ms *Monitors) Remove(x *Member) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	l := ms.list.Load()
	if l == nil {
		return
	}
	next := make([]*Member, 0, len(*l))
	for _, y := range *l {
		if y != x {
			next = append(next, y)
		}
	}
	if len(next) == len(*l) {
		return
	}
	close(x.end)
	ms.list.Store(&next)
}

// Feed sends every monitor except skip (nil: none) the line for args
// (already redacted: see Redact), run in database db by the client at
// addr, stamped with the time now.
func (ms *Monitors) Feed(skip Monitor, db int, addr string, args [][]byte) {
	l := ms.list.Load()
	if l == nil || len(*l) == 0 {
		return
	}
	line := resp.SimpleString(Line(time.Now(), db, addr, args))
	for _, x := range *l {
		if skip != nil && x.m == skip {
			continue
		}
		x.m.PushLine(line)
	}
}

// Line renders Redis's monitor line (without "+" and CRLF): the time as
// seconds.microseconds, "[db addr]", then each argument quoted as
// sdscatrepr does.
func Line(now time.Time, db int, addr string, args [][]byte) string {
	n := 40 + len(addr)
	for _, a := range args {
		n += len(a) + 3
	}
	b := make([]byte, 0, n)
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := now.Nanosecond() / 1000
	for d := 100000; d > 1 && us < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(us), 10)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(db), 10)
	b = append(b, ' ')
	b = append(b, addr...)
	b = append(b, "] "...)
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = resp.AppendRepr(b, a)
	}
	return string(b)
}
