package server

import (
	"math"
	"strings"
	"time"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/xreply"
)

// The generic keyspace commands (DEL, EXISTS, TYPE, KEYS, SCAN, RENAME,
// DBSIZE, FLUSHDB/FLUSHALL, the EXPIRE family, TTL, PERSIST), with the
// argument checks and texts of Redis 7's db.c and expire.c.

// keyspaceCommands are the generic keyspace commands.
func keyspaceCommands() []*Command {
	row := func(name string, arity int, flags, acl []string, first, last int, group, summary, since string,
		p func(*Client, [][]byte) (*Plan, Reply)) *Command {
		step := 0
		if first > 0 {
			step = 1
		}
		return &Command{Name: name, Arity: arity, Flags: flags, FirstKey: first, LastKey: last, Step: step,
			ACL: acl, Summary: summary, Since: since, Group: group, Planner: p}
	}
	fanout := func(c *Command) *Command { c.Fanout = true; return c }
	rf := []string{"readonly", "fast"}
	wf := []string{"write", "fast"}
	aclRF := []string{"@keyspace", "@read", "@fast"}
	aclWF := []string{"@keyspace", "@write", "@fast"}
	return []*Command{
		row("del", -2, []string{"write"}, []string{"@keyspace", "@write", "@slow"}, 1, -1, "generic",
			"Delete a key", "1.0.0", cmdDEL),
		row("unlink", -2, wf, aclWF, 1, -1, "generic",
			"Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.",
			"4.0.0", cmdDEL),
		row("exists", -2, rf, aclRF, 1, -1, "generic", "Determine if a key exists", "1.0.0", cmdEXISTS),
		row("type", 2, rf, aclRF, 1, 1, "generic", "Determine the type stored at key", "1.0.0", cmdTYPE),
		fanout(row("keys", 2, []string{"readonly"}, []string{"@keyspace", "@read", "@slow", "@dangerous"}, 0, 0, "generic",
			"Find all keys matching the given pattern", "1.0.0", cmdKEYS)),
		fanout(row("scan", -2, []string{"readonly"}, []string{"@keyspace", "@read", "@slow"}, 0, 0, "generic",
			"Incrementally iterate the keys space", "2.8.0", cmdSCAN)),
		row("rename", 3, []string{"write"}, []string{"@keyspace", "@write", "@slow"}, 1, 2, "generic",
			"Rename a key", "1.0.0", cmdRENAME),
		row("renamenx", 3, wf, aclWF, 1, 2, "generic",
			"Rename a key, only if the new key does not exist", "1.0.0", cmdRENAMENX),
		fanout(row("dbsize", 1, rf, aclRF, 0, 0, "server",
			"Return the number of keys in the selected database", "1.0.0", cmdDBSIZE)),
		fanout(row("flushdb", -1, []string{"write"}, []string{"@keyspace", "@write", "@slow", "@dangerous"}, 0, 0, "server",
			"Remove all keys from the current database", "1.0.0", cmdFLUSHDB)),
		fanout(row("flushall", -1, []string{"write"}, []string{"@keyspace", "@write", "@slow", "@dangerous"}, 0, 0, "server",
			"Remove all keys from all databases", "1.0.0", cmdFLUSHALL)),
		row("expire", -3, wf, aclWF, 1, 1, "generic", "Set a key's time to live in seconds", "1.0.0", cmdEXPIRE),
		row("pexpire", -3, wf, aclWF, 1, 1, "generic", "Set a key's time to live in milliseconds", "2.6.0", cmdPEXPIRE),
		row("expireat", -3, wf, aclWF, 1, 1, "generic",
			"Set the expiration for a key as a UNIX timestamp", "1.2.0", cmdEXPIREAT),
		row("pexpireat", -3, wf, aclWF, 1, 1, "generic",
			"Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0", cmdPEXPIREAT),
		row("ttl", 2, rf, aclRF, 1, 1, "generic", "Get the time to live for a key in seconds", "1.0.0", cmdTTL),
		row("pttl", 2, rf, aclRF, 1, 1, "generic", "Get the time to live for a key in milliseconds", "2.6.0", cmdPTTL),
		row("persist", 2, wf, aclWF, 1, 1, "generic", "Remove the expiration from a key", "2.2.0", cmdPERSIST),
	}
}

func names(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

// intFormat renders an int64 answer.
func intFormat(res any, err error) Reply {
	if err != nil {
		return xreply.Error(err)
	}
	n, _ := res.(int64)
	return Int(n)
}

// okFormat renders a nil answer as +OK.
func okFormat(res any, err error) Reply {
	if err != nil {
		return xreply.Error(err)
	}
	return OK
}

// cmdDEL is DEL and UNLINK key…: the number of keys removed.
func cmdDEL(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.Del{DB: c.DB(), Names: names(args[1:])}, Format: intFormat}, nil
}

// cmdEXISTS is EXISTS key…: how many of the keys exist (a key named twice
// counts twice).
func cmdEXISTS(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.Exists{DB: c.DB(), Names: names(args[1:])}, Format: intFormat}, nil
}

// cmdTYPE is TYPE key: +stream or +none.
func cmdTYPE(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.Type{Base: keyBase(c, args[1])}, Format: func(res any, err error) Reply {
		if err != nil {
			return xreply.Error(err)
		}
		t, _ := res.(string)
		return SimpleString(t)
	}}, nil
}

func stringsReply(keys []string) Array {
	out := make(Array, len(keys))
	for i, k := range keys {
		out[i] = Bulk(k)
	}
	return out
}

// cmdKEYS is KEYS pattern.
func cmdKEYS(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.KeysMatch{DB: c.DB(), Pattern: string(args[1])}, Format: func(res any, err error) Reply {
		if err != nil {
			return xreply.Error(err)
		}
		keys, _ := res.([]string)
		return stringsReply(keys)
	}}, nil
}

// errInvalidCursor is parseScanCursorOrReply's error.
const errInvalidCursor = ErrorReply("ERR invalid cursor")

// parseScanCursor mirrors Redis 7.0's parseScanCursorOrReply, which uses
// strtoul: an optional sign ("-1" wraps to 2^64-1, as strtoul negates),
// decimal digits, no leading space, no overflow.
func parseScanCursor(b []byte) (uint64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// cmdSCAN is SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]: the cursor
// is parsed first, then the options (COUNT < 1 is a syntax error, as in
// scanGenericCommand); the reply is [cursor as a bulk string, [keys]].
func cmdSCAN(c *Client, args [][]byte) (*Plan, Reply) {
	cursor, ok := parseScanCursor(args[1])
	if !ok {
		return nil, errInvalidCursor
	}
	q := wire.Scan{DB: c.DB(), Cursor: cursor, Count: 10}
	for i := 2; i < len(args); i++ {
		more := len(args) - 1 - i
		switch o := args[i]; {
		case isOpt(o, "COUNT") && more > 0:
			i++
			n, r := intArg(args[i])
			if r != nil {
				return nil, r
			}
			if n < 1 {
				return nil, errSyntax
			}
			q.Count = n
		case isOpt(o, "MATCH") && more > 0:
			i++
			q.Match = string(args[i])
			if q.Match == "*" { // Redis skips matching for "*"
				q.Match = ""
			}
		case isOpt(o, "TYPE") && more > 0:
			i++
			q.Type = string(args[i])
		default:
			return nil, errSyntax
		}
	}
	return &Plan{Op: q, Format: func(res any, err error) Reply {
		if err != nil {
			return xreply.Error(err)
		}
		sr, _ := res.(state.ScanResult)
		return Array{Bulk(uintString(sr.Cursor)), stringsReply(sr.Keys)}
	}}, nil
}

func uintString(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// cmdRENAME is RENAME key newkey: +OK or "ERR no such key".
func cmdRENAME(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.Rename{DB: c.DB(), Src: string(args[1]), Dst: string(args[2])}, Format: okFormat}, nil
}

// cmdRENAMENX is RENAMENX key newkey: 1 renamed, 0 the destination exists.
func cmdRENAMENX(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.Rename{DB: c.DB(), Src: string(args[1]), Dst: string(args[2]), NX: true},
		Format: intFormat}, nil
}

// cmdDBSIZE is DBSIZE.
func cmdDBSIZE(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.DBSize{DB: c.DB()}, Format: intFormat}, nil
}

// flushArgs checks FLUSHDB/FLUSHALL's optional ASYNC|SYNC (both are
// synchronous here: the engine drops the maps at once).
func flushArgs(args [][]byte) Reply {
	if len(args) == 1 || (len(args) == 2 && (isOpt(args[1], "ASYNC") || isOpt(args[1], "SYNC"))) {
		return nil
	}
	return errSyntax
}

// cmdFLUSHDB is FLUSHDB [ASYNC|SYNC].
func cmdFLUSHDB(c *Client, args [][]byte) (*Plan, Reply) {
	if r := flushArgs(args); r != nil {
		return nil, r
	}
	return &Plan{Op: wire.FlushDB{DB: c.DB()}, Format: okFormat}, nil
}

// cmdFLUSHALL is FLUSHALL [ASYNC|SYNC].
func cmdFLUSHALL(c *Client, args [][]byte) (*Plan, Reply) {
	if r := flushArgs(args); r != nil {
		return nil, r
	}
	return &Plan{Op: wire.FlushAll{}, Format: okFormat}, nil
}

func cmdEXPIRE(c *Client, args [][]byte) (*Plan, Reply)   { return expireGeneric(c, args, true, true) }
func cmdPEXPIRE(c *Client, args [][]byte) (*Plan, Reply)  { return expireGeneric(c, args, true, false) }
func cmdEXPIREAT(c *Client, args [][]byte) (*Plan, Reply) { return expireGeneric(c, args, false, true) }
func cmdPEXPIREAT(c *Client, args [][]byte) (*Plan, Reply) {
	return expireGeneric(c, args, false, false)
}

// expireGeneric mirrors Redis 7's expireGenericCommand: options first
// (parseExtendedExpireArgumentsOrReply), then the time, whose conversion to
// an absolute unix time in ms must not overflow ("invalid expire time in
// '<cmd>' command"). The engine applies the condition and the deadline with
// the entry's time; the options are passed as combined flags (XX LT on a
// key without a deadline answers 0, as in Redis).
func expireGeneric(c *Client, args [][]byte, relative, seconds bool) (*Plan, Reply) {
	var nx, xx, gt, lt bool
	for _, o := range args[3:] {
		switch {
		case isOpt(o, "NX"):
			nx = true
		case isOpt(o, "XX"):
			xx = true
		case isOpt(o, "GT"):
			gt = true
		case isOpt(o, "LT"):
			lt = true
		default:
			return nil, ErrorReply("ERR Unsupported option " + cString(o, 1<<20))
		}
	}
	if nx && (xx || gt || lt) {
		return nil, ErrorReply("ERR NX and XX, GT or LT options at the same time are not compatible")
	}
	if gt && lt {
		return nil, ErrorReply("ERR GT and LT options at the same time are not compatible")
	}
	when, r := intArg(args[2])
	if r != nil {
		return nil, r
	}
	invalid := ErrorReply("ERR invalid expire time in '" + strings.ToLower(string(args[0])) + "' command")
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return nil, invalid
		}
		when *= 1000
	}
	if relative && when > math.MaxInt64-time.Now().UnixMilli() {
		return nil, invalid
	}
	cond := wire.ExpireAlways
	for _, f := range []struct {
		on   bool
		flag wire.ExpireCond
	}{{nx, wire.ExpireNX}, {xx, wire.ExpireXX}, {gt, wire.ExpireGT}, {lt, wire.ExpireLT}} {
		if f.on {
			cond |= f.flag
		}
	}
	return &Plan{Op: wire.Expire{Base: keyBase(c, args[1]), Ms: when, Relative: relative, Cond: cond},
		Format: intFormat}, nil
}

// cmdTTL is TTL key: seconds left, -1 without a deadline, -2 no key.
func cmdTTL(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.TTL{Base: keyBase(c, args[1])}, Format: intFormat}, nil
}

// cmdPTTL is PTTL key: as TTL, in milliseconds.
func cmdPTTL(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.TTL{Base: keyBase(c, args[1]), Millis: true}, Format: intFormat}, nil
}

// cmdPERSIST is PERSIST key: 1 if a deadline was removed.
func cmdPERSIST(c *Client, args [][]byte) (*Plan, Reply) {
	return &Plan{Op: wire.Persist{Base: keyBase(c, args[1])}, Format: intFormat}, nil
}
