package replication

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/hashicorp/raft"
)

// A cluster shard that starts without a configuration (its node was started
// to be added by --join) is "never a member" until the first log entry or
// snapshot reaches it. Such a shard may hold raft's term (and a vote) but no
// entry: raft writes its term at every start, and a leader's first contact
// raises it before any entry arrives. That state is safe to start again as
// it is — the node acknowledged nothing — but on disk it looks like a log
// that was lost (an empty log beside raft state), which the start-up checks
// refuse. The JOINING file tells the two apart: it is written (and fsynced)
// before raft starts on a shard with no state that is not bootstrapped, and
// removed once the shard durably holds an entry or a snapshot. An empty log
// with the file present is a node that never became a member; without it,
// the log was lost and the shard is refused as before.

// joiningFile is the marker's name in a shard's data directory.
const joiningFile = "JOINING"

const joiningText = "# streamd: this node was started to join a cluster and holds no log entry yet; it is removed once it does\n"

// joiningMarked reports whether dir holds the JOINING file.
func joiningMarked(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, joiningFile))
	return err == nil
}

// markJoining writes dir's JOINING file durably (file and directory
// fsynced).
func markJoining(dir string) error {
	return writeFileAtomic(filepath.Join(dir, joiningFile), joiningText)
}

// unmarkJoining removes dir's JOINING file (a missing file is no error).
func unmarkJoining(dir string) error {
	if err := os.Remove(filepath.Join(dir, joiningFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory (a file created, renamed or removed in it).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// holdsNothing reports whether the log and the snapshot store are empty.
func holdsNothing(logs raft.LogStore, snaps raft.SnapshotStore) (bool, error) {
	last, err := logs.LastIndex()
	if err != nil {
		return false, err
	}
	if last > 0 {
		return false, nil
	}
	list, err := snaps.List()
	if err != nil {
		return false, err
	}
	return len(list) == 0, nil
}

// prepareJoin settles the JOINING marker of a clustered shard with a data
// directory before raft starts, and reports whether the shard waits to be
// added (its marker stays until it holds an entry) and whether raft state
// exists after it. exists is raft.HasExistingState's answer.
//
//   - The shard holds entries or a snapshot: a stale marker is removed.
//   - It never became a member (marker, nothing held) and bootstrap was
//     asked for: the term and vote left by the attempt to join are cleared,
//     so the shard bootstraps like a new one.
//   - It holds nothing and is not bootstrapped: it waits to be added; the
//     marker is kept, or written when no raft state exists at all.
func (s *Shard) prepareJoin(logs raft.LogStore, stable raft.StableStore, snaps raft.SnapshotStore, exists bool) (joining, stillExists bool, err error) {
	dir := s.opts.Dir
	empty, err := holdsNothing(logs, snaps)
	if err != nil {
		return false, exists, err
	}
	if !empty {
		if joiningMarked(dir) {
			if err := unmarkJoining(dir); err != nil {
				return false, exists, fmt.Errorf("%s: %w", filepath.Join(dir, joiningFile), err)
			}
		}
		return false, exists, nil
	}
	if s.opts.Bootstrap != nil {
		if exists && joiningMarked(dir) {
			// Only a term and a vote from an attempt to join: forget them.
			for _, k := range [][]byte{keyCurrentTerm, keyLastVoteTerm} {
				if err := stable.SetUint64(k, 0); err != nil {
					return false, exists, err
				}
			}
			if err := stable.Set(keyLastVoteCand, nil); err != nil {
				return false, exists, err
			}
			s.opts.Logger.Info("this node never became a member of the cluster it tried to join: bootstrapping a new one")
			exists = false
		}
		if !exists {
			if err := unmarkJoining(dir); err != nil {
				return false, exists, err
			}
		}
		return false, exists, nil
	}
	if !joiningMarked(dir) {
		if exists {
			// Raft state beside an empty log and no marker: not a node
			// being added (the start-up checks judge it); never mark it.
			return false, exists, nil
		}
		if err := markJoining(dir); err != nil {
			return false, exists, fmt.Errorf("%s: %w", filepath.Join(dir, joiningFile), err)
		}
	}
	return true, exists, nil
}

// keyLastVoteTerm and keyLastVoteCand are the stable-store keys raft keeps
// its vote under.
var (
	keyLastVoteTerm = []byte("LastVoteTerm")
	keyLastVoteCand = []byte("LastVoteCand")
)

// checkJoined removes the JOINING marker once the shard durably holds an
// entry or a snapshot (called by syncLoop, which owns the store's Sync
// while the shard is open).
func (s *Shard) checkJoined() {
	if !s.joining.Load() {
		return
	}
	if empty, err := holdsNothing(s.logs, s.snaps); err != nil || empty {
		return
	}
	if err := s.store.Sync(); err != nil {
		return
	}
	if err := unmarkJoining(s.opts.Dir); err != nil {
		s.opts.Logger.Warn("cannot remove the JOINING marker", "dir", s.opts.Dir, "err", err)
		return
	}
	s.joining.Store(false)
}

// WasMember reports whether this node's data directory made it a member
// of its cluster when it opened: every shard held raft state whose
// configuration lists this node. Such a node starts as that member;
// --join, --bootstrap and --peers matter only for a node that never was
// one (a node being added, or one started from an empty directory).
func (n *Node) WasMember() bool { return n.wasMember }

// listedEverywhere reports whether every shard opened on existing raft
// state whose configuration lists this node.
func (n *Node) listedEverywhere() bool {
	for _, s := range n.shards {
		if !s.existed {
			return false
		}
		ms, err := s.Members()
		if err != nil || !slices.ContainsFunc(ms, func(m Member) bool { return m.ID == n.opts.NodeID }) {
			return false
		}
	}
	return true
}
