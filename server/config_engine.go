package server

import (
	"streamd/config"
	"streamd/replication/wire"
)

// The settings that change what the state machine's Apply does
// (stream-node-max-entries, stream-node-max-bytes) live in the replicated
// state: CONFIG SET proposes them through every shard's log, so they
// survive restarts and reach every replica. The config file, flags and
// STREAMD_* variables only say what an operator asked for at start-up:
// engineFromConfig proposes those values when they differ from the
// defaults and from what the state holds, and CONFIG GET/REWRITE report
// what the state holds.

// engineConfig overwrites cfg's replicated settings with the values shard
// 0's state holds on this node.
func (s *Server) engineConfig(cfg *config.Config) {
	sh := s.node.Shard(0)
	if sh == nil { // a server built without a shard (unit tests)
		return
	}
	cfg.StreamNodeMaxEntries = sh.NodeMaxEntries()
	cfg.StreamNodeMaxBytes = int(sh.NodeMaxBytes())
	d, m := sh.IDMPDefaults()
	cfg.StreamIDMPDuration, cfg.StreamIDMPMaxSize = int(d), int(m)
}

// engineFromConfig proposes to shard i (led here) the replicated settings
// the configuration sets to something other than the default and than the
// state holds. A single node does it once at start-up; a cluster member
// each time it gains a shard's leadership (so members should be started
// with the same values, or the settings changed with CONFIG SET).
func (s *Server) engineFromConfig(i int) {
	if s.node.Shard(i) == nil {
		return
	}
	cfg, def := s.config(), config.Default()
	held := cfg
	s.engineConfig(&held)
	for _, p := range config.Directives() {
		if !p.Replicated() {
			continue
		}
		want := p.Get(&cfg)
		if want == p.Get(&def) || want == p.Get(&held) {
			continue
		}
		if _, err := s.node.Shard(i).Propose(wire.ConfigSet{Name: p.Name(), Value: want}); err != nil {
			s.log.Warn("could not apply a configured setting to the shard", "shard", i, "setting", p.Name(),
				"value", want, "err", err)
		}
	}
}
