package xargs

import "streamd/server/resp"

// Error replies of the argument parsers shared by more than one command,
// with Redis's exact texts (the texts its argument helpers send; syntax
// error and not-an-integer are resp.ErrSyntax and resp.ErrNotInteger). A
// family's own errors stay beside its parser.
const (
	// ErrInvalidID is the stream ID parsers' error.
	ErrInvalidID = resp.ErrorReply("ERR Invalid stream ID specified as stream command argument")
	// ErrStartID is an exclusive start bound with no successor.
	ErrStartID = resp.ErrorReply("ERR invalid start ID for the interval")
	// ErrEndID is an exclusive end bound with no predecessor.
	ErrEndID = resp.ErrorReply("ERR invalid end ID for the interval")
	// ErrTimeoutNotInt is getTimeoutFromObjectOrReply's (BLOCK, WAIT,
	// CLIENT PAUSE) for a value that is not an integer.
	ErrTimeoutNotInt = resp.ErrorReply("ERR timeout is not an integer or out of range")
	// ErrTimeoutNegative is getTimeoutFromObjectOrReply's for a negative
	// value.
	ErrTimeoutNegative = resp.ErrorReply("ERR timeout is negative")
	// ErrTimeoutRange is getTimeoutFromObjectOrReply's for a deadline past
	// the largest time.
	ErrTimeoutRange = resp.ErrorReply("ERR timeout is out of range")
)

// SubcommandSyntaxError is Redis's addReplySubcommandSyntaxError: the
// subcommand as the client typed it, and the container in upper case.
func SubcommandSyntaxError(container string, sub []byte) resp.ErrorReply {
	return resp.ErrorReply("ERR unknown subcommand or wrong number of arguments for '" +
		CString(sub, 128) + "'. Try " + container + " HELP.")
}
