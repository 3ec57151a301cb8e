package server

import (
	"streamd/server/resp"
	"streamd/server/xargs"
)

// Error replies shared by more than one command, with Redis's exact texts
// (shared.* in Redis's server.c, and the texts its argument helpers send);
// the argument parsers' own live in package xargs.
// An error used by one command family stays beside it (cmd_x*.go,
// cmd_tx.go, tracking.go); routing's are in route.go and forward.go.
const (
	// errSyntax is shared.syntaxerr.
	errSyntax = resp.ErrSyntax
	// errNotInteger is what getLongLongFromObjectOrReply sends.
	errNotInteger = resp.ErrNotInteger
	// errNoSuchKey is shared.nokeyerr.
	errNoSuchKey = ErrorReply("ERR no such key")
	// errTimeoutNotInt and errTimeoutNegative are
	// getTimeoutFromObjectOrReply's (BLOCK, WAIT, CLIENT PAUSE).
	errTimeoutNotInt   = xargs.ErrTimeoutNotInt
	errTimeoutNegative = xargs.ErrTimeoutNegative
)
