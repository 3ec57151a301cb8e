package tracking

import (
	"testing"
)

// client is a Client for the table's tests.
type client struct{ id int64 }

func (c *client) ID() int64 { return c.id }

func TestTableDefaultBcastNoLoopFlush(t *testing.T) {
	tb := NewTable()
	a, b, w := &client{1}, &client{2}, &client{3}
	sa, r := tb.On(a, nil, Options{})
	if r != "" {
		t.Fatal(r)
	}
	sb, r := tb.On(b, nil, Options{BCAST: true, Prefixes: []string{"us"}})
	if r != "" {
		t.Fatal(r)
	}
	sw, _ := tb.On(w, nil, Options{BCAST: true, NoLoop: true})
	held := 0
	tb.Read(sa, []string{"user", "k"}, func() { held++ })
	if held != 1 {
		t.Fatal("hold not called")
	}
	invs := tb.Invalidate(w, []string{"user", "x"})
	// user: a (default) and b (prefix us); w is NOLOOP; x: nobody but w.
	if len(invs) != 2 || invs[0].To != a || invs[1].To != b || invs[0].Key != "user" {
		t.Fatalf("invalidations %+v", invs)
	}
	if got := tb.Invalidate(nil, []string{"user"}); len(got) != 2 || got[0].To != b && got[1].To != b {
		t.Fatalf("after forgetting a's key: %+v", got) // b and w (the server is not w)
	}
	if got := tb.Flush(); len(got) != 3 || got[0].To != a || got[2].To != w {
		t.Fatalf("flush %+v", got)
	}
	if got := tb.Invalidate(nil, []string{"k"}); len(got) != 1 || got[0].To != w {
		t.Fatalf("after flush %+v", got) // k forgotten; w by its empty prefix
	}
	tb.Off(sb)
	tb.Off(sw)
	tb.Off(sa)
	if got := tb.Invalidate(nil, []string{"k"}); got != nil {
		t.Fatalf("all off: %+v", got)
	}
}

func TestTableModes(t *testing.T) {
	tb := NewTable()
	c := &client{1}
	if _, r := tb.On(c, nil, Options{Prefixes: []string{"a"}}); r != errTrackPrefix {
		t.Fatal(r)
	}
	if _, r := tb.On(c, nil, Options{OptIn: true, OptOut: true}); r != errTrackBoth {
		t.Fatal(r)
	}
	if r := tb.Caching(nil, 1); r != errCachingMode {
		t.Fatal(r)
	}
	st, _ := tb.On(c, nil, Options{OptIn: true})
	if _, r := tb.On(c, st, Options{OptOut: true}); r != errTrackSwitch {
		t.Fatal(r)
	}
	if _, r := tb.On(c, st, Options{BCAST: true}); r != errTrackBcast {
		t.Fatal(r)
	}
	if r := tb.Caching(st, -1); r != errCachingNo {
		t.Fatal(r)
	}
	tb.Read(st, []string{"k"}, func() { t.Fatal("OPTIN read tracked without CACHING yes") })
	if r := tb.Caching(st, 1); r != "" {
		t.Fatal(r)
	}
	if in := tb.Info(st); len(in.Flags) != 3 || in.Flags[2] != "caching-yes" {
		t.Fatalf("info %+v", in)
	}
	tb.EndCaching(st)
	if in := tb.Info(st); len(in.Flags) != 2 {
		t.Fatalf("info after EndCaching %+v", in)
	}
	tb.Off(st)
	b, _ := tb.On(c, st, Options{BCAST: true, Prefixes: []string{"ab"}})
	if _, r := tb.On(c, b, Options{BCAST: true, Prefixes: []string{"a"}}); r == "" {
		t.Fatal("overlapping prefix accepted")
	}
	if in := tb.Info(b); in.Flags[1] != "bcast" || len(in.Prefixes) != 1 || in.Prefixes[0] != "ab" {
		t.Fatalf("info %+v", in)
	}
}
