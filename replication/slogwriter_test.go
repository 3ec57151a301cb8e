package replication

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"streamd/internal/lograte"
)

// TestRepeatedWriteFailureLogged: raft's "failed to commit logs", repeated
// by a single node re-electing itself on a full disk, is logged once a
// period with the count of the lines left out; other lines are not limited.
func TestRepeatedWriteFailureLogged(t *testing.T) {
	var out lockedBuffer
	now := time.Unix(1000, 0)
	w := slogWriter{log: slog.New(slog.NewTextHandler(&out, nil)),
		repeats: lograte.NewWithClock(repeatedLogEvery, func() time.Time { return now })}
	line := `[ERROR] raft: failed to commit logs: error="no space left on device"` + "\n"
	for range 5 {
		w.Write([]byte(line))
		w.Write([]byte("[WARN] raft: something else\n"))
	}
	if n := strings.Count(out.String(), "failed to commit logs"); n != 1 {
		t.Fatalf("%d lines within one period, want 1:\n%s", n, out.String())
	}
	if n := strings.Count(out.String(), "something else"); n != 5 {
		t.Fatalf("other lines limited too: %d of 5", n)
	}
	now = now.Add(repeatedLogEvery)
	w.Write([]byte(line))
	if !strings.Contains(out.String(), "and 4 more log write failures since the last line") {
		t.Fatalf("no count of the lines left out:\n%s", out.String())
	}
}
