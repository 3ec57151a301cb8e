package replication

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"streamd/internal/lograte"
)

// TestRepeatedWriteFailureLogged: raft's "failed to commit logs", repeated
// by a single node re-electing itself on a full disk, is logged once a
// period with the count of the lines left out; other lines are not limited.
func TestRepeatedWriteFailureLogged(t *testing.T) {
	var out lockedBuffer
	now := time.Unix(1000, 0)
	l := &raftLogger{log: slog.New(slog.NewTextHandler(&out, nil)), name: "raft",
		limits: &repeatLimits{m: map[string]*lograte.Limiter{}, now: func() time.Time { return now }}}
	for range 5 {
		l.Log(hclog.Error, "failed to commit logs", "error", "no space left on device")
		l.Log(hclog.Warn, "something else")
	}
	if n := strings.Count(out.String(), "failed to commit logs"); n != 1 {
		t.Fatalf("%d lines within one period, want 1:\n%s", n, out.String())
	}
	if n := strings.Count(out.String(), "something else"); n != 5 {
		t.Fatalf("other lines limited too: %d of 5", n)
	}
	now = now.Add(repeatedLogEvery)
	l.Log(hclog.Error, "failed to commit logs", "error", "no space left on device")
	if !strings.Contains(out.String(), "repeated=4") {
		t.Fatalf("no count of the lines left out:\n%s", out.String())
	}
}
