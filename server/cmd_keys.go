package server

import (
	"time"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/xargs"
	"streamd/server/xreply"
)

// The generic keyspace commands (DEL, EXISTS, TYPE, KEYS, SCAN, RENAME,
// DBSIZE, FLUSHDB/FLUSHALL, the EXPIRE family, TTL, PERSIST), with the
// argument checks and texts of Redis 7's db.c and expire.c.

// keyspaceCommands are the generic keyspace commands.
func keyspaceCommands() []*Command {
	row := func(name string, arity int, flags, acl []string, first, last int, group, summary, since string,
		p func(*Client, [][]byte) (Plan, Reply)) *Command {
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
func cmdDEL(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.Del{DB: c.DB(), Names: names(args[1:])}, Format: intFormat}, nil
}

// cmdEXISTS is EXISTS key…: how many of the keys exist (a key named twice
// counts twice).
func cmdEXISTS(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.Exists{DB: c.DB(), Names: names(args[1:])}, Format: intFormat}, nil
}

// cmdTYPE is TYPE key: +stream or +none.
func cmdTYPE(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.Type{Base: keyBase(c, args[1])}, Format: func(res any, err error) Reply {
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
func cmdKEYS(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.KeysMatch{DB: c.DB(), Pattern: string(args[1])}, Format: func(res any, err error) Reply {
		if err != nil {
			return xreply.Error(err)
		}
		keys, _ := res.([]string)
		return stringsReply(keys)
	}}, nil
}

// cmdSCAN is SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]
// (arguments: xargs.Scan); the reply is [cursor as a bulk string, [keys]].
func cmdSCAN(c *Client, args [][]byte) (Plan, Reply) {
	q, r := xargs.Scan(args)
	if r != nil {
		return Plan{}, r
	}
	q.DB = c.DB()
	return Plan{Op: q, Format: func(res any, err error) Reply {
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
func cmdRENAME(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.Rename{DB: c.DB(), Src: string(args[1]), Dst: string(args[2])}, Format: okFormat}, nil
}

// cmdRENAMENX is RENAMENX key newkey: 1 renamed, 0 the destination exists.
func cmdRENAMENX(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.Rename{DB: c.DB(), Src: string(args[1]), Dst: string(args[2]), NX: true},
		Format: intFormat}, nil
}

// cmdDBSIZE is DBSIZE.
func cmdDBSIZE(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.DBSize{DB: c.DB()}, Format: intFormat}, nil
}

// cmdFLUSHDB is FLUSHDB [ASYNC|SYNC].
func cmdFLUSHDB(c *Client, args [][]byte) (Plan, Reply) {
	if r := xargs.Flush(args); r != nil {
		return Plan{}, r
	}
	return Plan{Op: wire.FlushDB{DB: c.DB()}, Format: okFormat}, nil
}

// cmdFLUSHALL is FLUSHALL [ASYNC|SYNC].
func cmdFLUSHALL(c *Client, args [][]byte) (Plan, Reply) {
	if r := xargs.Flush(args); r != nil {
		return Plan{}, r
	}
	return Plan{Op: wire.FlushAll{}, Format: okFormat}, nil
}

func cmdEXPIRE(c *Client, args [][]byte) (Plan, Reply)   { return expireGeneric(c, args, true, true) }
func cmdPEXPIRE(c *Client, args [][]byte) (Plan, Reply)  { return expireGeneric(c, args, true, false) }
func cmdEXPIREAT(c *Client, args [][]byte) (Plan, Reply) { return expireGeneric(c, args, false, true) }
func cmdPEXPIREAT(c *Client, args [][]byte) (Plan, Reply) {
	return expireGeneric(c, args, false, false)
}

// expireGeneric plans the EXPIRE family (arguments: xargs.Expire). The
// engine applies the condition and the deadline with the entry's time (XX
// LT on a key without a deadline answers 0, as in Redis).
func expireGeneric(c *Client, args [][]byte, relative, seconds bool) (Plan, Reply) {
	op, r := xargs.Expire(args, relative, seconds, time.Now().UnixMilli())
	if r != nil {
		return Plan{}, r
	}
	op.DB = c.DB()
	return Plan{Op: op, Format: intFormat}, nil
}

// cmdTTL is TTL key: seconds left, -1 without a deadline, -2 no key.
func cmdTTL(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.TTL{Base: keyBase(c, args[1])}, Format: intFormat}, nil
}

// cmdPTTL is PTTL key: as TTL, in milliseconds.
func cmdPTTL(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.TTL{Base: keyBase(c, args[1]), Millis: true}, Format: intFormat}, nil
}

// cmdPERSIST is PERSIST key: 1 if a deadline was removed.
func cmdPERSIST(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.Persist{Base: keyBase(c, args[1])}, Format: intFormat}, nil
}
