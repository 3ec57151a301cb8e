package replication

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// leadership follows raft's leadership notifications for a shard. A
// receiver goroutine drains raft's NotifyCh at once (raft blocks on it) and
// clears ready on a loss; a worker goroutine runs a barrier after a gain,
// then sets ready and reports the change to Options.OnLeader, so reports
// are in order and never concurrent.
type leadership struct {
	mu         sync.Mutex
	raftLeader bool   // raft's last notification
	gen        uint64 // notifications received
	ready      atomic.Bool
	nudge      chan struct{} // capacity 1: a notification arrived
	quit       chan struct{}
	recvDone   chan struct{}
	runDone    chan struct{}
	running    bool // run was started
	haltOnce   sync.Once
	stopOnce   sync.Once
	// reported is the last value given to OnLeader (owned by run, then by
	// stop once run has returned).
	reported bool
}

// start begins draining raft's notification channel (before raft starts).
func (l *leadership) start(notify <-chan bool) {
	l.nudge = make(chan struct{}, 1)
	l.quit = make(chan struct{})
	l.recvDone = make(chan struct{})
	l.runDone = make(chan struct{})
	go func() {
		defer close(l.recvDone)
		for {
			select {
			case v := <-notify:
				l.mu.Lock()
				l.raftLeader = v
				l.gen++
				if !v {
					l.ready.Store(false)
				}
				l.mu.Unlock()
				select {
				case l.nudge <- struct{}{}:
				default:
				}
			case <-l.quit:
				return
			}
		}
	}()
}

// run is the worker goroutine (started once s.raft exists).
func (l *leadership) run(s *Shard) {
	l.mu.Lock()
	l.running = true
	l.mu.Unlock()
	defer close(l.runDone)
	var reportedGen uint64
	report := func(v bool) {
		l.reported = v
		if s.opts.OnLeader != nil {
			s.opts.OnLeader(v)
		}
	}
	for {
		select {
		case <-l.nudge:
		case <-l.quit:
			return
		}
		for {
			l.mu.Lock()
			cur, gen := l.raftLeader, l.gen
			l.mu.Unlock()
			if l.reported && (!cur || gen != reportedGen) {
				report(false)
			}
			if !cur || l.reported {
				break
			}
			// Gained: apply everything committed before serving, and
			// raise the engine level if the state is below this build's.
			err, quit := awaitFuture(s.raft.Barrier(0), l.quit)
			if quit {
				return
			}
			if err == nil {
				if err, quit = s.raiseLevel(l.quit); quit {
					return
				}
			}
			l.mu.Lock()
			ok := err == nil && l.gen == gen && l.raftLeader
			if ok {
				l.ready.Store(true)
			}
			l.mu.Unlock()
			if ok {
				reportedGen = gen
				report(true)
				break
			}
			if errors.Is(err, raft.ErrRaftShutdown) {
				break
			}
			// Lost meanwhile (a notification follows, or came) or a
			// failed log write: look again shortly.
			select {
			case <-l.quit:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// awaitFuture waits for f's error, or until quit is closed (quit reported
// true). Raft leaves a future queued in its buffered apply channel (with
// BatchApplyCh) unanswered forever when it shuts down, so nothing may wait
// on one without a way out.
func awaitFuture(f raft.Future, quit <-chan struct{}) (err error, stopped bool) {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err = <-done:
		return err, false
	case <-quit:
		return raft.ErrRaftShutdown, true
	}
}

// halt ends both goroutines and leaves ready and what was reported as
// they are: a single node going local (goLocal) stays the leader it was
// reported to be, while raft's shutdown notifies a loss nobody reads.
func (l *leadership) halt() {
	l.haltOnce.Do(func() {
		close(l.quit)
		<-l.recvDone
		l.mu.Lock()
		running := l.running
		l.mu.Unlock()
		if running {
			<-l.runDone
		}
	})
}

// stop ends both goroutines (after raft has shut down) and reports a loss
// to onLeader if a gain was the last thing reported.
func (l *leadership) stop(onLeader func(bool)) {
	l.stopOnce.Do(func() {
		l.halt()
		l.ready.Store(false)
		if l.reported {
			l.reported = false
			if onLeader != nil {
				onLeader(false)
			}
		}
	})
}

// IsLeader reports whether this node leads the shard and is ready to serve:
// it has applied everything committed before it was elected.
func (s *Shard) IsLeader() bool {
	return s.lead.ready.Load() && s.view().State() == raft.Leader
}

// LeaderUnreachable reports, on a follower of a clustered shard, that the
// leader it knows has not been heard from for longer than two election
// timeouts (raft's LastContact) — a follower normally drops such a leader
// after a heartbeat timeout and elects another; "" when the leader is in
// contact, this node leads, or no leader is known (see Leader).
func (s *Shard) LeaderUnreachable() string {
	if !s.clustered || s.raft.State() == raft.Leader {
		return ""
	}
	id, _ := s.Leader()
	if id == "" {
		return ""
	}
	last := s.raft.LastContact()
	if last.IsZero() {
		// Raft learns the leader in the AppendEntries it is handling and
		// records the contact when done: not yet out of contact.
		return ""
	}
	if since := time.Since(last); since > 2*s.electionTimeout {
		return fmt.Sprintf("no contact with its leader %s for %s", id, since.Round(time.Millisecond))
	}
	return ""
}

// Leader returns the shard leader's raft ID and address as this node knows
// them ("" when unknown).
func (s *Shard) Leader() (id, raftAddr string) {
	addr, sid := s.view().LeaderWithID()
	return string(sid), string(addr)
}

// Clustered reports whether the shard runs with a network transport
// (Options.Transport).
func (s *Shard) Clustered() bool { return s.clustered }

// NodeID returns this server's raft ID in the shard.
func (s *Shard) NodeID() string { return s.opts.NodeID }

// waitFuture waits for a raft future within the quorum timeout and maps its
// error for a membership or leadership change (what names it).
func (s *Shard) waitFuture(f raft.Future, what string) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	t := time.NewTimer(s.quorumTimeout)
	defer t.Stop()
	var err error
	select {
	case err = <-done:
	case <-t.C:
		return &OutcomeUnknownError{Cause: fmt.Errorf("%s not committed within %v", what, s.quorumTimeout)}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader):
		return s.notLeader()
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrShuttingDown
	case errors.Is(err, raft.ErrLeadershipLost):
		return &OutcomeUnknownError{Cause: fmt.Errorf("%s: %w", what, err)}
	}
	return fmt.Errorf("ERR %s failed: %v", what, err)
}

// AddVoter adds (or re-addresses) a voting member and waits until the
// configuration change is committed. Only the leader can (else
// *NotLeaderError).
func (s *Shard) AddVoter(id, raftAddr string) error {
	if s.raft.State() != raft.Leader {
		return s.notLeader()
	}
	f := s.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(raftAddr), 0, s.quorumTimeout)
	return s.waitFuture(f, "adding "+id)
}

// RemoveServer removes a member and waits until the configuration change is
// committed. Only the leader can (else *NotLeaderError); a leader removing
// itself steps down once the change is committed.
func (s *Shard) RemoveServer(id string) error {
	if s.raft.State() != raft.Leader {
		return s.notLeader()
	}
	return s.waitFuture(s.raft.RemoveServer(raft.ServerID(id), 0, s.quorumTimeout), "removing "+id)
}

// TransferLeadership hands leadership to member id ("" = the member raft
// finds most up to date) and waits until this node has stepped down. Only
// the leader can (else *NotLeaderError).
func (s *Shard) TransferLeadership(id string) error {
	if s.raft.State() != raft.Leader {
		return s.notLeader()
	}
	if id == s.opts.NodeID {
		return nil // already leads
	}
	s.transferring.Store(true)
	defer s.transferring.Store(false)
	if id == "" {
		return s.waitFuture(s.raft.LeadershipTransfer(), "leadership transfer")
	}
	members, err := s.Members()
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.ID == id {
			if !m.Voter {
				return fmt.Errorf("ERR member %s is not a voter", id)
			}
			f := s.raft.LeadershipTransferToServer(raft.ServerID(id), raft.ServerAddress(m.RaftAddr))
			return s.waitFuture(f, "leadership transfer to "+id)
		}
	}
	return fmt.Errorf("ERR no member %s in the shard's configuration", id)
}

// Transferring reports whether this node is handing the shard's leadership
// to another member (TransferLeadership is under way: RAFT TRANSFER, the
// leader balancer, a graceful shutdown). Writes proposed meanwhile fail
// with ErrTransferInProgress without being proposed.
func (s *Shard) Transferring() bool { return s.transferring.Load() }

// Members returns the shard's latest Raft configuration, sorted by ID.
func (s *Shard) Members() ([]Member, error) {
	f := s.view().GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("ERR raft configuration: %v", err)
	}
	servers := f.Configuration().Servers
	out := make([]Member, len(servers))
	for i, sv := range servers {
		out[i] = Member{ID: string(sv.ID), RaftAddr: string(sv.Address), Voter: sv.Suffrage == raft.Voter}
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// voters counts the voting members of the latest configuration.
func (s *Shard) voters() int {
	f := s.view().GetConfiguration()
	if f.Error() != nil {
		return 0
	}
	n := 0
	for _, sv := range f.Configuration().Servers {
		if sv.Suffrage == raft.Voter {
			n++
		}
	}
	return n
}

// ShardInfo is one shard's replication state as this node sees it (INFO,
// RAFT INFO, metrics).
type ShardInfo struct {
	// Role is "leader", "follower", "candidate" or "shutdown".
	Role string
	// Term is raft's current term.
	Term uint64
	// LeaderID and LeaderAddr name the leader ("" when unknown).
	LeaderID, LeaderAddr string
	// CommitIndex is the highest log index known committed; AppliedIndex
	// the highest applied (raft's count, which includes its no-op entries,
	// or the state machine's, whichever is ahead: raft updates its own
	// just after the state machine may have answered); LastLogIndex the
	// last in the local log.
	CommitIndex, AppliedIndex, LastLogIndex uint64
	// LastSnapshotIndex and LastSnapshotTerm describe the newest snapshot.
	LastSnapshotIndex, LastSnapshotTerm uint64
	// Voters is the number of voting members.
	Voters int
}

// Info returns the shard's replication state.
func (s *Shard) Info() ShardInfo {
	v := s.view()
	st := v.Stats()
	num := func(k string) uint64 {
		v, _ := strconv.ParseUint(st[k], 10, 64)
		return v
	}
	id, addr := s.Leader()
	return ShardInfo{
		Role:              strings.ToLower(v.State().String()),
		Term:              num("term"),
		LeaderID:          id,
		LeaderAddr:        addr,
		CommitIndex:       v.CommitIndex(),
		AppliedIndex:      max(v.AppliedIndex(), s.applied.Load()),
		LastLogIndex:      v.LastIndex(),
		LastSnapshotIndex: num("last_snapshot_index"),
		LastSnapshotTerm:  num("last_snapshot_term"),
		Voters:            s.voters(),
	}
}

// StateHash returns the SHA-256 of the keyspace's canonical snapshot bytes
// (equal states give equal sums) and the index of the last log entry whose
// effect that state holds, both taken under the read lock.
func (s *Shard) StateHash() (applied uint64, sum [32]byte) {
	h := sha256.New()
	s.mu.RLock()
	applied = s.applied.Load()
	err := s.ks.WriteSnapshot(h)
	s.mu.RUnlock()
	if err != nil {
		// sha256's Write never fails, so neither can the encoding.
		panic(fmt.Sprintf("replication: snapshot encoding failed: %v", err))
	}
	copy(sum[:], h.Sum(nil))
	return applied, sum
}
