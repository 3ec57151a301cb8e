package server

import (
	"strings"

	"streamd/server/tracking"
	"streamd/server/xargs"
)

// Client-side caching (CLIENT TRACKING), after Redis's tracking.c. The
// tracking table, like Redis's, is keyed by key name only, across databases.
// Invalidations are RESP3 pushes [invalidate, [key]] ([invalidate, null] on
// a flush). A RESP2 client can only receive them through REDIRECT to a
// client subscribed to __redis__:invalidate, which needs pub/sub (not
// implemented): then nothing is sent, as Redis sends nothing to a RESP2
// client that is neither RESP3 nor subscribed.

// errTrackRedirect is CLIENT TRACKING's refusal of an unknown REDIRECT
// client (the table's own refusals are in package tracking).
const errTrackRedirect = ErrorReply("ERR The client ID you want redirect to does not exist")

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
			id, r := xargs.Int(args[i])
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
		st, refusal := t.On(c, c.track, tracking.Options{BCAST: bcast, OptIn: optin, OptOut: optout,
			NoLoop: noloop, Redirect: redirect, Prefixes: prefixes})
		if refusal != "" {
			return refusal
		}
		c.track = st
		return OK
	case isOpt(args[2], "OFF"):
		t.Off(c.track)
		return OK
	}
	return errSyntax
}

// clientCaching is CLIENT CACHING yes|no: whether the next command's reads
// are tracked (OPTIN yes, OPTOUT no).
func (s *Server) clientCaching(c *Client, args [][]byte) Reply {
	answer := 0
	switch {
	case isOpt(args[2], "YES"):
		answer = 1
	case isOpt(args[2], "NO"):
		answer = -1
	}
	if r := s.hub().track.Caching(c.track, answer); r != "" {
		return r
	}
	if answer == 0 {
		return errSyntax
	}
	return OK
}

// clientTrackingInfo is CLIENT TRACKINGINFO: flags, redirect, prefixes.
func (s *Server) clientTrackingInfo(c *Client) Reply {
	in := s.hub().track.Info(c.track)
	if !in.On {
		return Map{{K: Bulk("flags"), V: Set{Bulk("off")}}, {K: Bulk("redirect"), V: Int(-1)},
			{K: Bulk("prefixes"), V: Array{}}}
	}
	flags := make(Set, 0, len(in.Flags)+1)
	for _, f := range in.Flags {
		flags = append(flags, Bulk(f))
	}
	if in.Redirect != 0 && in.Redirect != c.ID() && s.clientByID(in.Redirect) == nil {
		flags = append(flags, Bulk("broken_redirect"))
	}
	prefixes := make(Array, 0, len(in.Prefixes))
	for _, p := range in.Prefixes {
		prefixes = append(prefixes, Bulk(p))
	}
	return Map{{K: Bulk("flags"), V: flags}, {K: Bulk("redirect"), V: Int(in.Redirect)},
		{K: Bulk("prefixes"), V: prefixes}}
}

// trackRead remembers keys a tracking client reads (tracking.Table.Read):
// the client holds its pushes until the read's reply when they are.
func (s *Server) trackRead(c *Client, keys []string) {
	if c == nil || c.track == nil {
		return
	}
	s.hub().track.Read(c.track, keys, c.holdPushes)
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
	s.hub().track.EndCaching(c.track)
}

// invalidateKeys sends invalidations for keys modified by writer (nil: the
// server itself, e.g. expiry), as tracking.Table.Invalidate lists them.
func (s *Server) invalidateKeys(writer *Client, keys []string) {
	var w tracking.Client
	if writer != nil {
		w = writer
	}
	for _, inv := range s.hub().track.Invalidate(w, keys) {
		s.sendInvalidation(writer, inv.To.(*Client), inv.Redirect, Bulk(inv.Key))
	}
}

// invalidateFlushBy tells every tracking client that everything changed
// (FLUSHDB/FLUSHALL: [invalidate, null]) and empties the table, as Redis's
// trackingInvalidateKeysOnFlush; the writer's own push (writer: the client
// that flushed) follows its reply.
func (s *Server) invalidateFlushBy(writer *Client) {
	for _, inv := range s.hub().track.Flush() {
		s.sendInvalidation(writer, inv.To.(*Client), inv.Redirect, nil)
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
	s.hub().track.Off(c.track)
}
