package server

import (
	"strconv"

	"streamd/replication/wire"
	"streamd/server/xreply"
)

// OBJECT ENCODING / FREQ / IDLETIME / REFCOUNT / HELP. Every value is a
// stream ("stream" encoding, one reference); the idle time is the serving
// node's (access.go); FREQ needs an LFU maxmemory-policy, which streamd,
// never evicting (maxmemory-policy noeviction), does not have.
func (s *Server) objectCommand() *Command {
	sub := func(name string, summary, since string, p func(*Client, [][]byte) (Plan, Reply)) *Command {
		return &Command{Name: "object|" + name, Arity: 3, Flags: []string{"readonly"},
			FirstKey: 2, LastKey: 2, Step: 1, ACL: []string{"@keyspace", "@read", "@slow"},
			Summary: summary, Since: since, Group: "generic", Planner: p}
	}
	return &Command{
		Name: "object", Arity: -2, ACL: []string{"@slow"},
		Summary: "A container for object introspection commands", Since: "2.2.3", Group: "generic",
		Subcommands: []*Command{
			sub("encoding", "Inspect the internal encoding of a Redis object", "2.2.3",
				existing(func(*Client, [][]byte) Reply { return BulkString("stream") })),
			sub("refcount", "Get the number of references to the value of the key", "2.2.3",
				existing(func(*Client, [][]byte) Reply { return Int(1) })),
			sub("idletime", "Get the time since a Redis object was last accessed", "2.2.3",
				existing(func(c *Client, args [][]byte) Reply { return Int(s.idleSeconds(c.DB(), string(args[2]))) })),
			sub("freq", "Get the logarithmic access frequency counter of a Redis object", "4.0.0",
				existing(func(*Client, [][]byte) Reply { return errNoLFU })),
			{Name: "object|help", Arity: 2, Flags: []string{"loading", "stale"}, ACL: []string{"@keyspace", "@slow"},
				Summary: "Show helpful text about the different subcommands", Since: "6.2.0", Group: "generic",
				Handler: func(*Client, [][]byte) Reply { return helpReply("OBJECT", objectHelp...) }},
		},
	}
}

// errNoLFU is OBJECT FREQ's answer without an LFU maxmemory-policy.
const errNoLFU = ErrorReply("ERR An LFU maxmemory policy is not selected, access frequency not tracked. " +
	"Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")

// existing plans an OBJECT subcommand: a null for a missing key (looked up
// without touching it), else answer's reply.
func existing(answer func(*Client, [][]byte) Reply) func(*Client, [][]byte) (Plan, Reply) {
	return func(c *Client, args [][]byte) (Plan, Reply) {
		return Plan{Op: wire.Type{Base: keyBase(c, args[2])}, Format: func(res any, err error) Reply {
			if err != nil {
				return xreply.Error(err)
			}
			if t, _ := res.(string); t == "none" {
				return Null{}
			}
			return answer(c, args)
		}}, nil
	}
}

// objectHelp is OBJECT HELP's text (Redis 7.0's objectCommand).
var objectHelp = []string{
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
}

// memoryUsageDefaultSamples is OBJ_COMPUTE_SIZE_DEF_SAMPLES.
const memoryUsageDefaultSamples = 5

// cmdMEMORYUSAGE is MEMORY USAGE key [SAMPLES n]: the key's estimated size
// in bytes (state's MemoryUsage), or null.
func cmdMEMORYUSAGE(c *Client, args [][]byte) (Plan, Reply) {
	samples := int64(memoryUsageDefaultSamples)
	for j := 3; j < len(args); j++ {
		if !isOpt(args[j], "SAMPLES") || j+1 >= len(args) {
			return Plan{}, errSyntax
		}
		n, err := strconv.ParseInt(string(args[j+1]), 10, 64)
		if err != nil {
			return Plan{}, errNotInteger
		}
		if n < 0 {
			return Plan{}, errSyntax
		}
		samples = n // 0: every node
		j++
	}
	return Plan{Op: wire.MemoryUsage{Base: keyBase(c, args[2]), Samples: samples}, Format: func(res any, err error) Reply {
		if err != nil {
			return xreply.Error(err)
		}
		n, ok := res.(int64)
		if !ok {
			return Null{}
		}
		return Int(n)
	}}, nil
}
