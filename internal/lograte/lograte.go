// Package lograte limits a log line that may repeat quickly (an accept
// error while the process is out of file descriptors): at most one line a
// period, which says how many were left out since the one before.
package lograte

import (
	"sync"
	"time"
)

// Limiter lets one event a period through. It is safe for concurrent use.
type Limiter struct {
	every time.Duration
	now   func() time.Time

	mu         sync.Mutex
	last       time.Time
	logged     bool
	suppressed int
}

// New returns a limiter letting one event through every period.
func New(every time.Duration) *Limiter { return NewWithClock(every, time.Now) }

// NewWithClock is New reading the time from now (tests).
func NewWithClock(every time.Duration, now func() time.Time) *Limiter {
	return &Limiter{every: every, now: now}
}

// Allow reports whether this event should be logged; if so, suppressed is
// how many events were not logged since the last one that was.
func (l *Limiter) Allow() (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.now()
	if l.logged && t.Sub(l.last) < l.every {
		l.suppressed++
		return false, 0
	}
	suppressed, l.suppressed = l.suppressed, 0
	l.last, l.logged = t, true
	return true, suppressed
}
