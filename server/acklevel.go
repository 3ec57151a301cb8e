package server

import (
	"time"

	"streamd/replication/wire"
)

// AckLevelOf returns the ack level of a stream-default-acklevel value
// (config keeps it as text; "" and anything but "leader" is quorum).
func AckLevelOf(v string) wire.AckLevel {
	if l, ok := wire.ParseAckLevel(v); ok {
		return l
	}
	return wire.AckQuorum
}

// defaultAckLevel is this node's stream-default-acklevel (XINFO STREAM
// shows it for a stream without its own ACKLEVEL). A plan built without a
// server (tests) gets the directive's default.
func (s *Server) defaultAckLevel() wire.AckLevel {
	if s == nil {
		return wire.AckQuorum
	}
	return AckLevelOf(s.config().StreamDefaultAckLevel)
}

// leaderAcked is a pending write that may have been answered at ACKLEVEL
// LEADER (*replication.Pending).
type leaderAcked interface {
	LeaderAcked() (applied <-chan struct{}, ok bool)
	Applied() (any, error)
}

// settleLate does for an XADD answered at ACKLEVEL LEADER what settleWrite
// and afterWrite do for others, once its entry has been applied: WATCH,
// wake-ups of blocked readers, tracking invalidation, keyspace access.
// If the entry was lost (the leader lost its leadership before a majority
// had it), there is nothing to signal.
func (s *Server) settleLate(op wire.Command, la leaderAcked, applied <-chan struct{}) {
	<-applied
	res, err := la.Applied()
	if err != nil {
		return
	}
	e := wire.EffectsOf(op, res, err)
	h := s.hub()
	h.writeMu.RLock()
	s.markDirty(e)
	s.access.touch(op, time.Now())
	s.access.applied(op, res, err, e)
	h.writeMu.RUnlock()
	s.notify(nil, e)
}
