package server

import (
	"streamd/internal/glob"
)

// configCommand is CONFIG GET / SET / RESETSTAT / REWRITE / HELP.
func (s *Server) configCommand() *Command {
	sub := func(name string, arity int, flags []string, summary, since string, h func(*Client, [][]byte) Reply) *Command {
		return &Command{Name: "config|" + name, Arity: arity, Flags: flags,
			ACL: []string{"@admin", "@slow", "@dangerous"}, Summary: summary, Since: since, Group: "server", Handler: h}
	}
	admin := []string{"admin", "noscript", "loading", "stale"}
	return &Command{
		Name: "config", Arity: -2, ACL: []string{"@slow"},
		Summary: "A container for server configuration commands.", Since: "2.0.0", Group: "server",
		Subcommands: []*Command{
			sub("get", -3, admin, "Returns the effective values of configuration parameters.", "2.0.0", s.cmdCONFIGGET),
			sub("set", -4, append(admin, "may_replicate"), "Sets configuration parameters in-flight.", "2.0.0", s.cmdCONFIGSET),
			sub("resetstat", 2, admin, "Resets the server's statistics.", "2.0.0", s.cmdCONFIGRESETSTAT),
			sub("rewrite", 2, admin, "Persists the effective configuration to file.", "2.8.0", s.cmdCONFIGREWRITE),
			sub("help", 2, []string{"loading", "stale"}, "Returns helpful text about the different subcommands.", "5.0.0", cmdCONFIGHELP),
		},
	}
}

// cmdCONFIGGET is CONFIG GET pattern [pattern ...]: every matching
// parameter once (a RESP3 map), names matched case-insensitively as Redis.
func (s *Server) cmdCONFIGGET(c *Client, args [][]byte) Reply {
	cfg := s.config()
	s.engineConfig(&cfg)
	out := Map{}
	for _, p := range configParams {
		for _, pat := range args[2:] {
			if glob.MatchFold(string(pat), p.name) {
				out = append(out, KV{K: BulkString(p.name), V: BulkString(p.get(&cfg))})
				break
			}
		}
	}
	return out
}

// cmdCONFIGSET is CONFIG SET name value [name value ...]: all or nothing,
// with Redis's error texts. stream-node-max-entries/bytes change what the
// state machine does, so they go through the log of every shard as a
// wire.ConfigSet (fanout.go); appendfsync reconfigures this node's shards
// (Shard.SetFsync).
func (s *Server) cmdCONFIGSET(c *Client, args [][]byte) Reply {
	if len(args)%2 != 0 {
		return ErrorReply("ERR wrong number of arguments for 'config|set' command")
	}
	if c.onShard < 0 {
		s.configSetMu.Lock()
		defer s.configSetMu.Unlock()
	}
	type change struct {
		p     *configParam
		value string
	}
	var changes []change
	seen := map[string]bool{}
	for i := 2; i < len(args); i += 2 {
		p := lookupConfigParam(string(args[i]))
		if p == nil {
			return ErrorReply("ERR Unknown option or number of arguments for CONFIG SET - '" + string(args[i]) + "'")
		}
		if p.immutable {
			return configSetError(p.name, "can't set immutable config")
		}
		if seen[p.name] {
			return configSetError(p.name, "duplicate parameter")
		}
		seen[p.name] = true
		changes = append(changes, change{p, string(args[i+1])})
	}
	// Validate everything on a copy before applying anything.
	s.cfgMu.Lock()
	next := s.cfg
	for _, ch := range changes {
		if err := ch.p.set(&next, ch.value); err != nil {
			s.cfgMu.Unlock()
			return configSetError(ch.p.name, err.Error())
		}
	}
	s.cfgMu.Unlock()
	// Propose and reconfigure without holding cfgMu: a replicated setting
	// may be forwarded to another node, which may at that moment be
	// forwarding its own CONFIG SET here.
	for _, ch := range changes {
		if !ch.p.engine {
			continue
		}
		if err := s.proposeConfig(c, ch.p.name, ch.p.get(&next)); err != nil {
			return configSetError(ch.p.name, err.Error())
		}
	}
	for _, ch := range changes {
		if ch.p.local == nil {
			continue
		}
		for i := range s.node.NumShards() {
			if err := ch.p.local(s.node.Shard(i), &next); err != nil {
				return configSetError(ch.p.name, err.Error())
			}
		}
	}
	// Store only the parameters this command set (another CONFIG SET may
	// have changed others meanwhile); they were validated above.
	s.cfgMu.Lock()
	for _, ch := range changes {
		ch.p.set(&s.cfg, ch.value)
	}
	s.cfgMu.Unlock()
	s.reloadSlowlog()
	return OK
}

func configSetError(name, reason string) Reply {
	return ErrorReply("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + reason)
}

// cmdCONFIGRESETSTAT zeroes INFO's counters (commandstats, errorstats,
// total_* figures), as Redis's resetServerStats.
func (s *Server) cmdCONFIGRESETSTAT(c *Client, args [][]byte) Reply {
	s.stats.reset()
	return OK
}

// cmdCONFIGHELP lists the CONFIG subcommands streamd implements.
func cmdCONFIGHELP(c *Client, args [][]byte) Reply {
	return helpReply("CONFIG",
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
	)
}
