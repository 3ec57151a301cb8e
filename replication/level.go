package replication

import (
	"fmt"

	"streamd/replication/state"
	"streamd/replication/wire"
)

// raiseLevel is run by a new leader once it has applied everything
// committed, before it serves: if the applied state's engine level is below
// the level this build runs (state.CurrentLevel), it appends a
// wire.EngineLevel entry and waits for it to apply, so every replica
// switches at that log index (a replica replaying the log from its start
// switches there too, and one restored from a snapshot taken later has the
// level in the snapshot). The entry goes straight to raft, not through the
// batcher, which is not running yet when a single node starts. It returns
// the entry's error (the caller retries as after a failed barrier) and
// whether quit was closed meanwhile.
func (s *Shard) raiseLevel(quit <-chan struct{}) (err error, stopped bool) {
	s.mu.RLock()
	level := s.ks.Level()
	s.mu.RUnlock()
	if level >= state.CurrentLevel || s.keepLevel {
		return nil, false
	}
	// No time: the FSM clamps 0 to the last write's time, so the entry
	// moves no clock (and reads none).
	e := wire.Entry{NowMs: 0, Cmds: []wire.Command{wire.EngineLevel{Level: state.CurrentLevel}}}
	f := s.raft.Apply(e.Append(nil), s.quorumTimeout)
	if err, stopped = awaitFuture(f, quit); err != nil || stopped {
		return err, stopped
	}
	if out, ok := f.Response().([]wire.Outcome); !ok || len(out) != 1 || out[0].Err != nil {
		return fmt.Errorf("engine level %d: applied as %v", state.CurrentLevel, f.Response()), false
	}
	s.opts.Logger.Info("raised the engine level: stream nodes now split at stream-node-max-bytes too",
		"from", level, "to", state.CurrentLevel, "index", f.Index())
	return nil, false
}
