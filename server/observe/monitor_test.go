package observe

import (
	"testing"
	"time"

	"streamd/server/resp"
)

// TestMonitorLine checks the line format and sdscatrepr's quoting against
// what redis-server 7.0.15 printed for the same bytes.
func TestMonitorLine(t *testing.T) {
	args := [][]byte{[]byte("xadd"), []byte("a b"), []byte("x\x01y\"\\\n\r\t\a\bz\xff"), {}}
	got := Line(time.Unix(1700000000, 5000), 3, "127.0.0.1:5555", args)
	want := `1700000000.000005 [3 127.0.0.1:5555] "xadd" "a b" "x\x01y\"\\\n\r\t\a\bz\xff" ""`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := Line(time.Unix(1, 123456789), 0, "a", nil); got != "1.123456 [0 a] " {
		t.Fatalf("got %q", got)
	}
}

// lines is a Monitor that keeps what it was sent.
type lines []resp.SimpleString

func (l *lines) PushLine(line resp.SimpleString) { *l = append(*l, line) }

func TestMonitorsFeed(t *testing.T) {
	var ms Monitors
	if ms.Active() {
		t.Fatal("empty set active")
	}
	a, b := &lines{}, &lines{}
	xa, added := ms.Add(a)
	if !added || !ms.Active() {
		t.Fatal("Add a")
	}
	if x, added := ms.Add(a); added || x != xa {
		t.Fatal("second Add of a")
	}
	ms.Add(b)
	ms.Feed(a, 2, "c:1", [][]byte{[]byte("PING")})
	ms.Feed(nil, 0, "c:1", [][]byte{[]byte("GET"), []byte("k")})
	if len(*a) != 1 || len(*b) != 2 {
		t.Fatalf("a %q b %q", *a, *b)
	}
	if got := string((*b)[0]); got[len(got)-len(` [2 c:1] "PING"`):] != ` [2 c:1] "PING"` {
		t.Fatalf("line %q", got)
	}
	if ms.Find(a) != xa {
		t.Fatal("Find a")
	}
	ms.Remove(xa)
	ms.Remove(xa)
	select {
	case <-xa.End():
	default:
		t.Fatal("End not closed")
	}
	if ms.Find(a) != nil || !ms.Active() {
		t.Fatal("after Remove")
	}
}
