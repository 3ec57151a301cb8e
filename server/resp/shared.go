package resp

// Redis's shared error replies (shared.* in its server.c) that commands in
// several packages send.
const (
	// ErrSyntax is shared.syntaxerr.
	ErrSyntax = ErrorReply("ERR syntax error")
	// ErrNotInteger is what getLongLongFromObjectOrReply sends.
	ErrNotInteger = ErrorReply("ERR value is not an integer or out of range")
)
