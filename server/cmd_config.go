package server

import (
	"errors"
	"strings"
	"syscall"

	"streamd/config"
	"streamd/internal/glob"
	"streamd/replication"
)

// configCommand is CONFIG GET / SET / RESETSTAT / REWRITE / HELP.
func (s *Server) configCommand() *Command {
	sub := func(name string, arity int, flags []string, summary, since string, h func(*Client, [][]byte) Reply) *Command {
		// Redis adds @admin and @dangerous to every "admin" command.
		acl := []string{"@slow"}
		if len(flags) > 0 && flags[0] == "admin" {
			acl = []string{"@admin", "@slow", "@dangerous"}
		}
		return &Command{Name: "config|" + name, Arity: arity, Flags: flags,
			ACL: acl, Summary: summary, Since: since, Group: "server", Handler: h}
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
	for _, p := range config.Directives() {
		for _, pat := range args[2:] {
			if glob.MatchFold(string(pat), p.Name()) {
				out = append(out, KV{K: BulkString(p.Name()), V: BulkString(p.Get(&cfg))})
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
		p     *config.Directive
		value string
	}
	var changes []change
	seen := map[string]bool{}
	for i := 2; i < len(args); i += 2 {
		p := config.Lookup(string(args[i]))
		if p == nil {
			return ErrorReply("ERR Unknown option or number of arguments for CONFIG SET - '" + string(args[i]) + "'")
		}
		if p.Immutable() {
			return configSetError(p.Name(), "can't set immutable config")
		}
		if seen[p.Name()] {
			return configSetError(p.Name(), "duplicate parameter")
		}
		seen[p.Name()] = true
		changes = append(changes, change{p, string(args[i+1])})
	}
	// Validate everything on a copy before applying anything.
	s.cfgMu.Lock()
	next := s.cfg
	for _, ch := range changes {
		if err := ch.p.Set(&next, ch.value); err != nil {
			s.cfgMu.Unlock()
			return configSetError(ch.p.Name(), err.Error())
		}
	}
	s.cfgMu.Unlock()
	// A larger maxclients needs the open-file limit raised first, as
	// Redis's updateMaxclients does; refused if it cannot be.
	if seen["maxclients"] {
		if err := s.setMaxClients(next.MaxClients); err != nil {
			return configSetError("maxclients", err.Error())
		}
	}
	// Propose and reconfigure without holding cfgMu: a replicated setting
	// may be forwarded to another node, which may at that moment be
	// forwarding its own CONFIG SET here.
	for _, ch := range changes {
		if !ch.p.Replicated() {
			continue
		}
		if err := s.proposeConfig(c, ch.p.Name(), ch.p.Get(&next)); err != nil {
			return configSetError(ch.p.Name(), err.Error())
		}
	}
	for _, ch := range changes {
		if ch.p.Name() == "requirepass" {
			// The default user's password (Redis's
			// ACLUpdateDefaultUserPassword), through shard 0's log.
			if r := s.setRequirePass(c, ch.p.Get(&next)); r != "" {
				return configSetError(ch.p.Name(), string(r))
			}
		}
	}
	for _, ch := range changes {
		apply := applyConfig[ch.p.Name()]
		if apply == nil {
			continue
		}
		for i := range s.node.NumShards() {
			if err := apply(s.node.Shard(i), &next); err != nil {
				return configSetError(ch.p.Name(), err.Error())
			}
		}
	}
	names := make([]string, len(changes))
	for i, ch := range changes {
		names[i] = ch.p.Name()
	}
	if name, reason, failed := s.applyTLS(&next, names); failed {
		return configSetError(name, reason)
	}
	// Store only the parameters this command set (another CONFIG SET may
	// have changed others meanwhile); they were validated above.
	s.cfgMu.Lock()
	for _, ch := range changes {
		ch.p.Set(&s.cfg, ch.value)
	}
	s.stats.LatencyTracking.Store(s.cfg.LatencyTracking)
	s.cfgMu.Unlock()
	if seen["maxmemory"] {
		s.setMaxMemory(s.config().MaxMemory)
	}
	s.reloadSlowlog()
	s.latency.reload(s.config().LatencyMonitorThreshold)
	s.acl.log.SetMaxLen(s.config().ACLLogMaxLen)
	return OK
}

// applyConfig holds, per directive, what a CONFIG SET of it does besides
// storing the value (which the code reading s.config() sees at once): it
// runs once the values are checked, for each of this node's shards, outside
// the log (a durability policy such as appendfsync is each node's own
// choice).
var applyConfig = map[string]func(sh *replication.Shard, cfg *config.Config) error{
	"loglevel": func(_ *replication.Shard, c *config.Config) error {
		// Not a shard setting: this is when the live level of the
		// process's logger may change.
		if c.LogLevelVar != nil {
			c.LogLevelVar.Set(config.SlogLevel(c.LogLevel))
		}
		return nil
	},
	"stream-default-acklevel": func(sh *replication.Shard, c *config.Config) error {
		sh.SetDefaultAckLevel(AckLevelOf(c.StreamDefaultAckLevel))
		return nil
	},
	"appendfsync": func(sh *replication.Shard, c *config.Config) error {
		p, err := FsyncPolicy(c.AppendFsync)
		if err != nil {
			return err
		}
		return sh.SetFsync(p)
	},
}

// FsyncPolicy returns the shards' fsync policy for an appendfsync value
// (config keeps it as text; "" is always).
func FsyncPolicy(appendfsync string) (replication.FsyncPolicy, error) {
	switch strings.ToLower(appendfsync) {
	case "always", "":
		return replication.FsyncAlways, nil
	case "everysec":
		return replication.FsyncEverySec, nil
	}
	return 0, errors.New("argument(s) must be one of the following: always, everysec")
}

func configSetError(name, reason string) Reply {
	return ErrorReply("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + reason)
}

// cmdCONFIGRESETSTAT zeroes INFO's counters (commandstats, errorstats,
// total_* figures), as Redis's resetServerStats.
func (s *Server) cmdCONFIGRESETSTAT(c *Client, args [][]byte) Reply {
	s.stats.Reset()
	s.resetKeyspaceCounts()
	return OK
}

// cmdCONFIGREWRITE is CONFIG REWRITE: config.RewriteFile on the file the
// server was started with, for the current values (the replicated settings
// as the state holds them).
func (s *Server) cmdCONFIGREWRITE(c *Client, args [][]byte) Reply {
	cfg := s.config()
	s.engineConfig(&cfg)
	if cfg.ConfigFile == "" {
		return ErrorReply("ERR The server is running without a config file")
	}
	if err := config.RewriteFile(cfg.ConfigFile, cfg); err != nil {
		s.log.Warn("CONFIG REWRITE failed", "file", cfg.ConfigFile, "err", err)
		return ErrorReply("ERR Rewriting config file: " + strerror(err))
	}
	s.log.Info("CONFIG REWRITE executed with success", "file", cfg.ConfigFile)
	return OK
}

// strerror is err as C's strerror would say it when it is an errno
// ("Permission denied"), else err's text.
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg := errno.Error()
		if msg != "" {
			return strings.ToUpper(msg[:1]) + msg[1:]
		}
	}
	return err.Error()
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
