// Package clients owns the pure parts of the CLIENT command family, apart
// from the server: the client info line CLIENT LIST and CLIENT INFO print
// (Info, Info.Line: Redis 7.2's fields in its order), the parsing of
// CLIENT LIST's TYPE/ID options (ParseList, ListFilter) and of CLIENT
// KILL's filters (ParseKill, KillFilter), the validation of client names
// and attributes (ValidateName, ValidAttr, ParseSetInfo), the small
// argument parsers of NO-EVICT, NO-TOUCH and UNBLOCK (OnOff,
// ParseUnblock) and the HELP text (HelpLines).
//
// The server keeps the Client type and the handlers: it fills an Info from
// a connection, calls this package, and does the killing and unblocking
// itself. This package never imports it (internal/depcheck).
package clients
