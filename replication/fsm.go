package replication

import (
	"bufio"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"streamd/replication/state"
	"streamd/replication/wire"
)

// fsm adapts the Shard's keyspace to raft's (batching) FSM contract.
// ApplyBatch, Apply, Snapshot and Restore run on raft's FSM goroutine, one
// at a time (on a single node, once raft has handed the log over, the
// local sender applies instead, one batch at a time: local.go); they take
// the shard's write lock only to change the keyspace (Apply, Restore), and
// its read lock to capture it (Snapshot), so Queries run concurrently with
// everything but the apply itself.
type fsm struct {
	s *Shard
	// changes counts commands applied (EXEC counts its operations): the
	// base of Stats.ChangesSinceSave.
	changes atomic.Int64
	// preloaded is the keyspace Open already decoded while validating the
	// newest snapshot; Restore takes it instead of decoding the same file a
	// second time (raft restores exactly that snapshot at start-up, after
	// checking its CRC). Only touched before raft starts and by Restore.
	preloaded *state.Keyspace

	// Snapshots by log size (snapshot_files.go): logBytes counts the bytes
	// of the entries applied, snapBase is logBytes when the last snapshot
	// was captured; sizeSnap is set while a snapshot it asked for runs,
	// sizeSnapAfter (unix ns) holds the next one back after a failure.
	logBytes, snapBase, sizeSnapAfter atomic.Int64
	sizeSnap                          atomic.Bool
	// raftSet is set once Shard.raft is assigned (entries replayed while
	// raft.NewRaft runs must not trigger a snapshot).
	raftSet atomic.Bool
}

// Apply applies one log entry (raft calls ApplyBatch instead; kept for the
// plain FSM interface).
func (f *fsm) Apply(l *raft.Log) any { return f.ApplyBatch([]*raft.Log{l})[0] }

// ApplyBatch decodes each command entry and applies its commands in order
// with the entry's time, returning one []wire.Outcome per log. An entry that
// does not decode is corruption of the committed log: the state machine
// cannot go on without diverging, so it panics naming the index (DESIGN §2;
// Open validates the log first so that a damaged file is refused instead).
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	entries := make([]wire.Entry, len(logs))
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		if e, ok := f.s.proposed.take(l.Data); ok {
			entries[i] = e // this node's proposal (proposed.go)
			continue
		}
		e, err := wire.DecodeEntry(l.Data)
		if err != nil {
			panic(fmt.Sprintf("replication: committed log entry %d does not decode: %v", l.Index, err))
		}
		entries[i] = e
	}
	out := f.applyEntries(logs, entries)
	f.s.finishApplied(logs, out)
	return out
}

// applyEntries applies decoded entries (entries[i] is logs[i]'s; ignored
// for logs that are not commands) in order, returning one []wire.Outcome
// per command entry: raft's FSM (ApplyBatch) and a single node's local
// sender (sendLocal) both apply this way.
func (f *fsm) applyEntries(logs []*raft.Log, entries []wire.Entry) []any {
	out := make([]any, len(logs))
	var n int64
	aclChanged := false
	f.s.mu.Lock()
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		e := entries[i]
		res := make([]wire.Outcome, len(e.Cmds))
		for j, cmd := range e.Cmds {
			r, err := f.s.ks.Apply(cmd, e.NowMs)
			res[j] = wire.Outcome{Result: r, Err: err}
			n += commandChanges(cmd)
			aclChanged = aclChanged || wire.IsACL(cmd)
			if (err == nil && state.SetsAckLeader(cmd)) || f.s.ks.TakeRestoredAckLeader() {
				f.s.acks.leaderSeen.Store(true)
			}
		}
		out[i] = res
	}
	if aclChanged {
		f.s.aclVersion.Add(1) // before noteApplied: see aclChanged
	}
	if len(logs) > 0 {
		f.s.noteApplied(logs[len(logs)-1].Index)
	}
	f.s.mu.Unlock()
	f.changes.Add(n)
	var b int64
	for _, l := range logs {
		b += int64(len(l.Data))
	}
	f.snapshotBySize(f.logBytes.Add(b))
	if aclChanged {
		f.s.aclChanged()
	}
	return out
}

// commandChanges is how many changes a command counts for in
// ChangesSinceSave: one, or EXEC's number of operations; none for the
// engine level switch, which no client wrote.
func commandChanges(cmd wire.Command) int64 {
	switch x := cmd.(type) {
	case wire.Exec:
		return int64(len(x.Ops))
	case wire.EngineLevel:
		return 0
	}
	return 1
}

// Snapshot captures the keyspace with Keyspace.Clone under the read lock
// (raft runs no Apply meanwhile; Queries may go on), so that Persist can
// serialise and write it while later entries are applied.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.s.mu.RLock()
	ks := f.s.ks.Clone()
	f.s.mu.RUnlock()
	f.snapBase.Store(f.logBytes.Load())
	return &fsmSnapshot{f: f, ks: ks, changes: f.changes.Load()}, nil
}

// Restore replaces the keyspace with the snapshot read from rc (on start-up
// and, later, when a leader installs one).
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	// The snapshot being restored is the newest in the store (at start-up
	// raft restores the newest; a follower restores the one it was just
	// sent), so its index is what the restored state holds.
	var meta raft.SnapshotMeta
	if metas, err := f.s.snaps.List(); err == nil && len(metas) > 0 {
		meta = *metas[0]
	}
	index := meta.Index
	ks := f.preloaded
	f.preloaded = nil
	if ks == nil {
		r, done := loadingSnapshot(f.s.opts.Logger, meta.ID, meta.Size, rc, f.s.progressEvery)
		var err error
		ks, err = state.ReadSnapshot(r)
		done()
		if err != nil {
			return fmt.Errorf("restore snapshot: %w", err)
		}
	}
	f.s.mu.Lock()
	ks.SetCounters(f.s.ks.Counters())
	f.s.ks = ks
	if ks.AnyAckLeader() {
		f.s.acks.leaderSeen.Store(true)
	}
	f.s.aclVersion.Add(1) // before noteApplied: see aclChanged
	f.s.noteApplied(index)
	f.s.mu.Unlock()
	f.s.aclChanged()
	return nil
}

// fsmSnapshot is a captured keyspace waiting to be written.
type fsmSnapshot struct {
	f       *fsm
	ks      *state.Keyspace
	changes int64 // f.changes at capture: what this snapshot covers
}

// Persist serialises the captured keyspace into raft's sink and records
// the outcome for Stats (LASTSAVE, INFO persistence).
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	st := &s.f.s.stats
	st.saving.Store(true)
	defer st.saving.Store(false)
	w := bufio.NewWriterSize(sink, 1<<16)
	err := s.ks.WriteSnapshot(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = sink.Close()
	} else {
		sink.Cancel()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.lastSaveOK = err == nil
	st.lastSaveErr = err
	if err == nil {
		st.lastSaveUnix = time.Now().Unix()
		if s.changes > st.savedChanges {
			st.savedChanges = s.changes
		}
		st.saves++
	}
	return err
}

// Release drops the captured keyspace.
func (s *fsmSnapshot) Release() { s.ks = nil }
