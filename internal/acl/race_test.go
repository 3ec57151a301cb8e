package acl

import (
	"fmt"
	"sync"
	"testing"
)

// TestPublishedUsersAreReadOnly: checks, descriptions and log writes run
// concurrently while clones of the published set are changed (go test
// -race reports any shared write).
func TestPublishedUsersAreReadOnly(t *testing.T) {
	us := NewUsers(testCatalog())
	setUser(t, us, "t", "on", "nopass", "-@all", "+@stream", "%R~r*", "(+set ~w*)")
	published := us
	log := NewLog(16)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			u := published.Get("t")
			for i := 0; i < 200; i++ {
				if d := u.Check("set", "", []KeyRef{w("r1")}); d != nil {
					log.Add(LogEntry{Reason: d.Reason.String(), Context: "toplevel", Object: d.Object, Username: "t"}, int64(i))
				}
				_ = u.Describe()
				_ = published.List()
				_ = log.Entries(3)
			}
		}(g)
	}
	for i := 0; i < 50; i++ {
		c := published.Clone()
		if err := c.SetUser("t", []string{"-xadd", fmt.Sprintf("~k%d", i), "(+get)"}); err != nil {
			t.Fatal(err)
		}
		c.DelUser("default")
	}
	wg.Wait()
	if got := published.Get("t").Describe(); got != "on nopass sanitize-payload %R~r* resetchannels -@all +@stream (~w* resetchannels -@all +set)" {
		t.Fatalf("published user changed: %q", got)
	}
	if published.Get("default") == nil {
		t.Fatal("published set changed")
	}
	if e := log.Entries(-1); len(e) != 1 || e[0].Count != 800 {
		t.Fatalf("log %+v", e)
	}
}
