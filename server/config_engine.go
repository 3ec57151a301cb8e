package server

import (
	"streamd/config"
	"streamd/replication/wire"
	"time"
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
// with the same values, or the settings changed with CONFIG SET). It
// reports whether every proposal went through (see untilApplied).
func (s *Server) engineFromConfig(i int) (ok bool) {
	if s.node.Shard(i) == nil {
		return true
	}
	ok = true
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
			ok = false
		}
	}
	return ok
}

// untilApplied runs f — a proposal of this node's configuration to shard
// i, made when the node became its leader — again until it succeeds, the
// node no longer leads the shard, or the server closes: the first try can
// fail while the cluster's other members are still starting (no quorum
// within the timeout), and nothing else would try again.
func (s *Server) untilApplied(i int, f func() bool) {
	wait := 100 * time.Millisecond
	for !f() {
		if sh := s.node.Shard(i); sh == nil || !sh.IsLeader() {
			return
		}
		select {
		case <-s.done:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}
