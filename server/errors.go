package server

// Error replies shared by more than one command, with Redis's exact texts
// (shared.* in Redis's server.c, and the texts its argument helpers send).
// An error used by one command family stays beside it (cmd_x*.go,
// cmd_tx.go, tracking.go); routing's are in route.go and forward.go.
const (
	// errSyntax is shared.syntaxerr.
	errSyntax = ErrorReply("ERR syntax error")
	// errNotInteger is what getLongLongFromObjectOrReply sends.
	errNotInteger = ErrorReply("ERR value is not an integer or out of range")
	// errNoSuchKey is shared.nokeyerr.
	errNoSuchKey = ErrorReply("ERR no such key")
	// errInvalidID, errStartID and errEndID are the stream ID parsers'.
	errInvalidID = ErrorReply("ERR Invalid stream ID specified as stream command argument")
	errStartID   = ErrorReply("ERR invalid start ID for the interval")
	errEndID     = ErrorReply("ERR invalid end ID for the interval")
	// errTimeoutNotInt, errTimeoutNegative and errTimeoutRange are
	// getTimeoutFromObjectOrReply's (BLOCK, WAIT, CLIENT PAUSE).
	errTimeoutNotInt   = ErrorReply("ERR timeout is not an integer or out of range")
	errTimeoutNegative = ErrorReply("ERR timeout is negative")
	errTimeoutRange    = ErrorReply("ERR timeout is out of range")
)
