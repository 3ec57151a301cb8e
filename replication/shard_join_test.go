package replication

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamd/internal/testutil"
	"streamd/replication/logstore"
)

// setStable writes raft stable keys into a closed shard directory's log
// store, as a leader's or candidate's first contact does.
func setStable(t *testing.T, dir string, term uint64) {
	t.Helper()
	st, err := logstore.Open(dir, logstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetUint64(keyCurrentTerm, term); err != nil {
		t.Fatal(err)
	}
	if err := st.SetUint64(keyLastVoteTerm, term); err != nil {
		t.Fatal(err)
	}
	if err := st.Set(keyLastVoteCand, []byte("n9")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNeverMemberRestarts: a node started to be added (no bootstrap) that
// never received an entry restarts — with raft's term 0, and with a term and
// vote from a first contact (the JOINING marker) — and may bootstrap
// instead; without the marker an empty log beside a term is still refused
// as a lost log. A node that holds its configuration is a member at open.
func TestNeverMemberRestarts(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, joiningFile)
	addr := ""
	tn := startTestNode(t, "n2", dir, addr, nil)
	addr = tn.opts.RaftAddr
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("no JOINING marker on a node waiting to be added: %v", err)
	}
	if tn.n.WasMember() {
		t.Fatal("a new node waiting to be added reports it was a member")
	}
	tn.crash()

	// Restart as it is (term 0): fine.
	tn.open()
	tn.crash()

	// A leader's first contact raised the term (and a vote was cast), no
	// entry arrived: with the marker it restarts, keeping term and vote.
	setStable(t, dir, 5)
	tn.open()
	if term := tn.n.shards[0].raft.Stats()["term"]; term != "5" {
		t.Fatalf("term after the restart %s, want 5 (kept)", term)
	}
	tn.crash()

	// Without the marker the same state is a lost log: refused.
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	o := tn.opts
	o.RaftAddr = addr
	if n, err := OpenNode(o); err == nil {
		n.Close(false)
		t.Fatal("an empty log beside term 5 and no JOINING marker was accepted")
	} else if !strings.Contains(err.Error(), "log is empty but raft state exists (term 5)") {
		t.Fatalf("refusal: %v", err)
	}

	// With the marker back, --bootstrap forgets the join and bootstraps.
	if err := markJoining(dir); err != nil {
		t.Fatal(err)
	}
	tn.opts.Bootstrap = true
	tn.open()
	testutil.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
		if !tn.n.shards[0].IsLeader() {
			return errors.New("not leading yet")
		}
		return nil
	})
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("JOINING left after bootstrapping")
	}
	if tn.n.WasMember() {
		t.Fatal("a node bootstrapped now reports it was a member before")
	}
	tn.close()
	// Restarted, its data directory makes it a member.
	tn.opts.Bootstrap = false
	tn.open()
	if !tn.n.WasMember() {
		t.Fatal("a bootstrapped node does not report it is a member after a restart")
	}
}
