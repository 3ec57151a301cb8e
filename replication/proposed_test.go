package replication

import (
	"fmt"
	"testing"

	"streamd/replication/wire"
)

// The leader applies its XADD entries as proposed, without decoding them
// (raft's write path, and always a single node's local one); a replay of
// the same log decodes them. Both must give the same state, and nothing
// may stay recorded once the proposals resolved.
func TestProposedEntriesApplyAsDecoded(t *testing.T) {
	t.Run("raft", func(t *testing.T) { testProposedApplyAsDecoded(t, hooks{raftWrites: true}) })
	t.Run("local", func(t *testing.T) { testProposedApplyAsDecoded(t, hooks{}) })
}

func testProposedApplyAsDecoded(t *testing.T, h hooks) {
	dir := t.TempDir()
	s, err := open(Options{Dir: dir}, h)
	if err != nil {
		t.Fatal(err)
	}
	// Some entries certainly hold only XADDs: these, each waited for.
	for i := range 5 {
		if _, err := s.Propose(xadd("s", "f", "w", "n", fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	var pend []*Pending
	for i := range 300 {
		c := xadd("s", "f", "v", "n", string(rune('a'+i%26)))
		if i%7 == 0 {
			c.Trim = wire.Trim{Strategy: wire.TrimMaxLen, Approx: true, MaxLen: 50, Limit: -1}
		}
		if i%50 == 0 {
			c.IDMP = wire.IDMP{PID: "p", IID: string(rune('A' + i/50))}
		}
		pend = append(pend, s.ProposeAsync(c))
		if i%100 == 0 {
			// An entry with another command is decoded as before.
			pend = append(pend, s.ProposeAsync(wire.XGroupCreate{Base: wire.Base{Key: "s"}, Group: "g" + string(rune('0'+i/100))}))
		}
	}
	for i, p := range pend {
		if _, err := p.Wait(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	s.proposed.mu.Lock()
	left, taken := len(s.proposed.m), s.proposed.taken
	s.proposed.mu.Unlock()
	if left != 0 || (taken == 0) != (s.local != nil) {
		t.Fatalf("%d entries still recorded, %d applied as proposed", left, taken)
	}
	want := snapshotBytes(t, s)
	if err := s.Close(false); err != nil {
		t.Fatal(err)
	}
	r := mustOpen(t, Options{Dir: dir})
	if got := snapshotBytes(t, r); string(got) != string(want) {
		t.Fatal("the replayed (decoded) log gives another state than the leader's")
	}
	if r.proposed.taken != 0 {
		t.Fatalf("a replay applied %d entries as proposed", r.proposed.taken)
	}
}
