package server

import (
	"sort"
	"strings"
	"sync"
)

// Client-side caching (CLIENT TRACKING), after Redis's tracking.c. The
// tracking table, like Redis's, is keyed by key name only, across databases.
// Invalidations are RESP3 pushes [invalidate, [key]] ([invalidate, null] on
// a flush). A RESP2 client can only receive them through REDIRECT to a
// client subscribed to __redis__:invalidate, which needs pub/sub (not
// implemented): then nothing is sent, as Redis sends nothing to a RESP2
// client that is neither RESP3 nor subscribed.

// trackState is a client's tracking mode; the Client holds it in c.track.
// It is written by the client's own goroutine under trackingTable.mu and read
// by writers (other goroutines) under the same lock.
type trackState struct {
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

// trackingTable is the server's tracking table: key → clients that read it
// (default mode), and the clients in BCAST mode.
type trackingTable struct {
	mu    sync.Mutex
	keys  map[string]map[*Client]struct{}
	bcast map[*Client]struct{}
	all   map[*Client]struct{} // every client with tracking on
}

func newTrackingTable() *trackingTable {
	return &trackingTable{
		keys:  make(map[string]map[*Client]struct{}),
		bcast: make(map[*Client]struct{}),
		all:   make(map[*Client]struct{}),
	}
}

// Errors of CLIENT TRACKING / CACHING (Redis 7 texts).
const (
	errTrackRedirect = ErrorReply("ERR The client ID you want redirect to does not exist")
	errTrackPrefix   = ErrorReply("ERR PREFIX option requires BCAST mode to be enabled")
	errTrackBoth     = ErrorReply("ERR You can't specify both OPTIN mode and OPTOUT mode")
	errTrackBcastOpt = ErrorReply("ERR OPTIN and OPTOUT are not compatible with BCAST")
	errTrackBcast    = ErrorReply("ERR You can't switch BCAST mode on/off before disabling tracking for this " +
		"client, and then re-enabling it with a different mode.")
	errTrackSwitch = ErrorReply("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this " +
		"client, and then re-enabling it with a different mode.")
	errCachingMode = ErrorReply("ERR CLIENT CACHING can be called only when the client is in tracking mode " +
		"with OPTIN or OPTOUT mode enabled")
	errCachingYes = ErrorReply("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
	errCachingNo  = ErrorReply("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
)

// clientTracking is CLIENT TRACKING on|off [REDIRECT id] [PREFIX p]…
// [BCAST] [OPTIN] [OPTOUT] [NOLOOP], with clientCommand's checks in Redis's
// order. Turning it on again replaces the mode flags and adds prefixes.
func (s *Server) clientTracking(c *Client, args [][]byte) Reply {
	var bcast, optin, optout, noloop bool
	var redirect int64
	var prefixes []string
	for i := 3; i < len(args); i++ {
		more := len(args) - 1 - i
		switch o := args[i]; {
		case isOpt(o, "REDIRECT") && more > 0:
			i++
			if redirect != 0 {
				return ErrorReply("ERR A client can only redirect to a single other client")
			}
			id, r := intArg(args[i])
			if r != nil {
				return r
			}
			if id != c.ID() && s.clientByID(id) == nil {
				return errTrackRedirect
			}
			redirect = id
		case isOpt(o, "BCAST"):
			bcast = true
		case isOpt(o, "OPTIN"):
			optin = true
		case isOpt(o, "OPTOUT"):
			optout = true
		case isOpt(o, "NOLOOP"):
			noloop = true
		case isOpt(o, "PREFIX") && more > 0:
			i++
			prefixes = append(prefixes, string(args[i]))
		default:
			return errSyntax
		}
	}
	t := s.hub().track
	switch {
	case isOpt(args[2], "ON"):
		if !bcast && len(prefixes) > 0 {
			return errTrackPrefix
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		cur := c.track
		if cur != nil && cur.on && cur.bcast != bcast {
			return errTrackBcast
		}
		if bcast && (optin || optout) {
			return errTrackBcastOpt
		}
		if optin && optout {
			return errTrackBoth
		}
		if cur != nil && cur.on && ((optin && cur.optout) || (optout && cur.optin)) {
			return errTrackSwitch
		}
		if bcast {
			if r := checkPrefixes(cur, prefixes); r != nil {
				return r
			}
		}
		if cur == nil {
			cur = &trackState{}
			c.track = cur
		}
		cur.on = true
		cur.bcast, cur.optin, cur.optout, cur.noloop = bcast, optin, optout, noloop
		cur.redirect = redirect
		cur.caching = 0
		if bcast {
			cur.prefixes = mergePrefixes(cur.prefixes, prefixes)
			t.bcast[c] = struct{}{}
		}
		t.all[c] = struct{}{}
		return OK
	case isOpt(args[2], "OFF"):
		t.mu.Lock()
		t.disable(c)
		t.mu.Unlock()
		return OK
	}
	return errSyntax
}

// checkPrefixes refuses a prefix that overlaps another one of the client's
// (Redis's checkPrefixCollisionsOrReply).
func checkPrefixes(cur *trackState, add []string) Reply {
	var have []string
	if cur != nil && cur.on && cur.bcast {
		have = cur.prefixes
	}
	for i, p := range add {
		for _, q := range have {
			if strings.HasPrefix(p, q) || strings.HasPrefix(q, p) {
				return ErrorReply("ERR Prefix '" + p + "' overlaps with an existing prefix '" + q +
					"'. Prefixes for a single client must not overlap.")
			}
		}
		for _, q := range add[i+1:] {
			if strings.HasPrefix(p, q) || strings.HasPrefix(q, p) {
				return ErrorReply("ERR Prefix '" + p + "' overlaps with another provided prefix '" + q +
					"'. Prefixes for a single client must not overlap.")
			}
		}
	}
	return nil
}

func mergePrefixes(have, add []string) []string {
	out := append(append([]string(nil), have...), add...)
	if len(out) == 0 {
		// BCAST with no PREFIX: every key (the empty prefix).
		out = []string{""}
	}
	sort.Strings(out)
	return out
}

// disable turns tracking off for c and forgets its keys; t.mu is held.
func (t *trackingTable) disable(c *Client) {
	ts := c.track
	if ts == nil || !ts.on {
		return
	}
	for k := range ts.keys {
		if set := t.keys[k]; set != nil {
			delete(set, c)
			if len(set) == 0 {
				delete(t.keys, k)
			}
		}
	}
	delete(t.bcast, c)
	delete(t.all, c)
	*ts = trackState{}
}

// clientCaching is CLIENT CACHING yes|no: whether the next command's reads
// are tracked (OPTIN yes, OPTOUT no).
func (s *Server) clientCaching(c *Client, args [][]byte) Reply {
	t := s.hub().track
	t.mu.Lock()
	defer t.mu.Unlock()
	ts := c.track
	if ts == nil || !ts.on || (!ts.optin && !ts.optout) {
		return errCachingMode
	}
	switch {
	case isOpt(args[2], "YES"):
		if !ts.optin {
			return errCachingYes
		}
		ts.caching = 1
	case isOpt(args[2], "NO"):
		if !ts.optout {
			return errCachingNo
		}
		ts.caching = -1
	default:
		return errSyntax
	}
	return OK
}

// clientTrackingInfo is CLIENT TRACKINGINFO: flags, redirect, prefixes.
func (s *Server) clientTrackingInfo(c *Client) Reply {
	t := s.hub().track
	t.mu.Lock()
	defer t.mu.Unlock()
	ts := c.track
	if ts == nil || !ts.on {
		return Map{{K: Bulk("flags"), V: Set{Bulk("off")}}, {K: Bulk("redirect"), V: Int(-1)},
			{K: Bulk("prefixes"), V: Array{}}}
	}
	flags := Set{Bulk("on")}
	for _, f := range []struct {
		on   bool
		name string
	}{{ts.bcast, "bcast"}, {ts.optin, "optin"}, {ts.optout, "optout"}, {ts.caching == 1, "caching-yes"},
		{ts.caching == -1, "caching-no"}, {ts.noloop, "noloop"}} {
		if f.on {
			flags = append(flags, Bulk(f.name))
		}
	}
	if ts.redirect != 0 && ts.redirect != c.ID() && s.clientByID(ts.redirect) == nil {
		flags = append(flags, Bulk("broken_redirect"))
	}
	prefixes := Array{}
	for _, p := range ts.prefixes {
		if p != "" {
			prefixes = append(prefixes, Bulk(p))
		}
	}
	return Map{{K: Bulk("flags"), V: flags}, {K: Bulk("redirect"), V: Int(ts.redirect)},
		{K: Bulk("prefixes"), V: prefixes}}
}

// trackRead remembers keys a tracking client reads (Redis's
// trackingRememberKeys, for read-only commands): always in default mode,
// only after CLIENT CACHING yes in OPTIN mode, unless CLIENT CACHING no in
// OPTOUT mode; never in BCAST mode. The CACHING answer is used up by the
// read.
func (s *Server) trackRead(c *Client, keys []string) {
	if c == nil || c.track == nil {
		return
	}
	t := s.hub().track
	t.mu.Lock()
	defer t.mu.Unlock()
	ts := c.track
	if !ts.on || ts.bcast {
		return
	}
	caching := ts.caching
	ts.caching = 0
	if (ts.optin && caching != 1) || (ts.optout && caching == -1) {
		return
	}
	c.holdPushes()
	for _, k := range keys {
		set := t.keys[k]
		if set == nil {
			set = make(map[*Client]struct{})
			t.keys[k] = set
		}
		set[c] = struct{}{}
		if ts.keys == nil {
			ts.keys = make(map[string]struct{})
		}
		ts.keys[k] = struct{}{}
	}
}

// trackingAfterCommand ends CLIENT CACHING's answer once the command after
// it has run, whatever that command was (Redis's resetClient): it is kept
// after a CLIENT subcommand (CLIENT CACHING itself, CLIENT TRACKINGINFO…)
// and while a MULTI is open, so it covers the whole transaction. cmd is the
// command looked up (nil or a container for an unknown command or
// subcommand). dispatch must call it after every command's reply.
func (s *Server) trackingAfterCommand(c *Client, cmd *Command) {
	if c.track == nil {
		return
	}
	if cmd != nil && strings.HasPrefix(cmd.Name, "client|") {
		return
	}
	if c.tx != nil && c.tx.multi {
		return
	}
	t := s.hub().track
	t.mu.Lock()
	c.track.caching = 0
	t.mu.Unlock()
}

// invalidation is one push to send once the table's lock is released.
type invalidation struct {
	to  *Client
	key string
}

// invalidateKeys sends invalidations for keys modified by writer (nil: the
// server itself, e.g. expiry): to default-mode clients that read them (which
// then stop tracking them) and to BCAST clients with a matching prefix; a
// NOLOOP client is not told about its own writes.
func (s *Server) invalidateKeys(writer *Client, keys []string) {
	t := s.hub().track
	var out []invalidation
	t.mu.Lock()
	if len(t.all) == 0 {
		t.mu.Unlock()
		return
	}
	for _, k := range keys {
		if set := t.keys[k]; set != nil {
			for c := range set {
				if c.track.keys != nil {
					delete(c.track.keys, k)
				}
				if c == writer && c.track.noloop {
					continue
				}
				out = append(out, invalidation{c, k})
			}
			delete(t.keys, k)
		}
		for c := range t.bcast {
			if c == writer && c.track.noloop {
				continue
			}
			for _, p := range c.track.prefixes {
				if strings.HasPrefix(k, p) {
					out = append(out, invalidation{c, k})
					break
				}
			}
		}
	}
	redirects := make(map[*Client]int64, len(out))
	for _, inv := range out {
		redirects[inv.to] = inv.to.track.redirect
	}
	t.mu.Unlock()
	for _, inv := range out {
		s.sendInvalidation(writer, inv.to, redirects[inv.to], Bulk(inv.key))
	}
}

// invalidateFlushBy tells every tracking client that everything changed
// (FLUSHDB/FLUSHALL: [invalidate, null]) and empties the table, as Redis's
// trackingInvalidateKeysOnFlush; the writer's own push (writer: the client
// that flushed) follows its reply.
func (s *Server) invalidateFlushBy(writer *Client) {
	t := s.hub().track
	t.mu.Lock()
	type target struct {
		c        *Client
		redirect int64
	}
	var out []target
	for c := range t.all {
		out = append(out, target{c, c.track.redirect})
		c.track.keys = nil
	}
	t.keys = make(map[string]map[*Client]struct{})
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].c.ID() < out[j].c.ID() })
	for _, x := range out {
		s.sendInvalidation(writer, x.c, x.redirect, nil)
	}
}

// sendInvalidation pushes [invalidate, [key]] (key nil: [invalidate, null])
// to the client, or to its REDIRECT target. Only RESP3 connections can take
// a push; a RESP2 target would need pub/sub (not implemented), so it gets
// nothing, like a RESP2 client Redis cannot reach. A push to the writer
// itself (writer: the client whose command modified the key, nil for the
// server) is written after that command's reply, as Redis does
// (tracking_pending_keys).
func (s *Server) sendInvalidation(writer, c *Client, redirect int64, key Bulk) {
	to := c
	if redirect != 0 && redirect != c.ID() {
		to = s.clientByID(redirect)
		if to == nil {
			return
		}
	}
	if to.Proto() < 3 {
		return
	}
	var keys Reply = Null{}
	if key != nil {
		keys = Array{key}
	}
	p := Push{Bulk("invalidate"), keys}
	if to == writer {
		to.pushAfterReply(p)
		return
	}
	to.Push(p)
}

// trackingOff drops c from the tracking table (RESET, connection close).
func (s *Server) trackingOff(c *Client) {
	if c.track == nil {
		return
	}
	t := s.hub().track
	t.mu.Lock()
	t.disable(c)
	t.mu.Unlock()
}
