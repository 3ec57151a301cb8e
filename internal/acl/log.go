package acl

import "sync"

// groupingMs is ACL_LOG_GROUPING_MAX_TIME_DELTA: a denial within 60 s of a
// matching entry's last update counts into that entry.
const groupingMs = 60000

// groupingScan is how many of the newest entries Redis looks at for a match.
const groupingScan = 10

// LogEntry is one ACL LOG entry. Reason is "command", "key", "channel" or
// "auth" (Reason.String); Context is "toplevel", "multi", "lua" or
// "module"; Object is the command's full name (Denial.Object), the key, the
// channel, or for a failed AUTH/HELLO the command name as the client sent
// it (argv[0], "AUTH" or "hello"); ClientInfo is the client's CLIENT LIST
// line.
type LogEntry struct {
	Count                             int64
	Reason, Context, Object, Username string
	CreatedMs, UpdatedMs              int64
	ClientInfo                        string
	EntryID                           int64
}

// Fields is the entry's ACL LOG map in Redis 7.2's order: count (int64),
// reason, context, object, username (strings), age-seconds (float64),
// client-info (string), entry-id, timestamp-created,
// timestamp-last-updated (int64).
func (e LogEntry) Fields(nowMs int64) []Field {
	return []Field{
		{Name: "count", Value: e.Count},
		{Name: "reason", Value: e.Reason},
		{Name: "context", Value: e.Context},
		{Name: "object", Value: e.Object},
		{Name: "username", Value: e.Username},
		{Name: "age-seconds", Value: float64(nowMs-e.UpdatedMs) / 1000},
		{Name: "client-info", Value: e.ClientInfo},
		{Name: "entry-id", Value: e.EntryID},
		{Name: "timestamp-created", Value: e.CreatedMs},
		{Name: "timestamp-last-updated", Value: e.UpdatedMs},
	}
}

// Log is ACL LOG: newest entry first, at most max entries. It is safe for
// concurrent use.
type Log struct {
	mu      sync.Mutex
	max     int
	entries []LogEntry // newest first
	nextID  int64
}

// NewLog returns an empty log keeping max entries (acllog-max-len; Redis's
// default is 128).
func NewLog(max int) *Log { return &Log{max: max} }

// SetMaxLen changes acllog-max-len. As in Redis, a shorter limit trims
// the log on the next Add.
func (l *Log) SetMaxLen(max int) {
	l.mu.Lock()
	l.max = max
	l.mu.Unlock()
}

// Add records a denial at nowMs (Redis's addACLLogEntry). If one of the
// ten newest entries has the same reason, context, object and username and
// was last updated within 60 s, that entry's count goes up, its client
// info and update time are replaced and it moves to the front. Otherwise e
// becomes a new entry with count 1 and the next entry ID, and the oldest
// entries beyond the limit are dropped. e's Count, CreatedMs, UpdatedMs
// and EntryID are ignored.
func (l *Log) Add(e LogEntry, nowMs int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < len(l.entries) && i < groupingScan; i++ {
		c := l.entries[i]
		delta := c.UpdatedMs - nowMs
		if delta < 0 {
			delta = -delta
		}
		if c.Reason != e.Reason || c.Context != e.Context || delta > groupingMs ||
			c.Object != e.Object || c.Username != e.Username {
			continue
		}
		c.Count++
		c.ClientInfo = e.ClientInfo
		c.UpdatedMs = nowMs
		copy(l.entries[1:i+1], l.entries[:i])
		l.entries[0] = c
		return
	}
	e.Count = 1
	e.CreatedMs, e.UpdatedMs = nowMs, nowMs
	e.EntryID = l.nextID
	l.nextID++
	l.entries = append([]LogEntry{e}, l.entries...)
	for len(l.entries) > l.max && len(l.entries) > 0 {
		l.entries = l.entries[:len(l.entries)-1]
	}
}

// Entries returns up to count entries, newest first (count < 0: all).
func (l *Log) Entries(count int) []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if count < 0 || count > len(l.entries) {
		count = len(l.entries)
	}
	return append([]LogEntry(nil), l.entries[:count]...)
}

// Len is the number of entries.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Reset is ACL LOG RESET: the entries go; entry IDs keep counting.
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}
