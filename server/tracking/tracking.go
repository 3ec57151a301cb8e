// Package tracking owns client-side caching's tracking table (CLIENT
// TRACKING, after Redis's tracking.c): each tracking client's mode (State:
// default, BCAST with its prefixes, OPTIN/OPTOUT with CLIENT CACHING's
// answer, NOLOOP, REDIRECT), the key → clients index of what default-mode
// clients read, and who is told when keys change (Invalidate, Flush). Like
// Redis's, the table is keyed by key name only, across databases.
//
// The server keeps the commands' argument parsing and replies, the
// connections and sending the pushes; a client is seen here only as a
// Client. This package never imports the server (internal/depcheck).
package tracking

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"streamd/server/resp"
)

// Client is a tracking client as the table sees it: compared by identity
// (a pointer to the connection), ordered by ID.
type Client interface {
	ID() int64
}

// State is one client's tracking mode; the server keeps it with the
// client (nil until it first turns tracking on) and hands it to the
// Table's methods, which read and change it under the table's lock.
type State struct {
	owner                        Client
	on                           bool
	bcast, optin, optout, noloop bool
	redirect                     int64
	prefixes                     []string // BCAST prefixes, sorted
	// caching is CLIENT CACHING's answer for the next command: +1 yes
	// (OPTIN), -1 no (OPTOUT), 0 none.
	caching int
	// keys are the keys this client is tracked for (default mode).
	keys map[string]struct{}
}

// Table is the server's tracking table: key → clients that read it
// (default mode), and the clients in BCAST mode. It is safe for
// concurrent use.
type Table struct {
	mu    sync.Mutex
	keys  map[string]map[*State]struct{}
	bcast map[*State]struct{}
	all   map[*State]struct{} // every client with tracking on
	// tracking is len(all), kept under mu and read without it: a write
	// while no client tracks skips mu (Invalidate).
	tracking atomic.Int64
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{
		keys:  make(map[string]map[*State]struct{}),
		bcast: make(map[*State]struct{}),
		all:   make(map[*State]struct{}),
	}
}

// Errors of CLIENT TRACKING / CACHING (Redis 7 texts).
const (
	errTrackPrefix   = resp.ErrorReply("ERR PREFIX option requires BCAST mode to be enabled")
	errTrackBoth     = resp.ErrorReply("ERR You can't specify both OPTIN mode and OPTOUT mode")
	errTrackBcastOpt = resp.ErrorReply("ERR OPTIN and OPTOUT are not compatible with BCAST")
	errTrackBcast    = resp.ErrorReply("ERR You can't switch BCAST mode on/off before disabling tracking for this " +
		"client, and then re-enabling it with a different mode.")
	errTrackSwitch = resp.ErrorReply("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this " +
		"client, and then re-enabling it with a different mode.")
	errCachingMode = resp.ErrorReply("ERR CLIENT CACHING can be called only when the client is in tracking mode " +
		"with OPTIN or OPTOUT mode enabled")
	errCachingYes = resp.ErrorReply("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
	errCachingNo  = resp.ErrorReply("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
)

// Options is CLIENT TRACKING ON's mode (its arguments, parsed).
type Options struct {
	BCAST, OptIn, OptOut, NoLoop bool
	// Redirect is the client ID invalidations go to (0: the client).
	Redirect int64
	// Prefixes are the BCAST prefixes to add.
	Prefixes []string
}

// On turns tracking on for owner, whose current state is st (nil: it never
// tracked), with Redis's checks in its order; turning it on again replaces
// the mode flags and adds prefixes. It returns the state to keep (st, or a
// new one), or Redis's refusal (st unchanged).
func (t *Table) On(owner Client, st *State, o Options) (*State, resp.ErrorReply) {
	if !o.BCAST && len(o.Prefixes) > 0 {
		return st, errTrackPrefix
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := st
	if cur != nil && cur.on && cur.bcast != o.BCAST {
		return st, errTrackBcast
	}
	if o.BCAST && (o.OptIn || o.OptOut) {
		return st, errTrackBcastOpt
	}
	if o.OptIn && o.OptOut {
		return st, errTrackBoth
	}
	if cur != nil && cur.on && ((o.OptIn && cur.optout) || (o.OptOut && cur.optin)) {
		return st, errTrackSwitch
	}
	if o.BCAST {
		if r := checkPrefixes(cur, o.Prefixes); r != "" {
			return st, r
		}
	}
	if cur == nil {
		cur = &State{}
	}
	cur.owner = owner
	cur.on = true
	cur.bcast, cur.optin, cur.optout, cur.noloop = o.BCAST, o.OptIn, o.OptOut, o.NoLoop
	cur.redirect = o.Redirect
	cur.caching = 0
	if o.BCAST {
		cur.prefixes = mergePrefixes(cur.prefixes, o.Prefixes)
		t.bcast[cur] = struct{}{}
	}
	t.all[cur] = struct{}{}
	t.tracking.Store(int64(len(t.all)))
	return cur, ""
}

// checkPrefixes refuses a prefix that overlaps another one of the client's
// (Redis's checkPrefixCollisionsOrReply).
func checkPrefixes(cur *State, add []string) resp.ErrorReply {
	var have []string
	if cur != nil && cur.on && cur.bcast {
		have = cur.prefixes
	}
	for i, p := range add {
		for _, q := range have {
			if strings.HasPrefix(p, q) || strings.HasPrefix(q, p) {
				return resp.ErrorReply("ERR Prefix '" + p + "' overlaps with an existing prefix '" + q +
					"'. Prefixes for a single client must not overlap.")
			}
		}
		for _, q := range add[i+1:] {
			if strings.HasPrefix(p, q) || strings.HasPrefix(q, p) {
				return resp.ErrorReply("ERR Prefix '" + p + "' overlaps with another provided prefix '" + q +
					"'. Prefixes for a single client must not overlap.")
			}
		}
	}
	return ""
}

// mergePrefixes returns have and add, sorted; none at all is the empty
// prefix.
func mergePrefixes(have, add []string) []string {
	out := append(append([]string(nil), have...), add...)
	if len(out) == 0 {
		// BCAST with no PREFIX: every key (the empty prefix).
		out = []string{""}
	}
	sort.Strings(out)
	return out
}

// Off turns tracking off for st's client and forgets its keys (CLIENT
// TRACKING OFF, RESET, connection close). st may be nil.
func (t *Table) Off(st *State) {
	if st == nil {
		return
	}
	t.mu.Lock()
	t.disable(st)
	t.mu.Unlock()
}

// disable is Off with t.mu held.
func (t *Table) disable(st *State) {
	if !st.on {
		return
	}
	for k := range st.keys {
		if set := t.keys[k]; set != nil {
			delete(set, st)
			if len(set) == 0 {
				delete(t.keys, k)
			}
		}
	}
	delete(t.bcast, st)
	delete(t.all, st)
	t.tracking.Store(int64(len(t.all)))
	*st = State{}
}

// Caching is CLIENT CACHING yes|no: whether the next command's reads are
// tracked. answer is +1 for YES (OPTIN mode), -1 for NO (OPTOUT mode), 0
// for neither (only the mode is checked, nothing changes). It returns
// Redis's refusal, or "".
func (t *Table) Caching(st *State, answer int) resp.ErrorReply {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st == nil || !st.on || (!st.optin && !st.optout) {
		return errCachingMode
	}
	switch {
	case answer > 0:
		if !st.optin {
			return errCachingYes
		}
		st.caching = 1
	case answer < 0:
		if !st.optout {
			return errCachingNo
		}
		st.caching = -1
	}
	return ""
}

// Info is what CLIENT TRACKINGINFO shows of a client's tracking.
type Info struct {
	// On is false when tracking is off (nothing else is set then).
	On bool
	// Flags are the mode's flags in Redis's order: on, bcast, optin,
	// optout, caching-yes, caching-no, noloop.
	Flags    []string
	Redirect int64
	// Prefixes are the BCAST prefixes, the empty one left out.
	Prefixes []string
}

// Info returns st's tracking (st may be nil).
func (t *Table) Info(st *State) Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st == nil || !st.on {
		return Info{}
	}
	in := Info{On: true, Flags: []string{"on"}, Redirect: st.redirect, Prefixes: []string{}}
	for _, f := range []struct {
		on   bool
		name string
	}{{st.bcast, "bcast"}, {st.optin, "optin"}, {st.optout, "optout"}, {st.caching == 1, "caching-yes"},
		{st.caching == -1, "caching-no"}, {st.noloop, "noloop"}} {
		if f.on {
			in.Flags = append(in.Flags, f.name)
		}
	}
	for _, p := range st.prefixes {
		if p != "" {
			in.Prefixes = append(in.Prefixes, p)
		}
	}
	return in
}

// Read remembers keys read by st's client (Redis's trackingRememberKeys,
// for read-only commands): always in default mode, only after CLIENT
// CACHING yes in OPTIN mode, unless CLIENT CACHING no in OPTOUT mode;
// never in BCAST mode. The CACHING answer is used up by the read. When the
// keys are remembered, hold is called first, under the table's lock (the
// client holds its pushes until the read's reply).
func (t *Table) Read(st *State, keys []string, hold func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !st.on || st.bcast {
		return
	}
	caching := st.caching
	st.caching = 0
	if (st.optin && caching != 1) || (st.optout && caching == -1) {
		return
	}
	hold()
	for _, k := range keys {
		set := t.keys[k]
		if set == nil {
			set = make(map[*State]struct{})
			t.keys[k] = set
		}
		set[st] = struct{}{}
		if st.keys == nil {
			st.keys = make(map[string]struct{})
		}
		st.keys[k] = struct{}{}
	}
}

// EndCaching forgets CLIENT CACHING's answer (the command after it ran).
func (t *Table) EndCaching(st *State) {
	t.mu.Lock()
	st.caching = 0
	t.mu.Unlock()
}

// Invalidation is one push to send: To (or its Redirect target, when
// non-zero) is told that Key changed.
type Invalidation struct {
	To       Client
	Redirect int64
	Key      string
}

// Invalidate returns the invalidations for keys modified by writer (nil:
// the server itself, e.g. expiry), per key in order: to default-mode
// clients that read it (which then stop tracking it) and to BCAST clients
// with a matching prefix; a NOLOOP client is not told about its own
// writes.
func (t *Table) Invalidate(writer Client, keys []string) []Invalidation {
	if t.tracking.Load() == 0 {
		// No client tracks: one that starts after this load reads
		// what the write left.
		return nil
	}
	var out []*State
	var outKeys []string
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.all) == 0 {
		return nil
	}
	for _, k := range keys {
		if set := t.keys[k]; set != nil {
			for st := range set {
				if st.keys != nil {
					delete(st.keys, k)
				}
				if writer != nil && st.owner == writer && st.noloop {
					continue
				}
				out, outKeys = append(out, st), append(outKeys, k)
			}
			delete(t.keys, k)
		}
		for st := range t.bcast {
			if writer != nil && st.owner == writer && st.noloop {
				continue
			}
			for _, p := range st.prefixes {
				if strings.HasPrefix(k, p) {
					out, outKeys = append(out, st), append(outKeys, k)
					break
				}
			}
		}
	}
	invs := make([]Invalidation, len(out))
	for i, st := range out {
		invs[i] = Invalidation{To: st.owner, Redirect: st.redirect, Key: outKeys[i]}
	}
	return invs
}

// Flush returns one invalidation per tracking client, in ID order, for a
// flush (FLUSHDB/FLUSHALL: everything changed; Key is unused), and empties
// the table, as Redis's trackingInvalidateKeysOnFlush.
func (t *Table) Flush() []Invalidation {
	t.mu.Lock()
	var out []Invalidation
	for st := range t.all {
		out = append(out, Invalidation{To: st.owner, Redirect: st.redirect})
		st.keys = nil
	}
	t.keys = make(map[string]map[*State]struct{})
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].To.ID() < out[j].To.ID() })
	return out
}
