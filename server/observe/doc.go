// Package observe owns what SLOWLOG and MONITOR keep and show, apart from
// the server: the slow log itself (SlowLog: the bounded list of entries,
// their IDs, Redis's 32-argument / 128-byte truncation, the entry's reply
// shape), the redaction of secret arguments both share (Redact), MONITOR's
// line (Line: time, database, client address, arguments quoted as Redis's
// sdscatrepr) and the fan-out of lines to the monitoring clients
// (Monitors, over the small Monitor interface).
//
// The server keeps the command handlers, the dispatcher's hooks (which
// commands are logged or shown, the time a blocking command waited) and
// the clients; this package never imports it (internal/depcheck).
package observe
