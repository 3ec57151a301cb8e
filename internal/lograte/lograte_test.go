package lograte

import (
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewWithClock(time.Second, func() time.Time { return now })
	step := func(d time.Duration, wantOK bool, wantSuppressed int) {
		t.Helper()
		now = now.Add(d)
		ok, n := l.Allow()
		if ok != wantOK || n != wantSuppressed {
			t.Fatalf("at +%v: Allow() = %v, %d; want %v, %d", d, ok, n, wantOK, wantSuppressed)
		}
	}
	step(0, true, 0) // the first event is logged
	step(10*time.Millisecond, false, 0)
	step(500*time.Millisecond, false, 0)
	step(489*time.Millisecond, false, 0)
	step(time.Millisecond, true, 3) // a second after the last line: the 3 left out are counted
	step(2*time.Second, true, 0)
	step(0, false, 0)
	step(time.Second, true, 1)
}
