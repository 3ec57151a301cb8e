package replication

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// closedConnErr is what reading a connection this process closed returns.
var closedConnErr = &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}

// refusedErr is a dial to a peer whose process is gone.
var refusedErr = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}

func TestRaftLevel(t *testing.T) {
	peer := raft.Server{Suffrage: raft.Voter, ID: "n2", Address: "127.0.0.1:2"}
	for _, c := range []struct {
		clustered bool
		level     hclog.Level
		msg       string
		args      []any
		want      slog.Level
	}{
		// raft's INFO is streamd's DEBUG.
		{true, hclog.Info, "entering follower state", nil, slog.LevelDebug},
		// Our own shutdown closes the connections raft-net reads.
		{true, hclog.Error, "failed to decode incoming command", []any{"error", closedConnErr}, slog.LevelDebug},
		{true, hclog.Error, "failed to flush response", []any{"error", fmt.Errorf("write: %w", net.ErrClosed)}, slog.LevelDebug},
		{true, hclog.Error, "failed to decode incoming command", []any{"error", raft.ErrTransportShutdown}, slog.LevelDebug},
		{true, hclog.Error, "failed to decode incoming command", []any{"error", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}, slog.LevelWarn},
		// A decode error that is not a closed connection stays an ERROR.
		{true, hclog.Error, "failed to decode incoming command", []any{"error", errors.New("msgpack: bad type")}, slog.LevelError},
		// Routine cluster events: INFO.
		{true, hclog.Warn, "appendEntries rejected, sending older logs", []any{"peer", peer, "next", 1}, slog.LevelInfo},
		{true, hclog.Warn, "failed to get previous log", []any{"previous-index", 4, "last-index", 0}, slog.LevelInfo},
		{true, hclog.Error, "peer has newer term, stopping replication", []any{"peer", peer}, slog.LevelInfo},
		// A first election (no leader ever known) is INFO; losing a
		// leader is a WARN; the single node's own election is DEBUG.
		{true, hclog.Warn, "heartbeat timeout reached, starting election",
			[]any{"last-leader-addr", raft.ServerAddress(""), "last-leader-id", raft.ServerID("")}, slog.LevelInfo},
		{true, hclog.Warn, "heartbeat timeout reached, starting election",
			[]any{"last-leader-addr", raft.ServerAddress("127.0.0.1:1"), "last-leader-id", raft.ServerID("n1")}, slog.LevelWarn},
		{false, hclog.Warn, "heartbeat timeout reached, starting election", nil, slog.LevelDebug},
		// An unreachable peer: WARN, not ERROR.
		{true, hclog.Error, "failed to appendEntries to", []any{"peer", peer, "error", refusedErr}, slog.LevelWarn},
		{true, hclog.Error, "failed to heartbeat to", []any{"peer", "127.0.0.1:2", "backoff time", 10, "error", refusedErr}, slog.LevelWarn},
		{true, hclog.Error, "failed to make requestVote RPC", []any{"target", peer, "error", errors.New("dial: connection refused"), "term", 3}, slog.LevelWarn},
		// The same message with an error that is not the network's stays.
		{true, hclog.Error, "failed to appendEntries to", []any{"peer", peer, "error", errors.New("log not found")}, slog.LevelError},
		// Anything else keeps raft's level.
		{true, hclog.Error, "failed to take snapshot", []any{"error", errors.New("disk")}, slog.LevelError},
		{true, hclog.Warn, "failed to contact quorum of nodes, stepping down", nil, slog.LevelWarn},
	} {
		if got := raftLevel(c.clustered, c.level, c.msg, c.args); got != c.want {
			t.Errorf("raftLevel(%v, %v, %q, %v) = %v, want %v", c.clustered, c.level, c.msg, c.args, got, c.want)
		}
	}
}

// captureLogger is a raft logger over a text handler at level, and its
// output.
func captureLogger(level slog.Level) (hclog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
	return newRaftLogger(log, "raft", true), &buf
}

func TestRaftLoggerRecords(t *testing.T) {
	l, buf := captureLogger(slog.LevelInfo)
	peer := raft.Server{Suffrage: raft.Voter, ID: "n2", Address: "127.0.0.1:2"}
	l.Warn("appendEntries rejected, sending older logs", "peer", peer, "next", uint64(7))
	l.Error("failed to decode incoming command", "error", closedConnErr) // DEBUG: not shown at INFO
	l.Info("entering leader state", "leader", "n1")                      // DEBUG
	l.Debug("chatter")                                                   // dropped
	l.Named("net").With("shard", 2).Error("failed to take snapshot", "error", errors.New("disk full"))
	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got:\n%s", out)
	}
	if want := `level=INFO msg="raft: appendEntries rejected, sending older logs" peer="{Voter n2 127.0.0.1:2}" next=7`; !strings.HasSuffix(lines[0], want) {
		t.Errorf("line 1 = %s\nwant suffix %s", lines[0], want)
	}
	if want := `level=ERROR msg="raft.net: failed to take snapshot" shard=2 error="disk full"`; !strings.HasSuffix(lines[1], want) {
		t.Errorf("line 2 = %s\nwant suffix %s", lines[1], want)
	}
	if strings.Contains(out, "[WARN]") || strings.Contains(out, "[ERROR]") {
		t.Errorf("a level tag inside a message:\n%s", out)
	}

	// At loglevel debug raft's INFO and our closed connections show.
	l, buf = captureLogger(slog.LevelDebug)
	l.Info("entering leader state")
	l.Error("failed to decode incoming command", "error", closedConnErr)
	l.Debug("chatter")
	if got := strings.Count(buf.String(), "level=DEBUG"); got != 2 || strings.Contains(buf.String(), "chatter") {
		t.Errorf("at debug, want raft's INFO and the closed connection at DEBUG and no raft DEBUG:\n%s", buf)
	}
}

func TestRaftLoggerRepeatsLimited(t *testing.T) {
	l, buf := captureLogger(slog.LevelInfo)
	for range 20 {
		l.Error("failed to heartbeat to", "peer", "127.0.0.1:2", "error", refusedErr)
		l.Error("failed to heartbeat to", "peer", "127.0.0.1:3", "error", refusedErr)
	}
	out := buf.String()
	if n := strings.Count(out, "level=WARN"); n != 2 {
		t.Errorf("20 failed heartbeats to each of 2 peers within %v: want one WARN per peer, got %d:\n%s", repeatEvery, n, out)
	}
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("an unreachable peer logged as ERROR:\n%s", out)
	}
}

func TestRaftLoggerStandardWriter(t *testing.T) {
	l, buf := captureLogger(slog.LevelInfo)
	std := l.StandardLogger(nil)
	std.Print("[WARN]  something odd")
	std.Print("[ERROR] something broken")
	std.Print("[DEBUG] chatter")
	out := buf.String()
	for _, want := range []string{`level=WARN msg="raft: something odd"`, `level=ERROR msg="raft: something broken"`} {
		if !strings.Contains(out, want) {
			t.Errorf("want %s in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "chatter") || strings.Contains(out, "[WARN]") {
		t.Errorf("unexpected:\n%s", out)
	}
}
