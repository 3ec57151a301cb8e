package replication

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"streamd/internal/lograte"
)

// raft's logger (hclog) adapted to slog: each of raft's records becomes one
// slog record at a level that says what streamd's operator should make of it
// (raftLevel), its message prefixed with the logger's name ("raft: …",
// "raft-net: …") and its key/value pairs as attributes. No "[WARN]" text
// ends up inside a message: the level is the record's.

// raftLogger implements hclog.Logger over a *slog.Logger.
type raftLogger struct {
	log       *slog.Logger
	name      string
	clustered bool
	implied   []any
	limits    *repeatLimits // shared by the loggers With and Named derive
}

// repeatEvery is how often a repeating WARN about an unreachable peer
// (repeatingRaftLines) is logged at most; the ones between go to DEBUG and
// the next WARN says how many were left out.
const repeatEvery = 10 * time.Second

// repeatLimits holds a limiter per repeating message and peer.
type repeatLimits struct {
	mu  sync.Mutex
	m   map[string]*lograte.Limiter
	now func() time.Time // nil: the wall clock (tests set it)
}

// allow reports whether the record keyed key goes out at WARN, and how many
// were left out since the last one that did.
func (r *repeatLimits) allow(key string) (bool, int) {
	r.mu.Lock()
	l := r.m[key]
	if l == nil {
		l = lograte.New(repeatEvery)
		if r.now != nil {
			l = lograte.NewWithClock(repeatEvery, r.now)
		}
		r.m[key] = l
	}
	r.mu.Unlock()
	return l.Allow()
}

var _ hclog.Logger = (*raftLogger)(nil)

// newRaftLogger returns raft's logger named name (raft, raft-net, …)
// writing to log. clustered tells a member of a cluster from the embedded
// single node, whose one voter elects itself at every start.
func newRaftLogger(log *slog.Logger, name string, clustered bool) hclog.Logger {
	return &raftLogger{log: log, name: name, clustered: clustered,
		limits: &repeatLimits{m: make(map[string]*lograte.Limiter)}}
}

// Log logs a record at hclog's level, re-levelled by raftLevel.
func (l *raftLogger) Log(level hclog.Level, msg string, args ...any) {
	lv, ok := l.level(level, msg, args)
	if !ok {
		return
	}
	ctx := context.Background()
	var leftOut int
	switch {
	case lv == slog.LevelWarn && isRepeating(msg):
		var allowed bool
		if allowed, leftOut = l.limits.allow(msg + "\x00" + peerOf(args)); !allowed {
			lv = slog.LevelDebug
		}
	case isWriteFailure(msg):
		// A single node re-elects itself and fails to append its first
		// entry ~30 times a second while the disk is full.
		var allowed bool
		if allowed, leftOut = l.limits.allow(msg); !allowed {
			lv = slog.LevelDebug
		}
	}
	if !l.log.Enabled(ctx, lv) {
		return
	}
	all := make([]any, 0, len(l.implied)+len(args)+2)
	all = append(all, l.implied...)
	all = append(all, args...)
	if leftOut > 0 {
		all = append(all, "repeated", leftOut)
	}
	l.log.Log(ctx, lv, l.name+": "+msg, slogArgs(all)...)
}

// level is the slog level of one of raft's records, and false for one that
// is dropped (raft's TRACE and DEBUG: per-RPC chatter).
func (l *raftLogger) level(level hclog.Level, msg string, args []any) (slog.Level, bool) {
	switch level {
	case hclog.Trace, hclog.Debug, hclog.NoLevel, hclog.Off:
		return 0, false
	}
	return raftLevel(l.clustered, level, msg, args), true
}

// routineRaftLines are raft messages about normal cluster operation, logged
// at INFO: a follower joining or lagging behind (both sides of it), the end
// of a term after an election or a transfer.
var routineRaftLines = []string{
	"appendEntries rejected, sending older logs", // leader: a follower joined or lagged
	"failed to get previous log",                 // follower: the same, seen from its side
	"peer has newer term, stopping replication",  // after an election or a transfer
	"failed to get log, sending snapshot",        // a far-behind follower
}

// peerRaftLines are raft errors about reaching another member; when the
// error is a network error the peer is down or unreachable, which is worth
// a WARN on this node but is no failure of it.
var peerRaftLines = []string{
	"failed to appendEntries to",
	"failed to heartbeat to",
	"failed to make requestVote RPC",
	"failed to start pipeline replication to",
	"failed to pipeline appendEntries",
	"failed to send snapshot to",
	"failed to install snapshot",
	"failed to decode incoming command", // raft-net: the peer went away mid-request
	"failed to flush response",
}

// repeatingRaftLines are WARNs raft repeats for as long as a peer is down
// or the quorum is lost: logged once per repeatEvery and peer.
var repeatingRaftLines = append([]string{
	"failed to contact",
	"Election timeout reached, restarting election",
}, peerRaftLines...)

// repeatedLogEvery is how often a repeated log write failure (raft's, or a
// refused proposal's) is logged at most.
const repeatedLogEvery = repeatEvery

// writeFailureRaftLines are raft's errors about a failed log write, repeated
// for as long as the log cannot be written: logged once per repeatEvery.
var writeFailureRaftLines = []string{"failed to commit logs", "failed to append to logs"}

// isWriteFailure reports a message of writeFailureRaftLines.
func isWriteFailure(msg string) bool {
	return slices.ContainsFunc(writeFailureRaftLines, func(s string) bool { return strings.HasPrefix(msg, s) })
}

// isRepeating reports a message of repeatingRaftLines.
func isRepeating(msg string) bool {
	return slices.ContainsFunc(repeatingRaftLines, func(s string) bool { return strings.HasPrefix(msg, s) })
}

// peerOf returns the peer a record is about ("peer", "target" or
// "server-id"), or "".
func peerOf(args []any) string {
	for _, k := range []string{"peer", "target", "server-id"} {
		if v := argValue(args, k); v != nil {
			return fmt.Sprint(v)
		}
	}
	return ""
}

// raftLevel maps one of raft's records (at hclog level INFO or above) to
// streamd's log level:
//   - raft's INFO (state changes, elections won) is DEBUG: `loglevel debug`
//     shows them; streamd logs the leadership changes itself.
//   - an error that is a connection this node closed ("use of closed network
//     connection", "transport shutdown": the transport or the raft port
//     shutting down) is DEBUG;
//   - routine cluster events (routineRaftLines) are INFO; so is the first
//     election of a member that has never known a leader, and on the embedded
//     single node the election it holds at every start is DEBUG;
//   - a peer that cannot be reached (peerRaftLines with a network error) is
//     WARN;
//   - everything else keeps raft's level (WARN, ERROR).
func raftLevel(clustered bool, level hclog.Level, msg string, args []any) slog.Level {
	if level == hclog.Info {
		return slog.LevelDebug
	}
	err := argError(args)
	if err != nil && isClosedConn(err) {
		return slog.LevelDebug
	}
	if strings.HasPrefix(msg, "heartbeat timeout reached, starting election") {
		if !clustered {
			return slog.LevelDebug
		}
		if v := argValue(args, "last-leader-id"); v == nil || fmt.Sprint(v) == "" {
			return slog.LevelInfo
		}
	}
	if slices.ContainsFunc(routineRaftLines, func(s string) bool { return strings.HasPrefix(msg, s) }) {
		return slog.LevelInfo
	}
	if err != nil && isNetError(err) &&
		slices.ContainsFunc(peerRaftLines, func(s string) bool { return strings.HasPrefix(msg, s) }) {
		return slog.LevelWarn
	}
	if level >= hclog.Error {
		return slog.LevelError
	}
	return slog.LevelWarn
}

// argValue returns the value of key in hclog's key/value args, or nil.
func argValue(args []any, key string) any {
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == key {
			return args[i+1]
		}
	}
	return nil
}

// argError returns the first error among args' values, or nil.
func argError(args []any) error {
	for i := 1; i < len(args); i += 2 {
		if err, ok := args[i].(error); ok {
			return err
		}
	}
	return nil
}

// isClosedConn reports an operation on a connection or listener this
// process closed, or on a transport or raft it shut down.
func isClosedConn(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, raft.ErrTransportShutdown) ||
		errors.Is(err, raft.ErrRaftShutdown) || strings.Contains(err.Error(), "use of closed network connection")
}

// isNetError reports an error reaching a peer: refused, reset, timed out,
// cut off.
func isNetError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	s := err.Error()
	for _, t := range []string{"connection refused", "connection reset", "broken pipe", "i/o timeout", "EOF", "no route to host"} {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

// slogArgs turns hclog's key/value args into slog's: errors and hclog's
// formatting types as text, other values as they are.
func slogArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if i%2 == 0 {
			out[i] = a
			continue
		}
		switch v := a.(type) {
		case error:
			out[i] = v.Error()
		case hclog.Format:
			if len(v) > 0 {
				if f, ok := v[0].(string); ok {
					out[i] = fmt.Sprintf(f, v[1:]...)
					continue
				}
			}
			out[i] = fmt.Sprint(v...)
		case hclog.Quote:
			out[i] = string(v)
		case hclog.Hex:
			out[i] = fmt.Sprintf("0x%x", int(v))
		case hclog.Octal:
			out[i] = fmt.Sprintf("0%o", int(v))
		case hclog.Binary:
			out[i] = fmt.Sprintf("0b%b", int(v))
		case string, bool, int, int64, uint64, int32, uint32, uint, float64:
			out[i] = v
		case fmt.Stringer:
			out[i] = v.String()
		default:
			out[i] = fmt.Sprint(v)
		}
	}
	return out
}

// Trace logs at hclog's TRACE (dropped).
func (l *raftLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }

// Debug logs at hclog's DEBUG (dropped).
func (l *raftLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }

// Info logs at hclog's INFO.
func (l *raftLogger) Info(msg string, args ...any) { l.Log(hclog.Info, msg, args...) }

// Warn logs at hclog's WARN.
func (l *raftLogger) Warn(msg string, args ...any) { l.Log(hclog.Warn, msg, args...) }

// Error logs at hclog's ERROR.
func (l *raftLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

// IsTrace reports false: raft's TRACE records are dropped.
func (l *raftLogger) IsTrace() bool { return false }

// IsDebug reports false: raft's DEBUG records are dropped.
func (l *raftLogger) IsDebug() bool { return false }

// IsInfo reports whether streamd logs at DEBUG (where raft's INFO goes).
func (l *raftLogger) IsInfo() bool { return l.log.Enabled(context.Background(), slog.LevelDebug) }

// IsWarn reports whether a raft WARN can be logged (it is logged at WARN at
// most).
func (l *raftLogger) IsWarn() bool { return l.log.Enabled(context.Background(), slog.LevelWarn) }

// IsError reports whether a raft ERROR can be logged.
func (l *raftLogger) IsError() bool { return l.log.Enabled(context.Background(), slog.LevelError) }

// ImpliedArgs returns the args added by With.
func (l *raftLogger) ImpliedArgs() []any { return l.implied }

// With returns a logger that adds args to every record.
func (l *raftLogger) With(args ...any) hclog.Logger {
	c := *l
	c.implied = append(slices.Clip(l.implied), args...)
	return &c
}

// Name returns the logger's name.
func (l *raftLogger) Name() string { return l.name }

// Named returns a logger named "<name>.<sub>".
func (l *raftLogger) Named(name string) hclog.Logger {
	c := *l
	if c.name != "" {
		name = c.name + "." + name
	}
	c.name = name
	return &c
}

// ResetNamed returns a logger named name.
func (l *raftLogger) ResetNamed(name string) hclog.Logger {
	c := *l
	c.name = name
	return &c
}

// SetLevel does nothing: streamd's loglevel (the slog handler's) decides.
func (l *raftLogger) SetLevel(hclog.Level) {}

// GetLevel returns INFO: raft's INFO and above reach raftLevel.
func (l *raftLogger) GetLevel() hclog.Level { return hclog.Info }

// StandardLogger returns a *log.Logger writing through StandardWriter.
func (l *raftLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(opts), "", 0)
}

// StandardWriter returns a writer whose lines are logged, at the level
// given by a leading "[ERROR]", "[WARN]", "[INFO]", "[DEBUG]" or "[TRACE]"
// (INFO without one), through Log.
func (l *raftLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return stdWriter{l}
}

// stdWriter is raftLogger's io.Writer for standard-library loggers.
type stdWriter struct{ l *raftLogger }

// Write logs each line of p.
func (w stdWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		level, msg := parseLevelPrefix(strings.TrimSpace(line))
		w.l.Log(level, msg)
	}
	return len(p), nil
}

// parseLevelPrefix splits a leading "[LEVEL]" off line.
func parseLevelPrefix(line string) (hclog.Level, string) {
	for _, p := range []struct {
		tag   string
		level hclog.Level
	}{{"[ERROR]", hclog.Error}, {"[ERR]", hclog.Error}, {"[WARN]", hclog.Warn}, {"[INFO]", hclog.Info},
		{"[DEBUG]", hclog.Debug}, {"[TRACE]", hclog.Trace}} {
		if rest, ok := strings.CutPrefix(line, p.tag); ok {
			return p.level, strings.TrimSpace(rest)
		}
	}
	return hclog.Info, line
}
