package wire

// EngineLevel raises the state machine's engine level (see
// replication/state/level.go): from the entry that carries it on, every
// replica applies the behaviour of that level (level 1: stream nodes also
// split at stream-node-max-bytes). The leader proposes it once when the
// applied state is below the level its build runs; a lower level than the
// state's changes nothing. Result: int64, the level in force after it.
type EngineLevel struct {
	Level int64
}

func (EngineLevel) command() {}

// Keys returns nil: the level is the whole state's.
func (EngineLevel) Keys() []string { return nil }

// Database returns 0.
func (EngineLevel) Database() int { return 0 }

func (EngineLevel) effects(_ any, e Effects) Effects { return e }
