package server

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/router"
	"streamd/server/xreply"
)

// The keyspace administration commands: TOUCH, EXPIRETIME, PEXPIRETIME,
// RANDOMKEY, COPY, SWAPDB, DUMP and RESTORE. Writes (COPY, SWAPDB,
// RESTORE) go through the log as wire ops; RANDOMKEY's randomness is a seed
// drawn here, never in the state machine.
func (s *Server) keyAdminCommands() []*Command {
	row := func(name string, arity int, flags, acl []string, first, last int, summary, since string,
		p func(*Client, [][]byte) (Plan, Reply)) *Command {
		step := 0
		if first > 0 {
			step = 1
		}
		return &Command{Name: name, Arity: arity, Flags: flags, FirstKey: first, LastKey: last, Step: step,
			ACL: acl, Summary: summary, Since: since, Group: "generic", Planner: p}
	}
	rf := []string{"readonly", "fast"}
	aclRF := []string{"@keyspace", "@read", "@fast"}
	swapdb := row("swapdb", 3, []string{"write", "fast"}, []string{"@keyspace", "@write", "@fast", "@dangerous"}, 0, 0,
		"Swaps two Redis databases", "4.0.0", s.cmdSWAPDB)
	swapdb.Group, swapdb.Fanout = "server", true
	randomkey := row("randomkey", 1, []string{"readonly"}, []string{"@keyspace", "@read", "@slow"}, 0, 0,
		"Return a random key from the keyspace", "1.0.0", cmdRANDOMKEY)
	randomkey.Fanout = true
	return []*Command{
		row("touch", -2, rf, aclRF, 1, -1,
			"Alters the last access time of a key(s). Returns the number of existing keys specified.", "3.2.1", s.cmdTOUCH),
		row("expiretime", 2, rf, aclRF, 1, 1,
			"Get the expiration Unix timestamp for a key", "7.0.0", expireTimePlanner(false)),
		row("pexpiretime", 2, rf, aclRF, 1, 1,
			"Get the expiration Unix timestamp for a key in milliseconds", "7.0.0", expireTimePlanner(true)),
		randomkey,
		row("copy", -3, []string{"write", "denyoom"}, []string{"@keyspace", "@write", "@slow"}, 1, 2,
			"Copy a key", "6.2.0", s.cmdCOPY),
		swapdb,
		row("dump", 2, []string{"readonly"}, []string{"@keyspace", "@read", "@slow"}, 1, 1,
			"Return a serialized version of the value stored at the specified key.", "2.6.0", cmdDUMP),
		row("restore", -4, []string{"write", "denyoom"}, []string{"@keyspace", "@write", "@slow", "@dangerous"}, 1, 1,
			"Create a key using the provided serialized value, previously obtained using DUMP.", "2.6.0", s.cmdRESTORE),
	}
}

// cmdTOUCH is TOUCH key…: how many of the keys exist (a key named twice
// counts twice); it marks them accessed (OBJECT IDLETIME).
func (s *Server) cmdTOUCH(c *Client, args [][]byte) (Plan, Reply) {
	op := wire.Exists{DB: c.DB(), Names: names(args[1:])}
	return Plan{Op: op, Format: func(res any, err error) Reply {
		if n, _ := res.(int64); err == nil && n > 0 {
			s.access.set(op.DB, op.Names, time.Now().UnixMilli())
		}
		return intFormat(res, err)
	}}, nil
}

// expireTimePlanner is EXPIRETIME/PEXPIRETIME key: the deadline as a unix
// time in s or ms, -1 without one, -2 without the key.
func expireTimePlanner(millis bool) func(*Client, [][]byte) (Plan, Reply) {
	return func(c *Client, args [][]byte) (Plan, Reply) {
		return Plan{Op: wire.TTL{Base: keyBase(c, args[1]), Millis: millis, Abs: true}, Format: intFormat}, nil
	}
}

// cmdRANDOMKEY is RANDOMKEY: a random live key, or null.
func cmdRANDOMKEY(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.RandomKey{DB: c.DB(), Seed: rand.Uint64()}, Format: bulkOrNull}, nil
}

// bulkOrNull renders a string or []byte answer as a bulk, nil as null.
func bulkOrNull(res any, err error) Reply {
	if err != nil {
		return xreply.Error(err)
	}
	switch v := res.(type) {
	case string:
		return BulkString(v)
	case []byte:
		return Bulk(v)
	}
	return Null{}
}

// cmdDUMP is DUMP key: the key's payload (state.dumpObject's format), or
// null.
func cmdDUMP(c *Client, args [][]byte) (Plan, Reply) {
	return Plan{Op: wire.Dump{Base: keyBase(c, args[1])}, Format: bulkOrNull}, nil
}

// dbIndex parses a database index as Redis's getIntFromObjectOrReply: not
// an integer → msg (or "value is not an integer or out of range"), beyond
// an int → msg (or "value is out of range").
func dbIndex(arg []byte, msg string) (int, Reply) {
	n, err := strconv.ParseInt(string(arg), 10, 64)
	if err != nil {
		if msg != "" {
			return 0, ErrorReply("ERR " + msg)
		}
		return 0, errNotInteger
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		if msg != "" {
			return 0, ErrorReply("ERR " + msg)
		}
		return 0, ErrorReply("ERR value is out of range")
	}
	return int(n), nil
}

// errDBRange is selectDb's refusal.
var errDBRange = ErrorReply(state.ErrDBIndexRange.Error())

// cmdCOPY is COPY source destination [DB n] [REPLACE], argument checks in
// Redis's order: options, DB range, cluster mode (same database only), then
// the state machine's (same key, missing source, existing destination).
func (s *Server) cmdCOPY(c *Client, args [][]byte) (Plan, Reply) {
	op := wire.Copy{DB: c.DB(), Src: string(args[1]), DstDB: c.DB(), Dst: string(args[2])}
	for j := 3; j < len(args); j++ {
		switch {
		case isOpt(args[j], "REPLACE"):
			op.Replace = true
		case isOpt(args[j], "DB") && j+1 < len(args):
			db, r := dbIndex(args[j+1], "")
			if r != nil {
				return Plan{}, r
			}
			if db < 0 || db >= state.NumDatabases {
				return Plan{}, errDBRange
			}
			op.DstDB = db
			j++
		default:
			return Plan{}, errSyntax
		}
	}
	if s.config().ClusterEnabled && (op.DB != 0 || op.DstDB != 0) {
		return Plan{}, ErrorReply("ERR Copying to another database is not allowed in cluster mode")
	}
	return Plan{Op: op, Format: intFormat}, nil
}

// cmdSWAPDB is SWAPDB index1 index2 (refused in cluster mode, as Redis).
func (s *Server) cmdSWAPDB(c *Client, args [][]byte) (Plan, Reply) {
	if s.config().ClusterEnabled {
		return Plan{}, ErrorReply("ERR SWAPDB is not allowed in cluster mode")
	}
	a, r := dbIndex(args[1], "invalid first DB index")
	if r != nil {
		return Plan{}, r
	}
	b, r := dbIndex(args[2], "invalid second DB index")
	if r != nil {
		return Plan{}, r
	}
	if a < 0 || a >= state.NumDatabases || b < 0 || b >= state.NumDatabases {
		return Plan{}, errDBRange
	}
	return Plan{Op: wire.SwapDB{A: a, B: b}, Format: okFormat}, nil
}

// cmdRESTORE is RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s]
// [FREQ f]. Redis checks the options, then BUSYKEY, then the TTL, then the
// payload's version and checksum, then decodes it: the server checks all
// but the key before proposing, and a TTL or payload error is answered
// after a read that gives BUSYKEY its turn first. IDLETIME sets the key's
// access time here; FREQ is accepted and unused (no LFU policy), as Redis
// does under an LRU or no-eviction policy.
func (s *Server) cmdRESTORE(c *Client, args [][]byte) (Plan, Reply) {
	op := wire.Restore{Base: keyBase(c, args[1])}
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(args); j++ {
		more := len(args) - j - 1
		switch {
		case isOpt(args[j], "REPLACE"):
			op.Replace = true
		case isOpt(args[j], "ABSTTL"):
			op.Abs = true
		case isOpt(args[j], "IDLETIME") && more >= 1 && freq == -1:
			n, err := strconv.ParseInt(string(args[j+1]), 10, 64)
			if err != nil {
				return Plan{}, errNotInteger
			}
			if n < 0 {
				return Plan{}, ErrorReply("ERR Invalid IDLETIME value, must be >= 0")
			}
			idle = n
			j++
		case isOpt(args[j], "FREQ") && more >= 1 && idle == -1:
			n, err := strconv.ParseInt(string(args[j+1]), 10, 64)
			if err != nil {
				return Plan{}, errNotInteger
			}
			if n < 0 || n > 255 {
				return Plan{}, ErrorReply("ERR Invalid FREQ value, must be >= 0 and <= 255")
			}
			freq = n
			j++
		default:
			return Plan{}, errSyntax
		}
	}
	var later Reply
	ttl, err := strconv.ParseInt(string(args[2]), 10, 64)
	switch {
	case err != nil:
		later = errNotInteger
	case ttl < 0:
		later = ErrorReply("ERR Invalid TTL value, must be >= 0")
	default:
		if err := state.VerifyDump(args[3]); err != nil {
			later = ErrorReply(err.Error())
		}
	}
	if later != nil {
		if op.Replace {
			return Plan{}, later
		}
		return Plan{Op: wire.Exists{DB: op.DB, Names: []string{op.Key}}, Format: func(res any, err error) Reply {
			if err != nil {
				return xreply.Error(err)
			}
			if n, _ := res.(int64); n > 0 {
				return ErrorReply(state.ErrBusyKey.Error())
			}
			return later
		}}, nil
	}
	op.TTLMs = ttl
	op.Payload = args[3]
	if s.router.Spread() || s.router.ClusterMode() {
		// The payload's dead-letter streams must live with the key, as
		// XGROUP CONFIG's DEADLETTER must.
		if dlqs := state.DumpDeadLetterKeys(op.Payload); len(dlqs) > 0 {
			keys := [][]byte{args[1]}
			for _, k := range dlqs {
				keys = append(keys, []byte(k))
			}
			if rt := s.router.Route(keys, true); rt.Kind == router.Refuse && rt.Reply == router.ErrCrossSlot {
				return Plan{}, rt.Reply
			}
		}
	}
	db, key := op.DB, op.Key
	return Plan{Op: op, Format: func(res any, err error) Reply {
		if err != nil {
			return xreply.Error(err)
		}
		if idle >= 0 {
			s.access.set(db, []string{key}, time.Now().UnixMilli()-idle*1000)
		}
		return OK
	}}, nil
}
